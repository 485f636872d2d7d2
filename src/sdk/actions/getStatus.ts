import { type Address, maxUint256, zeroAddress } from 'viem'
import { multicall } from 'viem/actions'
import { feeCollectorAbi, oracleAbi, routerAbi, shareTokenAbi } from '../abis/index.js'
import type { VaultChainName, VaultNetwork } from '../chains.js'
import type { VaultContext } from '../context.js'
import { type Field, isUnavailable, mapField } from '../field.js'
import {
  blockNumberCall,
  blockOf,
  blockTimestampCall,
  fieldOf,
  guard,
  multicallOptions,
  withdrawCapacityCall,
  withMorphoReachability,
} from '../internal/read.js'
import { tvlHeadroom } from '../internal/shareMath.js'

/** The vault's state at one block. USDC and share amounts are base units (6 decimals). */
export type VaultStatus = {
  chain: VaultChainName
  chainId: number
  network: VaultNetwork
  /** The block every value was read at. */
  blockNumber: bigint
  blockTimestamp: bigint
  depositsPaused: Field<boolean>
  /** The router's minimum deposit (`MIN_DEPOSIT`). */
  minDeposit: Field<bigint>
  /** The TVL cap; `null` when there is none (from day 91). */
  tvlCap: Field<bigint | null>
  /** How much more can be deposited before the cap (0 when full); `null` when there is no cap. */
  tvlHeadroom: Field<bigint | null>
  /** USDC managed across both venues (`totalVaultAssets`). */
  totalAssets: Field<bigint>
  /** Shares in existence. */
  totalShares: Field<bigint>
  /** USDC per share, 1e18-scaled (1e18 = 1 USDC per share). */
  pricePerShare: Field<bigint>
  /** The share token's symbol, read from the chain. */
  shareSymbol: Field<string>
  oracle: {
    fresh: Field<boolean>
    /** Unix time of the last observation. */
    lastObservationTime: Field<bigint>
    /** Seconds from the last observation to this block. */
    ageSeconds: Field<bigint>
    /** The oracle counts as fresh up to this age (2 h). */
    maxStalenessSeconds: Field<bigint>
  }
  treasury: {
    current: Field<Address>
    /** The proposed next treasury; `null` when no rotation is pending. */
    pending: Field<Address | null>
    /** When the pending rotation may execute (unix time); `null` when none is pending. */
    rotationEffectiveAt: Field<bigint | null>
  }
  /** USDC held in each venue. */
  allocation: {
    aave: Field<bigint>
    morpho: Field<bigint>
  }
  /** What the venues can pay out right now (`withdrawCapacity()`, which never reverts). */
  withdrawCapacity: {
    aaveAssetsHeld: Field<bigint>
    aaveIdleLiquidity: Field<bigint>
    aaveWithdrawCap: Field<bigint>
    morphoAssetsHeld: Field<bigint>
    morphoWithdrawCap: Field<bigint>
    /** `false` when the Morpho view path reverts: withdrawals touching Morpho then revert. */
    morphoReachable: Field<boolean>
    totalWithdrawCap: Field<bigint>
  }
}

/**
 * Reads the vault's status in one RPC round trip (one Multicall3 `aggregate3`, one block).
 *
 * A sub-read that reverts (the Morpho-dependent views can) is reported in its field as `Unavailable`
 * with the reason; the rest still answers.
 *
 * @param ctx - The vault client.
 * @returns Pause flag, TVL cap and headroom, total assets, price per share, oracle freshness and age,
 *   treasury and pending rotation, allocation, withdrawal capacity, block.
 * @example
 * const status = await vault.getStatus()
 * if (!isUnavailable(status.totalAssets)) console.log(formatUsdc(status.totalAssets))
 */
export async function getStatus(ctx: VaultContext): Promise<VaultStatus> {
  const { router, oracle, feeCollector, shareToken } = ctx.addresses
  const action = 'Status read'
  const results = await guard(ctx, action, () =>
    multicall(ctx.publicClient, {
      ...multicallOptions,
      contracts: [
        blockNumberCall,
        blockTimestampCall,
        { address: router, abi: routerAbi, functionName: 'depositsPaused' },
        { address: router, abi: routerAbi, functionName: 'MIN_DEPOSIT' },
        { address: router, abi: routerAbi, functionName: 'currentTVLCap' },
        { address: router, abi: routerAbi, functionName: 'totalVaultAssets' },
        { address: router, abi: routerAbi, functionName: 'pricePerShare' },
        { address: router, abi: routerAbi, functionName: 'oracleStatus' },
        { address: router, abi: routerAbi, functionName: 'getCurrentAllocation' },
        withdrawCapacityCall(ctx),
        { address: oracle, abi: oracleAbi, functionName: 'MAX_STALENESS' },
        { address: feeCollector, abi: feeCollectorAbi, functionName: 'treasury' },
        { address: feeCollector, abi: feeCollectorAbi, functionName: 'pendingTreasury' },
        {
          address: feeCollector,
          abi: feeCollectorAbi,
          functionName: 'treasuryRotationEffectiveAt',
        },
        { address: shareToken, abi: shareTokenAbi, functionName: 'totalSupply' },
        { address: shareToken, abi: shareTokenAbi, functionName: 'symbol' },
      ],
    }),
  )
  const [
    bn,
    ts,
    paused,
    minDeposit,
    cap,
    total,
    pps,
    oracleStatus,
    allocation,
    capacity,
    maxStale,
    treasury,
    pending,
    effectiveAt,
    supply,
    symbol,
  ] = results
  const { blockNumber, blockTimestamp } = blockOf(ctx, bn, ts, action)
  const decode = withMorphoReachability(ctx, capacity)

  const tvlCap = fieldOf(decode, cap, (value) => (value === maxUint256 ? null : value))
  const totalAssets = fieldOf(decode, total)
  const headroom: Field<bigint | null> =
    isUnavailable(tvlCap) || tvlCap === null
      ? tvlCap
      : mapField(totalAssets, (assets) => tvlHeadroom(tvlCap, assets))
  const lastObservationTime = fieldOf(decode, oracleStatus, ([time]) => time)
  const pendingTreasury = fieldOf(decode, pending, (value) =>
    value === zeroAddress ? null : value,
  )

  return {
    chain: ctx.chain,
    chainId: ctx.chainId,
    network: ctx.network,
    blockNumber,
    blockTimestamp,
    depositsPaused: fieldOf(decode, paused),
    minDeposit: fieldOf(decode, minDeposit),
    tvlCap,
    tvlHeadroom: headroom,
    totalAssets,
    totalShares: fieldOf(decode, supply),
    pricePerShare: fieldOf(decode, pps),
    shareSymbol: fieldOf(decode, symbol),
    oracle: {
      fresh: fieldOf(decode, oracleStatus, ([, fresh]) => fresh),
      lastObservationTime,
      ageSeconds: isUnavailable(lastObservationTime)
        ? lastObservationTime
        : blockTimestamp > lastObservationTime
          ? blockTimestamp - lastObservationTime
          : 0n,
      maxStalenessSeconds: fieldOf(decode, maxStale),
    },
    treasury: {
      current: fieldOf(decode, treasury),
      pending: pendingTreasury,
      rotationEffectiveAt: fieldOf(decode, effectiveAt, (value) =>
        pendingTreasury === null || value === 0n ? null : value,
      ),
    },
    allocation: {
      aave: fieldOf(decode, allocation, ([aave]) => aave),
      morpho: fieldOf(decode, allocation, ([, morpho]) => morpho),
    },
    withdrawCapacity: {
      aaveAssetsHeld: fieldOf(decode, capacity, (c) => c.aaveAssetsHeld),
      aaveIdleLiquidity: fieldOf(decode, capacity, (c) => c.aaveIdleLiquidity),
      aaveWithdrawCap: fieldOf(decode, capacity, (c) => c.aaveWithdrawCap),
      morphoAssetsHeld: fieldOf(decode, capacity, (c) => c.morphoAssetsHeld),
      morphoWithdrawCap: fieldOf(decode, capacity, (c) => c.morphoWithdrawCap),
      morphoReachable: fieldOf(decode, capacity, (c) => c.morphoReachable),
      totalWithdrawCap: fieldOf(decode, capacity, (c) => c.totalWithdrawCap),
    },
  }
}
