import type { Address } from 'viem'
import { multicall } from 'viem/actions'
import { oracleAbi } from '../abis/index.js'
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
import { formatRayPercent } from '../rates.js'

/** A venue's name: the lending market (Aave, `vaultType` 0) or the lending vault (Morpho, 1). */
export type VenueName = 'aave' | 'morpho'

/** One venue's rates: spot and time-weighted (TWAR), in ray and as a percentage string, and its safety. */
export type VenueYield = {
  venue: VenueName
  vaultType: 0 | 1
  /** The venue contract the oracle reports. */
  vault: Field<Address>
  /** Current rate, annualised, in ray (1e27 = 100 %). */
  spotRay: Field<bigint>
  /** `spotRay` as a percentage APY string, such as `'4.50%'`. */
  spotApy: Field<string>
  /** Time-weighted rate, annualised, in ray. */
  twarRay: Field<bigint>
  /** `twarRay` as a percentage APY string. */
  twarApy: Field<string>
  /** Whether the oracle considers the venue safe. */
  safe: Field<boolean>
}

type RateItem = {
  vault: Address
  vaultType: number
  spotRate: bigint
  twarRate: bigint
  isSafe: boolean
}

/** The venue the oracle selects for new deposits. */
export type OptimalVenue = {
  venue: VenueName
  vaultType: number
  vault: Address
  twarRay: bigint
  twarApy: string
}

/** The yield picture at one block. */
export type VaultYield = {
  chain: VaultChainName
  chainId: number
  network: VaultNetwork
  blockNumber: bigint
  blockTimestamp: bigint
  aave: VenueYield
  morpho: VenueYield
  /**
   * The oracle's safe optimal venue; `Unavailable` with code `NO_SAFE_VAULT` (and the reason) when no
   * venue is safe.
   */
  optimal: Field<OptimalVenue>
  /** Whether the oracle's last observation is fresh (within its `MAX_STALENESS`). */
  oracleFresh: Field<boolean>
}

/**
 * Reads each venue's spot and time-weighted rate, its safety, and the oracle's selected venue, in one
 * RPC round trip (one Multicall3 `aggregate3`, one block).
 *
 * @param ctx - The vault client.
 * @returns Rates in ray and as percentage strings, safety, the optimal venue (or why there is none).
 * @example
 * const y = await vault.getYield()
 * console.log(y.aave.spotApy, y.morpho.spotApy)
 */
export async function getYield(ctx: VaultContext): Promise<VaultYield> {
  const { oracle } = ctx.addresses
  const action = 'Yield read'
  const [bn, ts, rates, optimal, fresh, capacity] = await guard(ctx, action, () =>
    multicall(ctx.publicClient, {
      ...multicallOptions,
      contracts: [
        blockNumberCall,
        blockTimestampCall,
        { address: oracle, abi: oracleAbi, functionName: 'getAllRates' },
        { address: oracle, abi: oracleAbi, functionName: 'getOptimalVault' },
        { address: oracle, abi: oracleAbi, functionName: 'isFresh' },
        // The oracle's views revert with the Morpho vault's own error; this tells that error apart.
        withdrawCapacityCall(ctx),
      ],
    }),
  )
  const { blockNumber, blockTimestamp } = blockOf(ctx, bn, ts, action)
  const decode = withMorphoReachability(ctx, capacity)
  const all = fieldOf(decode, rates)

  const venue = (vaultType: 0 | 1): VenueYield => {
    const name: VenueName = vaultType === 0 ? 'aave' : 'morpho'
    const rate: Field<RateItem | undefined> = mapField(
      all,
      (list) => list.find((r) => r.vaultType === vaultType) ?? list[vaultType],
    )
    const pick = <T>(fn: (r: RateItem) => T): Field<T> => {
      if (isUnavailable(rate)) return rate
      if (!rate) {
        return {
          unavailable: true,
          code: 'CONTRACT_REVERT',
          reason: `The oracle reported no ${name} rate.`,
        }
      }
      return fn(rate)
    }
    return {
      venue: name,
      vaultType,
      vault: pick((r) => r.vault),
      spotRay: pick((r) => r.spotRate),
      spotApy: pick((r) => formatRayPercent(r.spotRate)),
      twarRay: pick((r) => r.twarRate),
      twarApy: pick((r) => formatRayPercent(r.twarRate)),
      safe: pick((r) => r.isSafe),
    }
  }

  return {
    chain: ctx.chain,
    chainId: ctx.chainId,
    network: ctx.network,
    blockNumber,
    blockTimestamp,
    aave: venue(0),
    morpho: venue(1),
    optimal: fieldOf(decode, optimal, ([vault, vaultType, twarRate]) => ({
      venue: vaultType === 0 ? ('aave' as const) : ('morpho' as const),
      vaultType,
      vault,
      twarRay: twarRate,
      twarApy: formatRayPercent(twarRate),
    })),
    oracleFresh: fieldOf(decode, fresh),
  }
}
