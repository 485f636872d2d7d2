/**
 * `depositIdle` and `previewDepositIdle`, the sweep's former names, stay for this beta: the same
 * functions as `sweep` and `previewSweep`, on the root, on the client and on a sweeper's handle.
 */
import { createPublicClient, createWalletClient, http } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { baseSepolia } from 'viem/chains'
import { expect, it } from 'vitest'
import {
  attachToResourceServer,
  createVaultClient,
  depositIdle,
  previewDepositIdle,
  previewSweep,
  sweep,
  VaultValidationError,
} from '../../../src/index.js'
import { hookTarget } from '../../support/settlementHook.js'

// Offline: nothing listens on port 9, and a bad threshold is refused before any read.
const transport = http('http://127.0.0.1:9')
const account = privateKeyToAccount(generatePrivateKey())
const vault = createVaultClient({
  publicClient: createPublicClient({ chain: baseSepolia, transport }),
  walletClient: createWalletClient({ account, chain: baseSepolia, transport }),
  chain: 'base-sepolia',
})

it('depositIdle is sweep and previewDepositIdle is previewSweep, on the root and on the client', async () => {
  expect(depositIdle).toBe(sweep)
  expect(previewDepositIdle).toBe(previewSweep)
  for (const run of [
    vault.sweep,
    vault.depositIdle,
    vault.previewSweep,
    vault.previewDepositIdle,
  ]) {
    const refused = run({ minIdleThreshold: 'ten' })
    await expect(refused).rejects.toThrow(VaultValidationError)
    await expect(refused).rejects.toMatchObject({ code: 'INVALID_AMOUNT' })
  }
})

it("a sweeper's depositIdle() is its sweep()", async () => {
  const sweeper = attachToResourceServer(vault, hookTarget(), { minIdleThreshold: '10' })
  expect(sweeper.depositIdle).toBe(sweeper.sweep)
  await sweeper.detach()
})
