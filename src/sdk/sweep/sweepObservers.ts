import type { Address } from 'viem'
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
 * - `observer`: an `onIdleDeposit` or `onPauseChange` callback threw or rejected;
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

/**
 * Deposits into the vault were found paused, or open again: what `onPauseChange` receives. While they
 * are paused, sales still settle and their USDC waits in the wallet; withdrawals still work.
 */
export type PauseChange = {
  /** `true` once a sweep finds deposits paused; `false` once a later sweep finds them open again. */
  paused: boolean
  /** The merchant wallet. */
  wallet: Address
  /** Its USDC balance at that sweep (base units). */
  walletBalance: bigint
  /** The idle USDC at that sweep: what waits while paused, what the sweep deposits once open. */
  idleAmount: bigint
}

/** The callbacks that watch a sweeper (as `attachToResourceServer` takes them). */
type SweepObserverCallbacks = {
  /** Called after each deposit's receipt succeeds. */
  onIdleDeposit?: ((deposit: IdleDeposit) => unknown) | undefined
  /** Called for every problem; none of them stops the sweeper. Its own errors are ignored. */
  onNonFatalError?: ((problem: SweeperProblem) => unknown) | undefined
  /** Called when a sweep finds deposits paused, and when a later one finds them open again. */
  onPauseChange?: ((change: PauseChange) => unknown) | undefined
}

/** Reports to a sweeper's callbacks. No call waits for a callback, and none throws. */
export type SweepObservers = {
  /** Hands a confirmed deposit to `onIdleDeposit`; a callback that throws or rejects is reported as an `observer` problem. */
  deposited(deposit: IdleDeposit): void
  /** Hands a problem to `onNonFatalError`; the callback's own failure is dropped. */
  problem(phase: SweepPhase, error: unknown, willRetry: boolean): void
  /** Hands a pause's start or end to `onPauseChange`; a callback that fails is an `observer` problem. */
  pauseChanged(change: PauseChange): void
}

/**
 * Wraps a sweeper's callbacks so that they can never hold it up or break it: each is called in a
 * later microtask, never awaited, and its failure never reaches the sweeper.
 *
 * @param callbacks - `onIdleDeposit`, `onNonFatalError`, `onPauseChange`; all optional.
 * @returns `deposited(deposit)`, `problem(phase, error, willRetry)` and `pauseChanged(change)`.
 * @example
 * const observers = sweepObservers({ onNonFatalError: ({ phase, error }) => console.warn(phase, error.message) })
 * observers.problem('balance-read', error, true)
 */
export function sweepObservers(callbacks: SweepObserverCallbacks): SweepObservers {
  const report = (phase: SweepPhase, error: VaultError, willRetry: boolean) => {
    const { onNonFatalError } = callbacks
    if (!onNonFatalError) return
    const reported: SweeperProblem = { phase, error, willRetry }
    // Its own failure has nowhere to go: reporting it to itself could loop.
    void Promise.resolve()
      .then(() => onNonFatalError(reported))
      .catch(() => {})
  }
  const problem = (phase: SweepPhase, error: unknown, willRetry: boolean) =>
    report(phase, toVaultError(error), willRetry)
  /** Calls an observer later, never awaited: a slow observer must not hold up the sweeper. */
  const notify = <value>(
    name: 'onIdleDeposit' | 'onPauseChange',
    callback: ((value: value) => unknown) | undefined,
    value: value,
  ) => {
    if (!callback) return
    void Promise.resolve()
      .then(() => callback(value))
      .catch((error: unknown) => report('observer', toVaultError(error, { action: name }), false))
  }
  return {
    deposited: (deposit) => notify('onIdleDeposit', callbacks.onIdleDeposit, deposit),
    problem,
    pauseChanged: (change) => notify('onPauseChange', callbacks.onPauseChange, change),
  }
}
