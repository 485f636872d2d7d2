import { type BenchContext, type Measured, notMeasured } from './context.js'

/** The transactions and gas of one sweep (issue #11). */
export type Sweep = {
  /** The budget is 1 when the USDC supports EIP-2612 (permit and deposit in one transaction). */
  txPerSweep: number
  gasPerSweep: number
}

/**
 * Part B of issue #11 measures this: one sweep of the seller sweeper on the devnet, whose USDC
 * supports EIP-2612.
 *
 * @param _ctx - The devnet.
 * @returns Not measured yet.
 * @example
 * const sweep = await measureSweep(ctx)
 */
export async function measureSweep(_ctx: BenchContext): Promise<Measured<Sweep>> {
  return notMeasured('needs the seller sweeper (issue #8); measured in part B of issue #11')
}
