import type { Address } from 'viem'
import type { Devnet } from '../src/devnet/startDevnet.js'

/** What every measurement gets from `bench/run.ts`. */
export type BenchContext = {
  /** A devnet with the vault deployed. */
  devnet: Devnet
  /**
   * The merchant wallet: registered, with a position, USDC and an allowance to the router, so that
   * every plan takes its full path.
   */
  wallet: Address
  /** `--smoke`: as few samples as give a valid report, so that `npm test` can run it. */
  smoke: boolean
  /** The built package (`dist/`): the bins and the SDK entry measured. */
  distDir: string
  /** Writes one progress line to stderr (stdout carries only the report). */
  progress: (message: string) => void
}

/** A measurement, or why there is none (a row that needs something this devnet lacks). */
export type Measured<T> = { value: T } | { value: null; notMeasured: string }

/**
 * The result of a measurement that cannot run yet.
 *
 * @param reason - What it needs, such as `needs createPaywall`.
 * @returns `{ value: null, notMeasured: reason }`.
 * @example
 * return notMeasured('needs createPaywall')
 */
export function notMeasured(reason: string): { value: null; notMeasured: string } {
  return { value: null, notMeasured: reason }
}
