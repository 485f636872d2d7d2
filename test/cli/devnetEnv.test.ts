import { describe, expect, it } from 'vitest'
import { devnetEnvLines } from '../../src/cli/devnet.js'
import type { Devnet } from '../../src/devnet/startDevnet.js'

/** Just what `devnetEnvLines` reads of a devnet. */
const devnetOn = (chain: 'base' | 'base-sepolia') =>
  ({
    chain,
    chainId: chain === 'base' ? 8453 : 84532,
    rpcUrl: 'http://127.0.0.1:8545',
    accounts: {
      merchant: { address: '0x1', privateKey: '0x2' },
      buyer: { address: '0x3', privateKey: '0x4' },
    },
  }) as unknown as Devnet

describe('x402-vault devnet’s env lines', () => {
  it.each([
    ['base', 'BASE_MAINNET_RPC_URL'],
    ['base-sepolia', 'BASE_SEPOLIA_RPC_URL'],
  ] as const)('on %s: the RPC variable and VAULT_CHAIN, which the examples read', (chain, rpc) => {
    const lines = devnetEnvLines(devnetOn(chain), '/tmp/addresses.json')
    expect(lines).toContain(`${rpc}=http://127.0.0.1:8545`)
    expect(lines).toContain(`VAULT_CHAIN=${chain}`)
    expect(lines).toContain('VAULT_ADDRESSES=/tmp/addresses.json')
  })
})
