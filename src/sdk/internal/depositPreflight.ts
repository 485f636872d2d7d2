import {
  type Address,
  type ContractFunctionParameters,
  type Hex,
  type MulticallResponse,
  maxUint256,
  parseAbi,
} from 'viem'
import { multicall } from 'viem/actions'
import { routerAbi, shareTokenAbi, usdcAbi } from '../abis/index.js'
import type { VaultContext } from '../context.js'
import { VaultPreconditionError } from '../errors/classes.js'
import type { VaultErrorCode, VaultErrorDetails } from '../errors/codes.js'
import { formatUsdc } from '../money.js'
import {
  assertReadChain,
  blockNumberCall,
  blockOf,
  blockTimestampCall,
  chainIdCall,
  guard,
  multicallOptions,
  resultValue,
  withdrawCapacityCall,
  withMorphoReachability,
} from './read.js'
import { assetsToShares, tvlHeadroom } from './shareMath.js'

/** Everything a deposit depends on, read in one Multicall3 call at one block. */
export type DepositChecks = {
  blockNumber: bigint
  blockTimestamp: bigint
  paused: boolean
  registered: boolean
  minDeposit: bigint
  /** `null` when there is no cap. */
  tvlCap: bigint | null
  /** `undefined` when `totalVaultAssets` reverted (the Morpho view can). */
  totalAssets: bigint | undefined
  usdcBalance: bigint
  allowance: bigint
  expectedShares: bigint
  /** `withdrawCapacity().morphoReachable`; `undefined` when that read failed. */
  morphoReachable: boolean | undefined
  /** `router.oracleStatus().fresh` now; `undefined` when that read failed. */
  oracleFresh: boolean | undefined
  /**
   * Whether the oracle is fresh once the deposit's own `recordObservation()` attempt ran, as the
   * router checks it (`StaleOracle` when not); `undefined` when that read failed.
   */
  oracleFreshForDeposit: boolean | undefined
  /** The USDC's EIP-2612 facts, when it has them. */
  permit:
    | { nonce: bigint; name: string; version: string | undefined; domainSeparator: Hex }
    | undefined
}

/** What a sweep reads before it knows the amount: the deposit checks, with the share supply instead of a preview. */
export type SweepChecks = Omit<DepositChecks, 'expectedShares' | 'totalAssets'> & {
  totalAssets: bigint
  /** The share token's total supply, for the router's share math. */
  totalShares: bigint
}

/** Reads every deposit check in one round trip. Hard failures (RPC) throw; the preview's revert throws. */
export async function readDepositChecks(
  ctx: VaultContext,
  wallet: Address,
  amount: bigint,
  action: string,
): Promise<DepositChecks> {
  const previewCall = {
    address: ctx.addresses.router,
    abi: routerAbi,
    functionName: 'previewDeposit',
    args: [amount],
  } as const
  const { checks, decode, last } = await readChecks(ctx, wallet, previewCall, action)
  return { ...checks, expectedShares: resultValue(decode, last, action) }
}

/**
 * Reads what a sweep decides on and what its deposit needs, in one round trip, before the amount is
 * known: the deposit checks, with the share supply in place of `previewDeposit`. A sweep needs the
 * vault's total assets (for the TVL headroom and the share preview), so a failure to read them throws.
 */
export async function readSweepChecks(
  ctx: VaultContext,
  wallet: Address,
  action: string,
): Promise<SweepChecks> {
  const supplyCall = {
    address: ctx.addresses.shareToken,
    abi: shareTokenAbi,
    functionName: 'totalSupply',
  } as const
  const { checks, decode, last, total } = await readChecks(ctx, wallet, supplyCall, action)
  return {
    ...checks,
    totalAssets: resultValue(decode, total, action),
    totalShares: resultValue(decode, last, action),
  }
}

/**
 * The deposit checks of a sweep for the amount it decided on. The router's `previewDeposit` is
 * `assetsToShares` over the same block's totals (the router's rule), so no second read is needed.
 */
export function depositChecksFor(checks: SweepChecks, amount: bigint): DepositChecks {
  const { totalShares, ...rest } = checks
  return {
    ...rest,
    expectedShares: assetsToShares(amount, { totalAssets: checks.totalAssets, totalShares }),
  }
}

/**
 * The oracle's `recordObservation()` and `isFresh()`, typed as views for the multicall: the read is an
 * `eth_call`, whose state changes are discarded, and running the attempt the deposit makes first
 * (`try recordObservation()`, then `isFresh()`) shows whether the deposit would meet a fresh oracle.
 */
const oracleProbeAbi = parseAbi([
  'function recordObservation() view',
  'function isFresh() view returns (bool)',
])

/** The multicall both reads share; `last` is the caller's own call, placed after the reads. */
async function readChecks(
  ctx: VaultContext,
  wallet: Address,
  lastCall: ContractFunctionParameters,
  action: string,
) {
  const { router, usdc } = ctx.addresses
  const [
    bn,
    ts,
    chainId,
    paused,
    registered,
    minDeposit,
    cap,
    total,
    balance,
    allowance,
    nonce,
    name,
    version,
    separator,
    capacity,
    oracleStatus,
    last,
    ,
    freshForDeposit,
  ] = await guard(ctx, action, () =>
    multicall(ctx.publicClient, {
      ...multicallOptions,
      contracts: [
        blockNumberCall,
        blockTimestampCall,
        chainIdCall,
        { address: router, abi: routerAbi, functionName: 'depositsPaused' },
        { address: router, abi: routerAbi, functionName: 'authorizedWallets', args: [wallet] },
        { address: router, abi: routerAbi, functionName: 'MIN_DEPOSIT' },
        { address: router, abi: routerAbi, functionName: 'currentTVLCap' },
        { address: router, abi: routerAbi, functionName: 'totalVaultAssets' },
        { address: usdc, abi: usdcAbi, functionName: 'balanceOf', args: [wallet] },
        { address: usdc, abi: usdcAbi, functionName: 'allowance', args: [wallet, router] },
        { address: usdc, abi: usdcAbi, functionName: 'nonces', args: [wallet] },
        { address: usdc, abi: usdcAbi, functionName: 'name' },
        { address: usdc, abi: usdcAbi, functionName: 'version' },
        { address: usdc, abi: usdcAbi, functionName: 'DOMAIN_SEPARATOR' },
        withdrawCapacityCall(ctx),
        { address: router, abi: routerAbi, functionName: 'oracleStatus' },
        lastCall,
        // Last, as they change state within the call: the deposit's own attempt to record, then its check.
        { address: ctx.addresses.oracle, abi: oracleProbeAbi, functionName: 'recordObservation' },
        { address: ctx.addresses.oracle, abi: oracleProbeAbi, functionName: 'isFresh' },
      ],
    }),
  )
  const { blockNumber, blockTimestamp } = blockOf(ctx, bn, ts, action)
  assertReadChain(ctx, chainId, action)
  const decode = withMorphoReachability(ctx, capacity)
  const capValue = resultValue(decode, cap, action)
  const checks: Omit<DepositChecks, 'expectedShares'> = {
    blockNumber,
    blockTimestamp,
    paused: resultValue(decode, paused, action),
    registered: resultValue(decode, registered, action),
    minDeposit: resultValue(decode, minDeposit, action),
    tvlCap: capValue === maxUint256 ? null : capValue,
    totalAssets: total.status === 'success' ? total.result : undefined,
    usdcBalance: resultValue(decode, balance, action),
    allowance: resultValue(decode, allowance, action),
    morphoReachable: decode.morphoReachable,
    oracleFresh: oracleStatus.status === 'success' ? oracleStatus.result[1] : undefined,
    oracleFreshForDeposit:
      freshForDeposit.status === 'success' ? freshForDeposit.result : undefined,
    permit:
      nonce.status === 'success' && name.status === 'success' && separator.status === 'success'
        ? {
            nonce: nonce.result,
            name: name.result,
            version: version.status === 'success' ? version.result : undefined,
            domainSeparator: separator.result,
          }
        : undefined,
  }
  // Both callers' last call returns a uint256.
  return { checks, decode, total, last: last as MulticallResponse<bigint> }
}

/**
 * Throws the first blocker, in the router's own order: paused, below the minimum, over the TVL cap,
 * the wallet's USDC balance, then an oracle the deposit would find stale. Registration and allowance are reported, not thrown, by the plan;
 * every blocker's details also carry them (`registered`, `allowance`), so a caller can say in one answer
 * what else the wallet will need once the blocker is gone.
 */
export function assertDepositPossible(checks: DepositChecks, amount: bigint): void {
  const blocked = (code: VaultErrorCode, message: string, details: VaultErrorDetails = {}) =>
    new VaultPreconditionError(message, {
      code,
      details: {
        ...details,
        registered: checks.registered,
        allowance: checks.allowance,
      },
    })
  if (checks.paused) {
    throw blocked(
      'DEPOSITS_PAUSED',
      'Deposits are paused on the vault; try again later (withdrawals still work).',
    )
  }
  if (amount < checks.minDeposit) {
    throw blocked(
      'BELOW_MIN_DEPOSIT',
      `The deposit of ${formatUsdc(amount)} USDC is below the vault's minimum of ${formatUsdc(checks.minDeposit)} USDC.`,
      { amount, minDeposit: checks.minDeposit },
    )
  }
  if (
    checks.tvlCap !== null &&
    checks.totalAssets !== undefined &&
    checks.totalAssets + amount > checks.tvlCap
  ) {
    const headroom = tvlHeadroom(checks.tvlCap, checks.totalAssets)
    throw blocked(
      'TVL_CAP_EXCEEDED',
      `The deposit of ${formatUsdc(amount)} USDC would exceed the vault's TVL cap of ${formatUsdc(checks.tvlCap)} USDC (room left: ${formatUsdc(headroom)} USDC).`,
      { amount, tvlCap: checks.tvlCap, totalAssets: checks.totalAssets, headroom },
    )
  }
  if (checks.usdcBalance < amount) {
    throw blocked(
      'INSUFFICIENT_USDC',
      `The wallet holds ${formatUsdc(checks.usdcBalance)} USDC, less than the ${formatUsdc(amount)} USDC to deposit.`,
      { amount, balance: checks.usdcBalance, shortfall: amount - checks.usdcBalance },
    )
  }
  // Checked whatever the wallet still needs: registration and approval would succeed on chain and
  // the deposit after them revert.
  if (checks.oracleFreshForDeposit === false) {
    throw blocked(
      'STALE_ORACLE',
      'The yield oracle is stale and recording a new observation fails, so the vault refuses deposits (StaleOracle) until the oracle records again; try again later (withdrawals still work).',
    )
  }
}
