import type { VaultContext } from '../context.js'
import { VaultValidationError } from '../errors/classes.js'
import { toVaultError } from '../errors/toVaultError.js'
import { sleep } from '../internal/sleep.js'
import { resolveAccount } from '../internal/validate.js'
import { runExclusive } from '../internal/writeQueue.js'
import {
  type MerchantSettlement,
  merchantSettlementOf,
  type SettlementHookContext,
} from './merchantSettlement.js'
import { SettlementRecord, type SweeperMemory } from './settlementRecord.js'
import {
  type IdleDeposit,
  resolveSweepSettings,
  type SweepOptions,
  type SweepProgress,
  type SweepResult,
  type SweepSettings,
  sweepIn,
} from './sweep.js'
import { type SweeperProblem, type SweepObservers, sweepObservers } from './sweepObservers.js'
import { type SweepRetryPolicy, sweepRetryDelay } from './sweepRetry.js'
import { SweepScheduler, type SweepTiming } from './sweepScheduler.js'

/**
 * Anything with x402's after-settle hook: an `x402ResourceServer` of `@x402/core/server` (also
 * exported by `@x402/express` and `@x402/hono`). Only `onAfterSettle` is used.
 */
export type SettlementHookTarget = {
  onAfterSettle(hook: (context: SettlementHookContext) => Promise<void>): unknown
}

export type AttachToResourceServerOptions = SweepOptions & {
  /** Called after each deposit's receipt succeeds. */
  onIdleDeposit?: ((deposit: IdleDeposit) => unknown) | undefined
  /** Called for every problem; none of them stops the sweeper. Its own errors are ignored. */
  onNonFatalError?: ((problem: SweeperProblem) => unknown) | undefined
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
}

/** The handle of an attached sweeper. */
export type Sweeper = {
  /**
   * Stops the timer and every future sweep, and resolves once the sweep in flight (if any) has ended.
   * The hook stays registered (x402 cannot remove hooks) but does nothing from now on.
   */
  detach(): Promise<void>
  /**
   * Sweeps now, with the sweeper's own options (it takes none), in the same per-account queue as the
   * sweeper's sweeps (never at the same time as one). A deposit is reported to `onIdleDeposit` as well,
   * with the settlements it covers, and returned as the same `IdleDeposit`. One attempt: a failure
   * rejects. It still works after `detach()`. `vault.depositIdle(params)` differs: it takes its
   * options as arguments, and knows of no settlements and no observers.
   */
  depositIdle(): Promise<SweepResult>
  /** What the sweeper holds in memory, to check that it stays bounded (`maxTrackedSettlements`). */
  memory(): SweeperMemory
}

/** What a sweeper is made of: the sweep it makes, the settlements it covers, and its observers. */
type SweeperParts = {
  ctx: VaultContext
  settings: SweepSettings
  record: SettlementRecord
  observers: SweepObservers
}

/**
 * Sweeps the merchant's idle USDC into the vault after x402 settlements.
 *
 * It registers an after-settle hook on the resource server. The hook returns at once; the sweep runs
 * in the background and adds nothing to the paid response's latency. Only settlements that paid this
 * merchant count (`merchantSettlementOf`: success, a transaction hash, scheme `exact` or `upto`, and
 * this wallet, network and USDC), each once (by transaction hash). A sweep starts `debounceMs` after
 * the last settlement of a burst; sweeps never overlap, and settlements that arrive during one lead to
 * exactly one follow-up sweep. Each sweep is `depositIdle` with these options: the rule sweeps the
 * balance, so money that arrived without a hook (a direct transfer, a settlement x402 gave up on) goes
 * in at the next sweep; `sweepIntervalMs` adds sweeps on a timer.
 *
 * Nothing here throws into x402: every problem goes to `onNonFatalError` with its phase. Failures that
 * can pass are retried with bounded exponential backoff; otherwise the money stays in the wallet until
 * a later sweep succeeds.
 *
 * @param ctx - The vault client, with a wallet client whose account sends the deposits.
 * @param resourceServer - An x402 resource server (anything with `onAfterSettle`).
 * @param options - `minIdleThreshold`, `reserve`, `wallet`, `onIdleDeposit`, `onNonFatalError`,
 *   `sweepIntervalMs`, `debounceMs`, `maxDebounceMs`, `retry`, `maxTrackedSettlements`.
 * @returns `{ detach(), depositIdle(), memory() }`.
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
  const tuning = resolveTuning(options)
  const parts: SweeperParts = {
    ctx,
    settings,
    record: new SettlementRecord(tuning.maxTrackedSettlements),
    observers: sweepObservers(options),
  }
  const scheduler = new SweepScheduler(
    (signal) => sweepWithRetries(parts, tuning.retry, signal),
    tuning.timing,
  )
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
  return {
    detach: () => scheduler.detach(),
    depositIdle: () => sweepOnce(parts),
    memory: () => parts.record.memory(),
  }
}

/** A manual sweep: one attempt in the write queue, covering the settlements pending; its failure rejects. */
async function sweepOnce({ ctx, settings, record, observers }: SweeperParts): Promise<SweepResult> {
  let taken: MerchantSettlement[] = []
  try {
    const result = await runExclusive(ctx, undefined, (slot) => {
      taken = record.take()
      return sweepIn(slot, ctx, settings)
    })
    if (!result.deposited) return result
    const deposit = { ...result, settlements: taken }
    taken = []
    observers.deposited(deposit)
    return deposit
  } finally {
    record.putBack(taken)
  }
}

/**
 * A scheduled sweep: attempts until one succeeds, the retry policy says stop, or `signal` aborts (the
 * sweeper was detached). Every failure is reported; nothing rejects.
 */
async function sweepWithRetries(
  { ctx, settings, record, observers }: SweeperParts,
  retry: SweepRetryPolicy,
  signal: AbortSignal,
): Promise<void> {
  // Kept across attempts: after a failed receipt wait, the next attempt waits for it again.
  const progress: SweepProgress = { step: 'balance-read', sent: undefined }
  // The settlements this sweep covers; back to the record unless a deposit is reported.
  let taken: MerchantSettlement[] = []
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        // Read → decide → deposit → receipt, as one unit in the account's write queue.
        const result = await runExclusive(ctx, undefined, (slot) => {
          if (!progress.sent) {
            record.putBack(taken)
            taken = record.take()
          }
          return sweepIn(slot, ctx, settings, progress)
        })
        if (result.deposited) {
          observers.deposited({ ...result, settlements: taken })
          taken = []
        }
        return
      } catch (error) {
        const vaultError = toVaultError(error, { addresses: ctx.addresses })
        const delay = signal.aborted
          ? undefined
          : sweepRetryDelay(retry, attempt, progress.step, vaultError)
        observers.problem(progress.step, vaultError, delay !== undefined)
        if (delay === undefined) return
        await sleep(delay, signal)
      }
    }
  } catch {
    // Detached during a backoff: the sweep ends here.
  } finally {
    record.putBack(taken)
  }
}

/** The sweeper's tuning, checked, with its defaults. */
function resolveTuning(options: AttachToResourceServerOptions): {
  timing: SweepTiming
  retry: SweepRetryPolicy
  maxTrackedSettlements: number
} {
  const retry = options.retry ?? {}
  const debounceMs = whole(options.debounceMs, 'debounceMs', 250, 0)
  const maxDebounceMs = whole(options.maxDebounceMs, 'maxDebounceMs', 5_000, 0)
  const retryPolicy = {
    maxAttempts: whole(retry.maxAttempts, 'retry.maxAttempts', 4, 1),
    initialDelayMs: whole(retry.initialDelayMs, 'retry.initialDelayMs', 500, 0),
    maxDelayMs: whole(retry.maxDelayMs, 'retry.maxDelayMs', 8_000, 0),
  }
  const maxTrackedSettlements = whole(
    options.maxTrackedSettlements,
    'maxTrackedSettlements',
    10_000,
    1,
  )
  const intervalMs =
    options.sweepIntervalMs === undefined
      ? undefined
      : whole(options.sweepIntervalMs, 'sweepIntervalMs', 0, 1)
  return {
    timing: { debounceMs, maxDebounceMs, intervalMs },
    retry: retryPolicy,
    maxTrackedSettlements,
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
