/** `attachTo`, the buyer's former name, stays for this beta: the same function as `attachToClient`. */
import { createPublicClient, http } from 'viem'
import { baseSepolia } from 'viem/chains'
import { expect, it } from 'vitest'
import {
  attachTo,
  attachToClient,
  createVaultClient,
  VaultValidationError,
} from '../../src/index.js'

it('attachTo is attachToClient, on the root and on the client', () => {
  expect(attachTo).toBe(attachToClient)
  // Offline: nothing listens on port 9, and a refused client is refused before any read.
  const vault = createVaultClient({
    publicClient: createPublicClient({ chain: baseSepolia, transport: http('http://127.0.0.1:9') }),
    chain: 'base-sepolia',
  })
  for (const attach of [vault.attachTo, vault.attachToClient]) {
    expect(() => attach({} as never)).toThrow(VaultValidationError)
    expect(() => attach({} as never)).toThrow(/client must be an x402Client/)
  }
})
