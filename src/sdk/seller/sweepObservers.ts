import type { VaultError } from '../errors/classes.js'
import { toVaultError } from '../errors/toVaultError.js'
import type { IdleDeposit, SweepStep } from './sweep.js'

/**
 * Where in the seller flow a problem happened:
 * - `settlement-check`: an after-settle context could not be read, or (`createPaywall`) the chain could
 *   not be read to check a facilitator's success;
 * - `balance-read`: reading the wallet's balance and the vault failed;
 * - `deposit`: the deposit was refused before it was sent, or sending it failed;
 * - `receipt`: waiting for the deposit's receipt failed, or the deposit reverted;
 * - `observer`: an `onIdleDeposit` callback threw or rejected;
 * - `facilitator`: `createPaywall`'s x402 facilitator failed, timed out or answered something the chain
 *   does not bear out on a buyer's payment, or its settlement is pending (the message says what the
 *   buyer was answered); no sweep is involved;
 * - `payment`: `createPaywall` refused a buyer's payment for a reason on the buyer's side that the buyer
 *   may not see how to fix (such as a missing Permit2 approval); reported once per buyer.
 */
export type SweepPhase = 'settlement-check' | SweepStep | 'observer' | 'facilitator' | 'payment'

/** A problem the sweeper survived. */
export type SweeperProblem = {
  phase: SweepPhase
  /** What went wrong: a `VaultError`, so it has `code`, `retryable` and a short `message`. */
  error: VaultError
  /** Whether the sweeper tries again (after a backoff). Otherwise the money waits for a later sweep. */
  willRetry: boolean
}

/** The callbacks that watch a sweeper (as `attachToResourceServer` takes them). */
type SweepObserverCallbacks = {
  /** Called after each deposit's receipt succeeds. */
  onIdleDeposit?: ((deposit: IdleDeposit) => unknown) | undefined
  /** Called for every problem; none of them stops the sweeper. Its own errors are ignored. */
  onNonFatalError?: ((problem: SweeperProblem) => unknown) | undefined
}

/** Reports to a sweeper's callbacks. Neither call waits for a callback, and neither throws. */
export type SweepObservers = {
  /** Hands a confirmed deposit to `onIdleDeposit`; a callback that throws or rejects is reported as an `observer` problem. */
  deposited(deposit: IdleDeposit): void
  /** Hands a problem to `onNonFatalError`; the callback's own failure is dropped. */
  problem(phase: SweepPhase, error: unknown, willRetry: boolean): void
}

/**
 * Wraps a sweeper's callbacks so that they can never hold it up or break it: each is called in a
 * later microtask, never awaited, and its failure never reaches the sweeper.
 *
 * @param callbacks - `onIdleDeposit`, `onNonFatalError`; both optional.
 * @returns `deposited(deposit)` and `problem(phase, error, willRetry)`.
 * @example
 * const observers = sweepObservers({ onNonFatalError: ({ phase, error }) => console.warn(phase, error.message) })
 * observers.problem('balance-read', error, true)
 */
export function sweepObservers(callbacks: SweepObserverCallbacks): SweepObservers {
  const problem = (phase: SweepPhase, error: unknown, willRetry: boolean) => {
    const { onNonFatalError } = callbacks
    if (!onNonFatalError) return
    const reported: SweeperProblem = {
      phase,
      error: toVaultError(error, phase === 'observer' ? { action: 'onIdleDeposit' } : {}),
      willRetry,
    }
    // Its own failure has nowhere to go: reporting it to itself could loop.
    void Promise.resolve()
      .then(() => onNonFatalError(reported))
      .catch(() => {})
  }
  const deposited = (deposit: IdleDeposit) => {
    const { onIdleDeposit } = callbacks
    if (!onIdleDeposit) return
    // Not awaited: a slow observer must not hold up the sweeper.
    void Promise.resolve()
      .then(() => onIdleDeposit(deposit))
      .catch((error: unknown) => problem('observer', error, false))
  }
  return { deposited, problem }
}
