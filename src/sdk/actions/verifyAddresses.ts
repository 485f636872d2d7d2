import { type Address, isAddressEqual } from 'viem'
import { getChainId, multicall } from 'viem/actions'
import { feeCollectorAbi, oracleAbi, routerAbi, shareTokenAbi, usdcAbi } from '../abis/index.js'
import { aavePoolAbi, aTokenAbi, erc4626Abi } from '../abis/venues.js'
import type { VaultAddresses } from '../chains.js'
import type { VaultContext } from '../context.js'
import { AddressMismatchError, VaultConfigError } from '../errors/classes.js'
import { toVaultError } from '../errors/toVaultError.js'
import {
  blockNumberCall,
  blockOf,
  blockTimestampCall,
  guard,
  multicallOptions,
} from '../internal/read.js'

/** What `verifyAddresses` checked. */
export type VerifyAddressesResult = {
  chainId: number
  blockNumber: bigint
  /** Every check that passed, such as `router.ORACLE()` or `code:aavePool`. */
  checks: string[]
}

/**
 * Verifies the client against the chain; await it once before use.
 *
 * Checks that the RPC's chain id equals the client's, that every address has code, that the router's
 * wiring getters (`USDC`, `A_TOKEN`, `AAVE_POOL`, `MORPHO_VAULT`, `ORACLE`, `FEE_COLLECTOR`, `DV_USDC`)
 * return the configured addresses, that the share token's and fee collector's `VAULT_ROUTER()` point
 * back at the router (and the fee collector's `USDC()` at the USDC), and that USDC has 6 decimals.
 * Two RPC requests, sent together: `eth_chainId` and one Multicall3 `aggregate3`.
 *
 * @param ctx - The vault client.
 * @returns The chain id, the block and the list of checks.
 * @throws {AddressMismatchError} naming the field, the expected and the actual value (`CHAIN_MISMATCH`
 *   for the chain id, `ADDRESS_MISMATCH` for wiring, `NO_CONTRACT_CODE` for a missing contract).
 * @example
 * await vault.verifyAddresses()
 */
export async function verifyAddresses(ctx: VaultContext): Promise<VerifyAddressesResult> {
  const a = ctx.addresses
  const action = 'Address verification'
  const [chainId, results] = await guard(ctx, action, () =>
    Promise.all([
      getChainId(ctx.publicClient),
      multicall(ctx.publicClient, {
        ...multicallOptions,
        contracts: [
          blockNumberCall,
          blockTimestampCall,
          { address: a.router, abi: routerAbi, functionName: 'USDC' },
          { address: a.router, abi: routerAbi, functionName: 'A_TOKEN' },
          { address: a.router, abi: routerAbi, functionName: 'AAVE_POOL' },
          { address: a.router, abi: routerAbi, functionName: 'MORPHO_VAULT' },
          { address: a.router, abi: routerAbi, functionName: 'ORACLE' },
          { address: a.router, abi: routerAbi, functionName: 'FEE_COLLECTOR' },
          { address: a.router, abi: routerAbi, functionName: 'DV_USDC' },
          { address: a.shareToken, abi: shareTokenAbi, functionName: 'VAULT_ROUTER' },
          { address: a.feeCollector, abi: feeCollectorAbi, functionName: 'VAULT_ROUTER' },
          { address: a.feeCollector, abi: feeCollectorAbi, functionName: 'USDC' },
          { address: a.usdc, abi: usdcAbi, functionName: 'decimals' },
          { address: a.oracle, abi: oracleAbi, functionName: 'lastObservationTime' },
          { address: a.aToken, abi: aTokenAbi, functionName: 'decimals' },
          {
            address: a.aavePool,
            abi: aavePoolAbi,
            functionName: 'getReserveNormalizedIncome',
            args: [a.usdc],
          },
          { address: a.morphoVault, abi: erc4626Abi, functionName: 'asset' },
        ],
      }),
    ]),
  )

  if (chainId !== ctx.chainId) {
    throw new AddressMismatchError({
      field: 'chainId',
      expected: String(ctx.chainId),
      actual: String(chainId),
      code: 'CHAIN_MISMATCH',
    })
  }
  const [
    bn,
    ts,
    usdc,
    aToken,
    aavePool,
    morphoVault,
    oracle,
    feeCollector,
    dvUsdc,
    shareRouter,
    feeRouter,
    feeUsdc,
    decimals,
    ...codeOnly
  ] = results
  const { blockNumber } = blockOf(ctx, bn, ts, action)

  const checks: string[] = []
  // Code first: a missing contract explains every other failure that follows from it.
  const codeProbes: [keyof VaultAddresses, (typeof results)[number]][] = [
    ['router', usdc],
    ['shareToken', shareRouter],
    ['feeCollector', feeRouter],
    ['usdc', decimals],
    ['oracle', codeOnly[0] as (typeof results)[number]],
    ['aToken', codeOnly[1] as (typeof results)[number]],
    ['aavePool', codeOnly[2] as (typeof results)[number]],
    ['morphoVault', codeOnly[3] as (typeof results)[number]],
  ]
  for (const [role, result] of codeProbes) {
    // A revert proves there is code (only code can revert); "no data" means an empty account.
    if (result.status === 'failure' && toVaultError(result.error).code === 'CONTRACT_NO_DATA') {
      throw new AddressMismatchError({
        field: `${role} code`,
        expected: `a contract at ${a[role]}`,
        actual: 'no code',
        code: 'NO_CONTRACT_CODE',
      })
    }
    checks.push(`code:${role}`)
  }

  const expectAddress = (field: string, result: (typeof results)[number], expected: Address) => {
    if (result.status === 'failure') {
      const error = toVaultError(result.error, { addresses: a })
      throw new VaultConfigError(`Address check failed for ${field}: ${error.message}`, {
        code: 'ADDRESS_MISMATCH',
        details: {
          field,
          expected,
        },
        cause: result.error,
      })
    }
    const actual = result.result as Address
    if (!isAddressEqual(actual, expected))
      throw new AddressMismatchError({ field, expected, actual })
    checks.push(field)
  }
  expectAddress('router.USDC()', usdc, a.usdc)
  expectAddress('router.A_TOKEN()', aToken, a.aToken)
  expectAddress('router.AAVE_POOL()', aavePool, a.aavePool)
  expectAddress('router.MORPHO_VAULT()', morphoVault, a.morphoVault)
  expectAddress('router.ORACLE()', oracle, a.oracle)
  expectAddress('router.FEE_COLLECTOR()', feeCollector, a.feeCollector)
  expectAddress('router.DV_USDC()', dvUsdc, a.shareToken)
  expectAddress('shareToken.VAULT_ROUTER()', shareRouter, a.router)
  expectAddress('feeCollector.VAULT_ROUTER()', feeRouter, a.router)
  expectAddress('feeCollector.USDC()', feeUsdc, a.usdc)

  if (decimals.status === 'success') {
    if (decimals.result !== 6)
      throw new AddressMismatchError({
        field: 'usdc.decimals()',
        expected: '6',
        actual: String(decimals.result),
      })
    checks.push('usdc.decimals()')
  }
  return { chainId, blockNumber, checks }
}
