import { type BenchContext, type Measured, notMeasured } from './context.js'

/** The paid-request p50 latency with the sweeper on, against plain x402 middleware (issue #11). */
export type PaidRequestLatency = {
  requests: number
  plainP50Ms: number
  withSweeperP50Ms: number
  /** `withSweeperP50Ms / plainP50Ms`; the budget is 1.05. */
  ratio: number
}

/**
 * Part B of issue #11 measures this: the same Express app behind plain x402 middleware and behind
 * `createPaywall` (sweeper on), the same facilitator, runs interleaved.
 *
 * @param _ctx - The devnet and sample count.
 * @returns Not measured yet.
 * @example
 * const latency = await measurePaidRequestLatency(ctx)
 */
export async function measurePaidRequestLatency(
  _ctx: BenchContext,
): Promise<Measured<PaidRequestLatency>> {
  return notMeasured(
    'needs createPaywall and the sweeper (issue #8); measured in part B of issue #11',
  )
}
