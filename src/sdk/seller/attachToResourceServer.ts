import type { VaultContext } from '../context.js'
import { VaultValidationError } from '../errors/classes.js'
import { resolveAccount } from '../internal/validate.js'
import { formatUsdc } from '../money.js'
import { SettlementRecord, type SweeperMemory } from '../sweep/settlementRecord.js'
import {
  type IdleDeposit,
  resolveSweepSettings,
  type SweepOptions,
  type SweepResult,
} from '../sweep/sweep.js'
import { type PauseChange, type SweeperProblem, sweepObservers } from '../sweep/sweepObservers.js'
import { SweepScheduler } from '../sweep/sweepScheduler.js'
import { resolveSweepTuning, type SweepTuningOptions } from '../sweep/sweepTuning.js'
import { type SweeperParts, sweepOnce, sweepWithRetries } from '../sweep/sweepWithRetries.js'
import { merchantSettlementOf, type SettlementHookContext } from './merchantSettlement.js'

/**
 * Anything with x402's after-settle hook: an `x402ResourceServer` of `@x402/core/server` (also
 * exported by `@x402/express` and `@x402/hono`). Only `onAfterSettle` is used.
 */
export type SettlementHookTarget = {
  onAfterSettle(hook: (context: SettlementHookContext) => Promise<void>): unknown
}

/**
 * The seller's sweeper options: the sweep's rule (`SweepOptions`), its timing, retries, memory and
 * receipt wait (`SweepTuningOptions`), and who hears of its deposits, problems and pauses.
 */
export type AttachToResourceServerOptions = SweepOptions &
  SweepTuningOptions & {
    /** Called after each deposit's receipt succeeds. */
    onIdleDeposit?: ((deposit: IdleDeposit) => unknown) | undefined
    /** Called for every problem; none of them stops the sweeper. Its own errors are ignored. */
    onNonFatalError?: ((problem: SweeperProblem) => unknown) | undefined
    /**
     * Called once when a sweep finds deposits paused on the vault (sales still settle; their USDC waits
     * in the wallet), and once when a later sweep finds them open again. The sweeper also logs both.
     */
    onPauseChange?: ((change: PauseChange) => unknown) | undefined
  }

/** The handle of an attached sweeper. */
export type Sweeper = {
  /**
   * Stops the timer and every later sweep, and finishes what sales asked for: a sweep still waiting
   * out its debounce runs now (one attempt, no retry backoff) instead of being dropped, after the
   * sweep in flight. Resolves once both have ended; a failure is reported to `onNonFatalError` with
   * `willRetry: false` (the USDC then waits in the wallet for the next sweep). Sales settled after
   * the call are not swept: call it once the server has stopped taking requests. The hook stays
   * registered (x402 cannot remove hooks) but does nothing from now on.
   */
  detach(): Promise<void>
  /**
   * Sweeps now, with the sweeper's own options (it takes none), in the same per-account queue as the
   * sweeper's sweeps (never at the same time as one). A deposit is reported to `onIdleDeposit` as well,
   * with the settlements it covers, and returned as the same `IdleDeposit`. One attempt: a failure
   * rejects. It still works after `detach()`. `vault.sweep(params)` differs: it takes its options as
   * arguments, and knows of no settlements and no observers.
   */
  sweep(): Promise<SweepResult>
  /**
   * The former name of `sweep()`, the same method, kept for this beta.
   *
   * @deprecated Use `sweep()`: a sweep makes an idle deposit.
   */
  depositIdle(): Promise<SweepResult>
  /** What the sweeper holds in memory, to check that it stays bounded (`maxTrackedSettlements`). */
  memory(): SweeperMemory
  /**
   * Resolves once no sweep is scheduled or running (at once when none is). After
   * `sweepWithinRequests()` it runs, within the caller's request, the sweep that the sales so far are
   * owed, and resolves once a sweep that started after them has ended: hand it to the request's
   * `waitUntil`, so the sweep its sale asked for completes after the response.
   */
  idle(): Promise<void>
  /**
   * For an edge runtime (Cloudflare Workers), where a request may not await or resolve another
   * request's promises or timers, and its work after the response lives only in its own `waitUntil`:
   * from now on a sale schedules no shared timer (and the `sweepIntervalMs` timer stops; use a Cron
   * Trigger), and each request's `idle()` sweeps within that request, one request at a time, earliest
   * first, without waiting on any other request's promise. Call it before the request's sale settles.
   * `x402-vault/hono`'s `createPaywall` calls it for every request with an execution context. It cannot
   * be undone.
   */
  sweepWithinRequests(): void
}

/**
 * Sweeps the merchant's idle USDC into the vault after x402 settlements.
 *
 * It registers an after-settle hook on the resource server. The hook returns at once; the sweep runs
 * in the background and adds nothing to the paid response's latency. Only settlements that paid this
 * merchant count (`merchantSettlementOf`: success, a transaction hash, scheme `exact` or `upto`, and
 * this wallet, network and USDC), each once (by transaction hash). A sweep starts `debounceMs` after
 * the last settlement of a burst; sweeps never overlap, and settlements that arrive during one lead to
 * exactly one follow-up sweep. Each sweep is `sweep` with these options: the rule sweeps the
 * balance, so money that arrived without a hook (a direct transfer, a settlement x402 gave up on) goes
 * in at the next sweep; `sweepIntervalMs` adds sweeps on a timer.
 *
 * Nothing here throws into x402: every problem goes to `onNonFatalError` with its phase. Failures that
 * can pass are retried with bounded exponential backoff; otherwise the money stays in the wallet until
 * a later sweep succeeds.
 *
 * A sweep that finds deposits paused on the vault says so once, to `onPauseChange` and in the log, and
 * again once a later sweep finds them open. On an edge runtime, see `sweepWithinRequests()`.
 *
 * @param ctx - The vault client, with a wallet client whose account sends the deposits.
 * @param resourceServer - An x402 resource server (anything with `onAfterSettle`).
 * @param options - `minIdleThreshold`, `reserve`, `wallet`, `onIdleDeposit`, `onNonFatalError`,
 *   `onPauseChange`, `sweepIntervalMs`, `debounceMs`, `maxDebounceMs`, `retry`,
 *   `maxTrackedSettlements`, `receiptTimeoutMs`.
 * @returns `{ detach(), sweep(), memory(), idle(), sweepWithinRequests() }`.
 * @throws {VaultValidationError} for bad options; {VaultConfigError} `WALLET_CLIENT_REQUIRED`,
 *   `ACCOUNT_REQUIRED` when the client cannot send.
 * @example
 * const sweeper = vault.attachToResourceServer(resourceServer, {
 *   minIdleThreshold: '10',
 *   reserve: '50',
 *   onIdleDeposit: ({ idleAmount, txHash }) => console.log(`deposited ${formatUsdc(idleAmount)} USDC: ${txHash}`),
 *   onNonFatalError: ({ phase, error }) => console.warn(`sweep ${phase}: ${error.message}`),
 * })
 * process.on('SIGTERM', () => sweeper.detach())
 */
export function attachToResourceServer(
  ctx: VaultContext,
  resourceServer: SettlementHookTarget,
  options: AttachToResourceServerOptions,
): Sweeper {
  if (typeof resourceServer?.onAfterSettle !== 'function') {
    throw new VaultValidationError(
      'resourceServer must be an x402 resource server (an object with onAfterSettle(hook)).',
      { code: 'INVALID_ARGUMENT', details: { field: 'resourceServer' } },
    )
  }
  // A sweeper sends deposits: a client that cannot send fails now, not at the first sale.
  resolveAccount(ctx, undefined)
  const settings = resolveSweepSettings(ctx, options)
  const tuning = resolveSweepTuning(options)
  const parts: SweeperParts = {
    ctx,
    settings,
    record: new SettlementRecord(tuning.maxTrackedSettlements),
    observers: sweepObservers(options),
    wait: tuning.wait,
  }
  const notePause = pauseReporter(parts)
  const scheduler = new SweepScheduler(async (signal, { withinRequest }) => {
    notePause(
      await sweepWithRetries(parts, tuning.retry, signal, withinRequest ? 'none' : 'account'),
    )
  }, tuning.timing)
  resourceServer.onAfterSettle(async (context) => {
    if (scheduler.detached) return
    try {
      const settlement = merchantSettlementOf(ctx, settings.wallet, context)
      if ('ignored' in settlement || !parts.record.add(settlement)) return
      scheduler.request()
    } catch (error) {
      parts.observers.problem('settlement-check', error, false)
    }
  })
  const sweep = async () => {
    const result = await sweepOnce(parts)
    notePause(result)
    return result
  }
  return {
    detach: () => scheduler.finish(),
    sweep,
    depositIdle: sweep,
    memory: () => parts.record.memory(),
    idle: () => scheduler.idle(),
    sweepWithinRequests: () => scheduler.sweepWithinRequests(),
  }
}

/**
 * Says when sweeps start finding deposits paused, and when they find them open again: once each, to
 * `onPauseChange` and in the log. Sales still settle meanwhile, so nothing else would tell the seller
 * that their revenue piles up in the wallet.
 */
function pauseReporter(parts: SweeperParts): (result: SweepResult | undefined) => void {
  let paused = false
  return (result) => {
    // A sweep that failed learned nothing of the vault.
    if (!result) return
    const now = !result.deposited && result.reason === 'paused'
    if (now === paused) return
    paused = now
    const { wallet, walletBalance, idleAmount } = result
    if (paused) {
      console.warn(
        `x402-vault: deposits into the vault are paused: ${formatUsdc(idleAmount)} USDC idle in ${wallet} waits there until they resume (sales still settle; withdrawals still work).`,
      )
    } else {
      console.warn(
        `x402-vault: deposits into the vault are open again: sweeping ${wallet} resumes.`,
      )
    }
    parts.observers.pauseChanged({ paused, wallet, walletBalance, idleAmount })
  }
}
