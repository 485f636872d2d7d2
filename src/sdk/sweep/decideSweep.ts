/**
 * Why a sweep makes no idle deposit: deposits are `paused`; the `reserve` is above the wallet's whole
 * balance (`reserve-above-balance`: nothing is idle, whatever the thresholds); the idle USDC is below
 * `minIdleThreshold` (`below-threshold`) or the vault's minimum deposit (`below-protocol-minimum`); or
 * the TVL cap has no room for it (`tvl-cap`).
 */
export type NoIdleDepositReason =
  | 'paused'
  | 'reserve-above-balance'
  | 'below-threshold'
  | 'below-protocol-minimum'
  | 'tvl-cap'

/**
 * The former name of {@link NoIdleDepositReason}, kept for this beta.
 *
 * @deprecated Use `NoIdleDepositReason`.
 */
export type NoDepositReason = NoIdleDepositReason

/** What a sweep would do, with the numbers it decided on (base units). */
export type SweepDecision = {
  /** The wallet's USDC balance. */
  walletBalance: bigint
  /** USDC kept liquid in the wallet (`reserve`). */
  reserveFloor: bigint
  /** `walletBalance − reserveFloor`, 0 when negative. A deposit moves all of it. */
  idleAmount: bigint
} & ({ deposit: true } | { deposit: false; reason: NoIdleDepositReason })

export type DecideSweepParameters = {
  /** The wallet's USDC balance. */
  walletBalance: bigint
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
 * The sweep rule: `reserveFloor = reserve`; `idleAmount = walletBalance − reserveFloor` (0 if
 * negative); a deposit of all of `idleAmount` happens when `idleAmount ≥ max(minIdleThreshold,
 * protocol minimum)`, deposits are not paused and the TVL cap has room for all of it. Pure: the
 * caller reads the inputs (in one round trip).
 *
 * @param parameters - Balance, reserve, thresholds and the vault's state.
 * @returns The decision and its numbers.
 * @example
 * decideSweep({ walletBalance: 25_000_000n, reserve: 5_000_000n, minIdleThreshold: 10_000_000n,
 *   minDeposit: 10_000_000n, depositsPaused: false, tvlHeadroom: null })
 * // { deposit: true, walletBalance: 25_000_000n, reserveFloor: 5_000_000n, idleAmount: 20_000_000n }
 */
export function decideSweep(parameters: DecideSweepParameters): SweepDecision {
  const { walletBalance, reserve, minIdleThreshold, minDeposit, depositsPaused, tvlHeadroom } =
    parameters
  const idleAmount = walletBalance > reserve ? walletBalance - reserve : 0n
  const numbers = { walletBalance, reserveFloor: reserve, idleAmount }
  if (depositsPaused) return { ...numbers, deposit: false, reason: 'paused' }
  // Named apart from the thresholds: a reserve set above the balance keeps every sweep empty.
  if (reserve > walletBalance)
    return { ...numbers, deposit: false, reason: 'reserve-above-balance' }
  if (idleAmount < minIdleThreshold)
    return { ...numbers, deposit: false, reason: 'below-threshold' }
  if (idleAmount < minDeposit)
    return { ...numbers, deposit: false, reason: 'below-protocol-minimum' }
  if (tvlHeadroom !== null && idleAmount > tvlHeadroom) {
    return { ...numbers, deposit: false, reason: 'tvl-cap' }
  }
  return { ...numbers, deposit: true }
}
