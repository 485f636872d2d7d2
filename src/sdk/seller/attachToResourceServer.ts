import type { Address, Hash } from 'viem'
import type { VaultContext } from '../context.js'
import { type VaultError, VaultRpcError, VaultValidationError } from '../errors/classes.js'
import { toVaultError } from '../errors/toVaultError.js'
import { sleep } from '../internal/sleep.js'
import { resolveSweepSettings, type SweepOptions, type SweepSettings } from '../internal/sweep.js'
import { resolveAccount } from '../internal/validate.js'
import { runExclusive } from '../internal/writeQueue.js'
import {
  type DepositIdleResult,
  type IdleDepositResult,
  type SweepProgress,
  type SweepStep,
  sweepIn,
} from './depositIdle.js'
import {
  type MerchantSettlement,
  merchantSettlementOf,
  type SettlementHookContext,
} from './merchantSettlement.js'

/**
 * Where in the seller flow a problem happened:
 * - `settlement-check`: an after-settle context could not be read;
 * - `balance-read`: reading the wallet's balance and the vault failed;
 * - `deposit`: the deposit was refused before it was sent, or sending it failed;
 * - `receipt`: waiting for the deposit's receipt failed, or the deposit reverted;
 * - `observer`: an `onIdleDeposit` callback threw or rejected.
 */
export type SweepPhase = 'settlement-check' | SweepStep | 'observer'

/** A problem the sweeper survived. */
export type SweeperProblem = {
  phase: SweepPhase
  /** What went wrong: a `VaultError`, so it has `code`, `retryable` and a short `message`. */
  error: VaultError
  /** Whether the sweeper tries again (after a backoff). Otherwise the money waits for a later sweep. */
  willRetry: boolean
}

/** A sweep's confirmed deposit. Amounts are USDC base units (show them with `formatUsdc`). */
export type IdleDeposit = {
  /** USDC deposited: all of the idle USDC above the reserve. */
  idleAmount: bigint
  /** USDC kept in the wallet (`reserve`). */
  reserveFloor: bigint
  txHash: Hash
  wallet: Address
  /** The wallet's USDC balance the sweep decided on, before the deposit. */
  walletBalance: bigint
  /**
   * The merchant settlements recorded since the previous deposit and before this sweep read the
   * balance (at most `maxTrackedSettlements`, the newest).
   */
  settlements: MerchantSettlement[]
}

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
   * Sweeps now with the sweeper's options, in the same per-account queue as its own sweeps (never at
   * the same time as one). Reports a deposit to `onIdleDeposit`; a failure rejects.
   */
  depositIdle(): Promise<DepositIdleResult>
  /** What the sweeper holds in memory, to check that it stays bounded (`maxTrackedSettlements`). */
  memory(): SweeperMemory
}

/** The sweeper's memory: the settlement hashes it remembers to drop duplicates, and its queue. */
export type SweeperMemory = {
  /** Settlement hashes remembered; at most `maxTrackedSettlements`. */
  trackedSettlements: number
  /** Settlements recorded and not yet covered by a deposit; at most `maxTrackedSettlements`. */
  pendingSettlements: number
  maxTrackedSettlements: number
}

/** The sweeper's tuning, checked, with its defaults. */
type Tuning = {
  debounceMs: number
  maxDebounceMs: number
  maxAttempts: number
  initialDelayMs: number
  maxDelayMs: number
  maxTrackedSettlements: number
  sweepIntervalMs: number | undefined
}

/**
 * Deposit-step failures that a new attempt from a fresh read settles. `INSUFFICIENT_USDC`: the balance
 * moved since the sweep read it. `SEND_OUTCOME_UNKNOWN`: the send may have reached the node; not
 * retryable for a caller who would send the same thing again, but a sweep reads the balance and its
 * nonce again, and the nonce is the one the lost send used until that send is mined. So at most one of
 * the two deposits can be mined, and if the first was, the read finds its USDC gone.
 */
const redoFromReadCodes = new Set(['INSUFFICIENT_USDC', 'SEND_OUTCOME_UNKNOWN'])
/** Receipt-step failures that waiting again cannot change. */
const finalReceiptCodes = new Set(['TRANSACTION_REVERTED', 'EVENT_NOT_FOUND'])

/**
 * Sweeps the merchant's idle USDC into the vault after x402 settlements (PRODUCT.md §5.2).
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
 * @returns `{ detach(), depositIdle() }`.
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
  const sweeper = new SettlementSweeper(
    ctx,
    resolveSweepSettings(ctx, options),
    resolveTuning(options),
    options,
  )
  resourceServer.onAfterSettle(async (context) => sweeper.onSettlement(context))
  return {
    detach: () => sweeper.detach(),
    depositIdle: () => sweeper.depositNow(),
    memory: () => sweeper.memory(),
  }
}

class SettlementSweeper {
  private detached = false
  private readonly stop = new AbortController()
  /** Settlement hashes seen, oldest first (a Set keeps insertion order). */
  private readonly seen = new Set<string>()
  /** Settlements recorded since the last deposit and not yet taken by a sweep, oldest first. */
  private pending: MerchantSettlement[] = []
  private running: Promise<void> | undefined
  private followUp = false
  private debounce: ReturnType<typeof setTimeout> | undefined
  private burstStartedAt: number | undefined
  private readonly interval: ReturnType<typeof setInterval> | undefined

  constructor(
    private readonly ctx: VaultContext,
    private readonly settings: SweepSettings,
    private readonly tuning: Tuning,
    private readonly observers: Pick<
      AttachToResourceServerOptions,
      'onIdleDeposit' | 'onNonFatalError'
    >,
  ) {
    if (tuning.sweepIntervalMs !== undefined) {
      this.interval = setInterval(() => this.onTimer(), tuning.sweepIntervalMs)
      // The timer must not keep a process alive that has nothing else to do.
      this.interval.unref()
    }
  }

  /** The after-settle hook's body: records a merchant settlement and schedules a sweep. Never throws. */
  onSettlement(context: SettlementHookContext): void {
    if (this.detached) return
    try {
      const settlement = merchantSettlementOf(this.ctx, this.settings.wallet, context)
      if ('ignored' in settlement || !this.remember(settlement.txHash)) return
      this.pending.push(settlement)
      if (this.pending.length > this.tuning.maxTrackedSettlements) this.pending.shift()
      this.schedule()
    } catch (error) {
      this.report('settlement-check', error, false)
    }
  }

  detach(): Promise<void> {
    if (!this.detached) {
      this.detached = true
      clearInterval(this.interval)
      clearTimeout(this.debounce)
      this.stop.abort()
    }
    return this.running ?? Promise.resolve()
  }

  memory(): SweeperMemory {
    return {
      trackedSettlements: this.seen.size,
      pendingSettlements: this.pending.length,
      maxTrackedSettlements: this.tuning.maxTrackedSettlements,
    }
  }

  /** A manual sweep: one attempt in the write queue; its failure rejects. */
  async depositNow(): Promise<DepositIdleResult> {
    let taken: MerchantSettlement[] = []
    try {
      const result = await runExclusive(this.ctx, undefined, (slot) => {
        taken = this.takePending()
        return sweepIn(slot, this.ctx, this.settings)
      })
      if (result.deposited) {
        this.announce(result, taken)
        taken = []
      }
      return result
    } finally {
      this.putBack(taken)
    }
  }

  /** Remembers a settlement hash; `false` when it was seen before. The oldest are forgotten first. */
  private remember(txHash: string): boolean {
    if (this.seen.has(txHash)) return false
    this.seen.add(txHash)
    if (this.seen.size > this.tuning.maxTrackedSettlements) {
      this.seen.delete(this.seen.values().next().value as string)
    }
    return true
  }

  /** Debounces a burst into one sweep; during a sweep, asks for one follow-up instead. */
  private schedule(): void {
    if (this.detached) return
    if (this.running) {
      this.followUp = true
      return
    }
    const now = Date.now()
    this.burstStartedAt ??= now
    const untilMax = this.burstStartedAt + this.tuning.maxDebounceMs - now
    clearTimeout(this.debounce)
    this.debounce = setTimeout(
      () => this.start(),
      Math.max(0, Math.min(this.tuning.debounceMs, untilMax)),
    )
  }

  /** A timer tick sweeps unless a sweep is running or about to. */
  private onTimer(): void {
    if (!this.running && this.debounce === undefined) this.start()
  }

  private start(): void {
    clearTimeout(this.debounce)
    this.debounce = undefined
    this.burstStartedAt = undefined
    if (this.detached || this.running) return
    this.running = this.sweepWithRetries().finally(() => {
      this.running = undefined
      if (this.followUp) {
        this.followUp = false
        this.schedule()
      }
    })
  }

  /** One sweep: attempts until one succeeds, a failure is final, or the sweeper is detached. */
  private async sweepWithRetries(): Promise<void> {
    // Kept across attempts: after a failed receipt wait, the next attempt waits for it again.
    const progress: SweepProgress = { step: 'balance-read', sent: undefined }
    // The settlements this sweep covers; back to `pending` unless a deposit is announced.
    let taken: MerchantSettlement[] = []
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          // Read → decide → deposit → receipt, as one unit in the account's write queue.
          const result = await runExclusive(this.ctx, undefined, (slot) => {
            if (!progress.sent) {
              this.putBack(taken)
              taken = this.takePending()
            }
            return sweepIn(slot, this.ctx, this.settings, progress)
          })
          if (result.deposited) {
            this.announce(result, taken)
            taken = []
          }
          return
        } catch (error) {
          const vaultError = toVaultError(error, { addresses: this.ctx.addresses })
          const willRetry =
            attempt < this.tuning.maxAttempts &&
            !this.detached &&
            retryable(progress.step, vaultError)
          this.report(progress.step, vaultError, willRetry)
          if (!willRetry) return
          await sleep(this.backoff(attempt, vaultError), this.stop.signal)
        }
      }
    } catch {
      // Detached during a backoff: the sweep ends here.
    } finally {
      this.putBack(taken)
    }
  }

  private backoff(attempt: number, error: VaultError): number {
    const { initialDelayMs, maxDelayMs } = this.tuning
    const exponential = initialDelayMs * 2 ** (attempt - 1)
    const asked = error instanceof VaultRpcError ? (error.retryAfterMs ?? 0) : 0
    return Math.min(maxDelayMs, Math.max(exponential, asked))
  }

  private takePending(): MerchantSettlement[] {
    const taken = this.pending
    this.pending = []
    return taken
  }

  /** Returns settlements a sweep took but did not deposit, ahead of newer ones. */
  private putBack(taken: MerchantSettlement[]): void {
    if (taken.length === 0) return
    this.pending = [...taken, ...this.pending].slice(-this.tuning.maxTrackedSettlements)
  }

  private announce(result: IdleDepositResult, settlements: MerchantSettlement[]): void {
    const { onIdleDeposit } = this.observers
    if (!onIdleDeposit) return
    const deposit: IdleDeposit = {
      idleAmount: result.amount,
      reserveFloor: result.reserveFloor,
      txHash: result.txHash,
      wallet: result.wallet,
      walletBalance: result.balance,
      settlements,
    }
    // Not awaited: a slow observer must not hold up the sweeper.
    void Promise.resolve()
      .then(() => onIdleDeposit(deposit))
      .catch((error: unknown) => this.report('observer', error, false))
  }

  private report(phase: SweepPhase, error: unknown, willRetry: boolean): void {
    const { onNonFatalError } = this.observers
    if (!onNonFatalError) return
    const problem: SweeperProblem = {
      phase,
      error: toVaultError(error, phase === 'observer' ? { action: 'onIdleDeposit' } : {}),
      willRetry,
    }
    // Its own failure has nowhere to go: reporting it to itself could loop.
    void Promise.resolve()
      .then(() => onNonFatalError(problem))
      .catch(() => {})
  }
}

/** Whether a failed attempt can succeed when tried again. */
function retryable(step: SweepStep, error: VaultError): boolean {
  if (step === 'receipt') return !finalReceiptCodes.has(error.code)
  // The RPC may serve the vault's chain again (a node swapped behind a load balancer); the read checks.
  if (error.code === 'CHAIN_MISMATCH') return true
  return error.retryable || (step === 'deposit' && redoFromReadCodes.has(error.code))
}

function resolveTuning(options: AttachToResourceServerOptions): Tuning {
  const retry = options.retry ?? {}
  return {
    debounceMs: whole(options.debounceMs, 'debounceMs', 250, 0),
    maxDebounceMs: whole(options.maxDebounceMs, 'maxDebounceMs', 5_000, 0),
    maxAttempts: whole(retry.maxAttempts, 'retry.maxAttempts', 4, 1),
    initialDelayMs: whole(retry.initialDelayMs, 'retry.initialDelayMs', 500, 0),
    maxDelayMs: whole(retry.maxDelayMs, 'retry.maxDelayMs', 8_000, 0),
    maxTrackedSettlements: whole(options.maxTrackedSettlements, 'maxTrackedSettlements', 10_000, 1),
    sweepIntervalMs:
      options.sweepIntervalMs === undefined
        ? undefined
        : whole(options.sweepIntervalMs, 'sweepIntervalMs', 0, 1),
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
