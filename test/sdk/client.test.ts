import { createPublicClient, createWalletClient, decodeFunctionData, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { base, baseSepolia, mainnet } from 'viem/chains'
import { describe, expect, it } from 'vitest'
import {
  createVaultClient,
  formatRayPercent,
  routerAbi,
  VaultConfigError,
  VaultError,
  vaultChains,
} from '../../src/index.js'
import { buildDepositTransaction, buildWithdrawTransaction } from '../../src/sdk/transactions.js'
import { expectVaultError } from '../support/expectVaultError.js'

// Nothing here reaches the network: every check happens before a request.
const unreachable = 'http://127.0.0.1:9/'
const publicClient = createPublicClient({ chain: baseSepolia, transport: http(unreachable) })
const account = privateKeyToAccount(`0x${'11'.repeat(32)}`)

function expectSyncError(fn: () => unknown, code: string): VaultError {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(VaultError)
    expect((error as VaultError).code).toBe(code)
    return error as VaultError
  }
  throw new Error(`expected ${code}`)
}

describe('createVaultClient', () => {
  it('uses the built-in registry and exposes chain, chainId, network', () => {
    const vault = createVaultClient({ publicClient, chain: 'base-sepolia' })
    expect(vault.chain).toBe('base-sepolia')
    expect(vault.chainId).toBe(84532)
    expect(vault.network).toBe('eip155:84532')
    expect(vault.addresses).toEqual(vaultChains['base-sepolia'].addresses)
    expect(Object.isFrozen(vault.addresses)).toBe(true)

    const mainnetVault = createVaultClient({
      publicClient: createPublicClient({ chain: base, transport: http(unreachable) }),
      chain: 'base',
    })
    expect(mainnetVault.network).toBe('eip155:8453')
    expect(mainnetVault.addresses.usdc).toBe('0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913')
  })

  it('applies and checksums address overrides field by field', () => {
    const router = '0xa513e6e4b8f2a923d98304ec87f64353c4d5c853'
    const vault = createVaultClient({ publicClient, chain: 'base-sepolia', addresses: { router } })
    expect(vault.addresses.router).toBe('0xa513E6E4b8f2a923D98304ec87F64353C4D5C853')
    expect(vault.addresses.usdc).toBe(vaultChains['base-sepolia'].addresses.usdc)
  })

  it('rejects bad overrides, naming the field', () => {
    const error = expectSyncError(
      () =>
        createVaultClient({ publicClient, chain: 'base-sepolia', addresses: { oracle: '0x1234' } }),
      'INVALID_ADDRESS',
    )
    expect(error.message).toContain('addresses.oracle')
    expectSyncError(
      () =>
        createVaultClient({
          publicClient,
          chain: 'base-sepolia',
          addresses: { rooter: '0x' } as never,
        }),
      'INVALID_ARGUMENT',
    )
  })

  it('fails fast on a chain mismatch with either client', () => {
    const error = expectSyncError(
      () =>
        createVaultClient({
          publicClient: createPublicClient({ chain: mainnet, transport: http(unreachable) }),
          chain: 'base',
        }),
      'CHAIN_MISMATCH',
    )
    expect(error).toBeInstanceOf(VaultConfigError)
    expect(error.message).toContain('publicClient')
    expectSyncError(
      () =>
        createVaultClient({
          publicClient,
          walletClient: createWalletClient({ account, chain: base, transport: http(unreachable) }),
          chain: 'base-sepolia',
        }),
      'CHAIN_MISMATCH',
    )
  })

  it('rejects an unknown chain', () => {
    expectSyncError(
      () => createVaultClient({ publicClient, chain: 'ethereum' as never }),
      'UNKNOWN_CHAIN',
    )
    expectSyncError(
      () => createVaultClient({ publicClient, chain: 'toString' as never }),
      'UNKNOWN_CHAIN',
    )
    // A value whose string conversion throws is still a clear error, not a TypeError.
    for (const chain of [{ toString: 0 }, Symbol('base'), 8453, null]) {
      expectSyncError(
        () => createVaultClient({ publicClient, chain: chain as never }),
        'UNKNOWN_CHAIN',
      )
    }
  })

  it('extends like a viem client', async () => {
    const vault = createVaultClient({ publicClient, chain: 'base-sepolia' }).extend((client) => ({
      routerAddress: () => client.addresses.router,
    }))
    expect(vault.routerAddress()).toBe(vaultChains['base-sepolia'].addresses.router)
    const twice = vault.extend(() => ({ hello: 'world' as const }))
    expect(twice.hello).toBe('world')
    expect(twice.routerAddress()).toBe(vault.addresses.router)
    expect(typeof twice.getStatus).toBe('function')
  })

  it('validates inputs before any request', async () => {
    const vault = createVaultClient({ publicClient, chain: 'base-sepolia' })
    const wallet = account.address
    await expectVaultError(vault.depositAndWait({ amount: 10n }), 'WALLET_CLIENT_REQUIRED')
    await expectVaultError(vault.planDeposit({ wallet, amount: '10' as never }), 'INVALID_AMOUNT')
    await expectVaultError(vault.planDeposit({ wallet, amount: -1n }), 'INVALID_AMOUNT')
    await expectVaultError(
      vault.planDeposit({ wallet, amount: 10n, slippageBps: 1001 }),
      'INVALID_SLIPPAGE',
    )
    await expectVaultError(vault.planWithdraw({ wallet } as never), 'INVALID_ARGUMENT')
    await expectVaultError(
      vault.planWithdraw({ wallet, amount: 1n, shares: 1n } as never),
      'INVALID_ARGUMENT',
    )
    await expectVaultError(
      vault.planWithdraw({ wallet, shares: 1n, slippageBps: 5000 }),
      'INVALID_SLIPPAGE',
    )
    await expectVaultError(vault.getPosition({ wallet: '0xnope' as never }), 'INVALID_ADDRESS')
    const walletVault = createVaultClient({
      publicClient,
      walletClient: createWalletClient({ chain: baseSepolia, transport: http(unreachable) }),
      chain: 'base-sepolia',
    })
    await expectVaultError(walletVault.initialize(), 'ACCOUNT_REQUIRED')
  })

  it('a read against an unreachable RPC fails with a retryable error', async () => {
    const vault = createVaultClient({
      publicClient: createPublicClient({
        chain: baseSepolia,
        transport: http(unreachable, { retryCount: 0 }),
      }),
      chain: 'base-sepolia',
    })
    const error = await expectVaultError(vault.getStatus(), 'RPC_UNREACHABLE')
    expect(error.retryable).toBe(true)
  })
})

describe('transactions and rates', () => {
  const vault = createVaultClient({ publicClient, chain: 'base-sepolia' })
  it('builds transactions whose data decodes to functionName and args', () => {
    const deposit = buildDepositTransaction(vault, 10_000_000n, account.address, 9_990_000n)
    expect(decodeFunctionData({ abi: routerAbi, data: deposit.data })).toEqual({
      functionName: 'deposit',
      args: [10_000_000n, account.address, 9_990_000n],
    })
    expect(deposit).toMatchObject({
      chain: 'base-sepolia',
      chainId: 84532,
      to: vault.addresses.router,
      value: 0n,
    })
    const withdraw = buildWithdrawTransaction(vault, 5n, account.address, 4n)
    expect(decodeFunctionData({ abi: routerAbi, data: withdraw.data }).args).toEqual(withdraw.args)
  })

  it('formats ray rates as percentages', () => {
    expect(formatRayPercent(45n * 10n ** 24n)).toBe('4.50%')
    expect(formatRayPercent(0n)).toBe('0.00%')
    expect(formatRayPercent(10n ** 27n)).toBe('100.00%')
    expect(formatRayPercent(12_345n * 10n ** 21n, 4)).toBe('1.2345%')
    expect(formatRayPercent(5n * 10n ** 22n)).toBe('0.01%')
    expect(formatRayPercent(4n * 10n ** 22n)).toBe('0.00%')
  })
})
