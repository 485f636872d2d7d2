/** Why a sweep deposits nothing. */
export type NoDepositReason = 'paused' | 'below-threshold' | 'below-protocol-minimum' | 'tvl-cap'

/** What a sweep would do, with the numbers it decided on (base units). */
export type SweepDecision = {
  /** The wallet's USDC balance. */
  balance: bigint
  /** USDC kept liquid in the wallet (`reserve`). */
  reserveFloor: bigint
  /** `balance − reserveFloor`, 0 when negative. */
  idle: bigint
} & ({ deposit: true; amount: bigint } | { deposit: false; reason: NoDepositReason })

export type DecideSweepParameters = {
  balance: bigint
  /** USDC to keep liquid. */
  reserve: bigint
  /** The seller's own threshold. */
  minIdleThreshold: bigint
  /** The router's `MIN_DEPOSIT`. */
  minDeposit: bigint
  depositsPaused: boolean
  /** Room left under the TVL cap; `null` when there is no cap. */
  tvlHeadroom: bigint | null
}

/**
 * The sweep rule of PRODUCT.md §5.2: `idle = balance − reserve` (0 if negative), and a deposit of all of
 * `idle` happens when `idle ≥ max(minIdleThreshold, protocol minimum)`, deposits are not paused and the TVL
 * cap has room for all of it. Pure: the caller reads the inputs (in one round trip).
 *
 * @param parameters - Balance, reserve, thresholds and the vault's state.
 * @returns The decision and its numbers.
 * @example
 * decideSweep({ balance: 25_000_000n, reserve: 5_000_000n, minIdleThreshold: 10_000_000n,
 *   minDeposit: 10_000_000n, depositsPaused: false, tvlHeadroom: null })
 * // { deposit: true, amount: 20_000_000n, balance: 25_000_000n, reserveFloor: 5_000_000n, idle: 20_000_000n }
 */
export function decideSweep(parameters: DecideSweepParameters): SweepDecision {
  const { balance, reserve, minIdleThreshold, minDeposit, depositsPaused, tvlHeadroom } = parameters
  const idle = balance > reserve ? balance - reserve : 0n
  const numbers = { balance, reserveFloor: reserve, idle }
  if (depositsPaused) return { ...numbers, deposit: false, reason: 'paused' }
  if (idle < minIdleThreshold) return { ...numbers, deposit: false, reason: 'below-threshold' }
  if (idle < minDeposit) return { ...numbers, deposit: false, reason: 'below-protocol-minimum' }
  if (tvlHeadroom !== null && idle > tvlHeadroom) {
    return { ...numbers, deposit: false, reason: 'tvl-cap' }
  }
  return { ...numbers, deposit: true, amount: idle }
}
