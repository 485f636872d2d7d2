import { VaultValidationError } from '../errors/classes.js'
import type { WaitOptions } from '../transactions.js'
import type { SweepRetryPolicy } from './sweepRetry.js'
import type { SweepTiming } from './sweepScheduler.js'

/**
 * The options of a sweeper's timing, retries, memory and receipt wait, as given: the seller's
 * `AttachToResourceServerOptions` takes them as they are, and the buyer's and the watch sweeper's options
 * reuse them; this is the shape they share, so the sweep needs nothing of theirs.
 */
export type SweepTuningOptions = {
  /** Also sweep on a timer, every this many ms: money that arrived without a sale waits no longer. */
  sweepIntervalMs?: number | undefined
  /** A sweep starts this long after the last settlement of a burst. Default 250. */
  debounceMs?: number | undefined
  /** …and at the latest this long after the first one. Default 5 000. */
  maxDebounceMs?: number | undefined
  /** Retries of a sweep that failed for a reason that can pass (RPC trouble, a nonce collision). */
  retry?:
    | {
        /** Attempts per sweep, the first included. Default 4. */
        maxAttempts?: number | undefined
        /** The wait before the first retry, doubled for each next one. Default 500. */
        initialDelayMs?: number | undefined
        /** The longest wait between attempts. Default 8 000. */
        maxDelayMs?: number | undefined
      }
    | undefined
  /** How many settlement transaction hashes are remembered to drop duplicates. Default 10 000. */
  maxTrackedSettlements?: number | undefined
  /**
   * Give up waiting for a deposit's receipt after this many ms (the next attempt waits for the same
   * transaction again). Default: viem's (180 s). On an edge runtime keep the whole sweep inside the
   * time `waitUntil` allows (30 s on Cloudflare Workers), such as 20 000.
   */
  receiptTimeoutMs?: number | undefined
}

/** {@link SweepTuningOptions}, checked, with their defaults. */
export type SweepTuning = {
  timing: SweepTiming
  retry: SweepRetryPolicy
  maxTrackedSettlements: number
  wait: WaitOptions
}

/**
 * Checks a sweeper's tuning and fills in the defaults: debounce 250 ms (at most 5 000 ms after a
 * burst's first request), no interval, 4 attempts from 500 ms doubled up to 8 000 ms, 10 000
 * settlements remembered, viem's receipt timeout.
 *
 * @param options - The tuning options, as given.
 * @returns The tuning.
 * @throws {VaultValidationError} `INVALID_ARGUMENT` naming the option that is not a whole number in range.
 */
export function resolveSweepTuning(options: SweepTuningOptions): SweepTuning {
  const retry = options.retry ?? {}
  const intervalMs =
    options.sweepIntervalMs === undefined
      ? undefined
      : whole(options.sweepIntervalMs, 'sweepIntervalMs', 0, 1)
  const receiptTimeoutMs =
    options.receiptTimeoutMs === undefined
      ? undefined
      : whole(options.receiptTimeoutMs, 'receiptTimeoutMs', 0, 1)
  return {
    timing: {
      debounceMs: whole(options.debounceMs, 'debounceMs', 250, 0),
      maxDebounceMs: whole(options.maxDebounceMs, 'maxDebounceMs', 5_000, 0),
      intervalMs,
    },
    retry: {
      maxAttempts: whole(retry.maxAttempts, 'retry.maxAttempts', 4, 1),
      initialDelayMs: whole(retry.initialDelayMs, 'retry.initialDelayMs', 500, 0),
      maxDelayMs: whole(retry.maxDelayMs, 'retry.maxDelayMs', 8_000, 0),
    },
    maxTrackedSettlements: whole(options.maxTrackedSettlements, 'maxTrackedSettlements', 10_000, 1),
    wait: receiptTimeoutMs === undefined ? {} : { timeout: receiptTimeoutMs },
  }
}

/** Checks an integer option of at least `min`; `undefined` gives the default. */
function whole(value: unknown, name: string, fallback: number, min: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new VaultValidationError(`${name} must be a whole number of at least ${min}.`, {
      code: 'INVALID_ARGUMENT',
      details: { field: name },
    })
  }
  return value
}
