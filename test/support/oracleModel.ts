/**
 * A TypeScript model of the vault oracle's measured rates and time-weighted rates, written
 * from the live oracle's rules (the constants below), to check the devnet's `VaultOracle` against it to the ray.
 */

export const twarWindow = 14_400n
export const minObservationInterval = 300n
export const checkpointSlots = 48
/** 365.25 days. */
export const secondsPerYear = 31_557_600n
export const ray = 10n ** 27n
/** The Morpho share amount whose value is the share price, and the value at peg. */
export const shareUnit = 10n ** 24n
export const morphoPegAssets = 10n ** 12n
const uint224Mask = (1n << 224n) - 1n

/** What the oracle reads from the venues at one moment. */
export type VenueReadings = {
  /** Block time, unix seconds. */
  time: bigint
  /** The Aave reserve's `currentLiquidityRate` (annual, ray). */
  aaveRate: bigint
  /** The Morpho vault's `convertToAssets(SHARE_UNIT)`. */
  morphoSharePrice: bigint
}

/** One checkpoint of the ring, with the cumulative sums truncated to uint224 as the oracle stores them. */
export type ModelCheckpoint = {
  timestamp: bigint
  morphoSharePrice: bigint
  aaveCumulative: bigint
  morphoCumulative: bigint
}

export type VenueSafety = { aave: boolean; morpho: boolean }

/** The oracle's state, as its public views show it. */
export class OracleModel {
  aaveCumulative = 0n
  morphoCumulative = 0n
  aaveSpotRate: bigint
  morphoSpotRate = 0n
  lastObservationTime: bigint
  lastMorphoSharePrice: bigint
  /** Oldest first; at most {@link checkpointSlots}. */
  readonly checkpoints: ModelCheckpoint[] = []
  /** Observations recorded so far (no-ops excluded). */
  observations = 0

  /** The state right after construction: Aave's rate is the first spot, Morpho's price the first baseline. */
  constructor(atConstruction: VenueReadings) {
    this.aaveSpotRate = atConstruction.aaveRate
    this.lastMorphoSharePrice = atConstruction.morphoSharePrice
    this.lastObservationTime = atConstruction.time
  }

  /**
   * `recordObservation()` with the venues reading `readings`.
   *
   * @returns Whether it recorded (false: within {@link minObservationInterval} of the last one, a no-op).
   */
  record(readings: VenueReadings): boolean {
    const elapsed = readings.time - this.lastObservationTime
    if (elapsed < minObservationInterval) return false
    this.aaveCumulative += this.aaveSpotRate * elapsed
    this.morphoCumulative += this.morphoSpotRate * elapsed
    const price = readings.morphoSharePrice
    const baseline = this.lastMorphoSharePrice
    let morphoSpot = 0n
    if (price > baseline) {
      if (baseline > 0n)
        morphoSpot = ((price - baseline) * secondsPerYear * ray) / baseline / elapsed
      this.lastMorphoSharePrice = price
    }
    this.checkpoints.push({
      timestamp: readings.time,
      morphoSharePrice: price,
      aaveCumulative: this.aaveCumulative & uint224Mask,
      morphoCumulative: this.morphoCumulative & uint224Mask,
    })
    if (this.checkpoints.length > checkpointSlots) this.checkpoints.shift()
    this.aaveSpotRate = readings.aaveRate
    this.morphoSpotRate = morphoSpot
    this.lastObservationTime = readings.time
    this.observations += 1
    return true
  }

  /** Both TWARs at `now`: the cumulative sums carried to now, over the span since the window's checkpoint. */
  twar(now: bigint): { aave: bigint; morpho: bigint } {
    const spot = { aave: this.aaveSpotRate, morpho: this.morphoSpotRate }
    const [oldest] = this.checkpoints
    if (!oldest) return spot
    const sinceLast = now - this.lastObservationTime
    const aaveNow = this.aaveCumulative + this.aaveSpotRate * sinceLast
    const morphoNow = this.morphoCumulative + this.morphoSpotRate * sinceLast
    const since = this.checkpoints.findLast((c) => c.timestamp <= now - twarWindow) ?? oldest
    if (now === since.timestamp) return spot
    const span = now - since.timestamp
    // The stored sums keep 224 bits, so the difference is taken modulo 2^224.
    return {
      aave: (((aaveNow & uint224Mask) - since.aaveCumulative) & uint224Mask) / span,
      morpho: (((morphoNow & uint224Mask) - since.morphoCumulative) & uint224Mask) / span,
    }
  }

  /**
   * `getOptimalVault()` at `now`: Morpho when it is safe and beats Aave's TWAR by at least
   * `minDifferentialRay`, or Aave is unsafe; else Aave.
   *
   * @returns The venue type (0 Aave, 1 Morpho) and its TWAR, or `undefined` for `NoSafeVault()`.
   */
  select(
    now: bigint,
    safety: VenueSafety,
    minDifferentialRay: bigint,
  ): { vaultType: 0 | 1; twarRate: bigint } | undefined {
    const twar = this.twar(now)
    if (!safety.aave && !safety.morpho) return undefined
    if (safety.morpho && (!safety.aave || twar.morpho >= twar.aave + minDifferentialRay)) {
      return { vaultType: 1, twarRate: twar.morpho }
    }
    return { vaultType: 0, twarRate: twar.aave }
  }
}

/** Aave is safe while its aToken supply is 0 or the aToken holds at least 10 % of it in USDC (§4.5). */
export function isAaveSafe(aTokenSupply: bigint, idleUsdc: bigint): boolean {
  return aTokenSupply === 0n || idleUsdc >= (aTokenSupply * 1000n) / 10_000n
}

/** Morpho is safe while `SHARE_UNIT` shares are worth at least {@link morphoPegAssets}. */
export function isMorphoSafe(morphoSharePrice: bigint): boolean {
  return morphoSharePrice >= morphoPegAssets
}
