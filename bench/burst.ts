import { type BenchContext, type Measured, notMeasured } from './context.js'

/** 50 concurrent paid requests, then the accounting in base units (issue #11). */
export type Burst = {
  settlements: number
  /** The budget is at most 3. */
  depositTxs: number
  failedDeposits: number
  /** USDC base units neither in the vault nor in the merchant's wallet, as a decimal string. */
  unaccountedUnits: string
}

/**
 * Part B of issue #11 measures this: 50 concurrent paid requests through `createPaywall`, then the
 * deposits and every unit accounted for.
 *
 * @param _ctx - The devnet and sample count.
 * @returns Not measured yet.
 * @example
 * const burst = await measureBurst(ctx)
 */
export async function measureBurst(_ctx: BenchContext): Promise<Measured<Burst>> {
  return notMeasured(
    'needs createPaywall and the sweeper (issue #8); measured in part B of issue #11',
  )
}
