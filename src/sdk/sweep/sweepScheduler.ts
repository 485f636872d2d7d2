import { sleep } from '../internal/sleep.js'

/** When a {@link SweepScheduler} runs sweeps, in ms. */
export type SweepTiming = {
  /** A sweep starts this long after the last request of a burst… */
  debounceMs: number
  /** …and at the latest this long after the first one. */
  maxDebounceMs: number
  /** Also sweep on a timer, every this many ms; `undefined` for no timer. */
  intervalMs: number | undefined
}

/** Where a scheduled sweep runs. */
export type ScheduledSweepPlace = {
  /**
   * `true` when a request runs it within its own context, on an edge runtime (see
   * {@link SweepScheduler.sweepWithinRequests}): it must then wait on no promise another request
   * created, so it keeps out of the account's write queue (the scheduler runs one at a time).
   */
  withinRequest: boolean
}

/**
 * The sweep a scheduler runs. It handles and reports its own failures, so it never rejects. `signal`
 * aborts when the scheduler is detached, to cut short a wait inside the sweep (a retry's backoff).
 */
export type ScheduledSweep = (signal: AbortSignal, place: ScheduledSweepPlace) => Promise<void>

/** Within requests, how often a request waiting for its turn looks again. */
const turnPollMs = 50
/** Within requests, a waiting request that has not looked for this long is gone (cancelled). */
const waiterGoneAfterMs = 2_000
/**
 * Within requests, a sweep still marked running this long after it started was cancelled with its
 * request (workerd ends `waitUntil` work 30 s after the response): the next request sweeps anyway.
 */
const sweepAbandonedAfterMs = 60_000

/**
 * Decides when sweeps run, and runs them one at a time. It knows nothing of what asks for a sweep (an
 * x402 settlement, a USDC inflow seen in the chain's logs, a timer) nor of what a sweep does: it is
 * given the sweep to run.
 *
 * - `request()` debounces a burst of requests into one sweep: it starts `debounceMs` after the last
 *   request, and at the latest `maxDebounceMs` after the first.
 * - Single flight: never two sweeps at once. Requests during a sweep lead to exactly one follow-up
 *   sweep, scheduled (debounced) when the sweep ends.
 * - With `intervalMs`, a timer also sweeps, unless a sweep is running or scheduled. It does not keep
 *   the process alive.
 * - `detach()` stops the timers and every later sweep (a scheduled one is dropped), aborts the
 *   running sweep's signal, and resolves once that sweep has ended. `finish()` stops them too, but
 *   runs a scheduled sweep (or a follow-up) at once instead of dropping it.
 * - `idle()` resolves once no sweep is scheduled or running.
 * - `sweepWithinRequests()`, for an edge runtime whose requests may not share promises or timers
 *   (Cloudflare Workers): from then on `request()` only counts, and each request's `idle()` runs,
 *   within that request and on its own timers, the sweep its requests are owed. Still one at a time.
 */
export class SweepScheduler {
  private stopped = false
  private readonly stop = new AbortController()
  private running: Promise<void> | undefined
  private followUp = false
  private debounce: ReturnType<typeof setTimeout> | undefined
  private burstStartedAt: number | undefined
  private readonly interval: ReturnType<typeof setInterval> | undefined
  /** Resolves the promise `idle()` handed out, once nothing is scheduled or running. */
  private idleWaiters: (() => void)[] = []
  /** `finish()`'s work: the sweep in flight, then the one requests had scheduled. */
  private finishing: Promise<void> | undefined

  // What requests within an edge runtime share: plain data only, never a promise or a timer.
  private withinRequests = false
  /** Requests so far. */
  private asked = 0
  /** Every request up to this count has been covered: a sweep that started after it has ended. */
  private covered = 0
  /** The sweep running now, wherever it runs: the requests it covers, and when it started. */
  private current: { covers: number; startedAt: number } | undefined
  /** Within requests, the requests waiting for their turn, by ticket: when each last looked. */
  private readonly waiting = new Map<number, number>()
  private tickets = 0

  /**
   * @param sweep - The sweep to run.
   * @param timing - `debounceMs`, `maxDebounceMs`, `intervalMs` (checked by the caller).
   */
  constructor(
    private readonly sweep: ScheduledSweep,
    private readonly timing: SweepTiming,
  ) {
    if (timing.intervalMs !== undefined) {
      this.interval = setInterval(() => this.onTick(), timing.intervalMs)
      // The timer must not keep a process alive that has nothing else to do. (Edge runtimes' timers
      // are plain numbers, without `unref`.)
      ;(this.interval as { unref?: () => void }).unref?.()
    }
  }

  /** Whether `detach()` or `finish()` was called: requests are then ignored. */
  get detached(): boolean {
    return this.stopped
  }

  /**
   * Asks for a sweep: debounced; during a sweep, one follow-up instead. Within requests, it only
   * counts: the request's `idle()` sweeps. Ignored once detached.
   */
  request(): void {
    if (this.stopped) return
    this.asked++
    if (this.withinRequests) return
    if (this.running) {
      this.followUp = true
      return
    }
    const now = Date.now()
    this.burstStartedAt ??= now
    const untilMax = this.burstStartedAt + this.timing.maxDebounceMs - now
    clearTimeout(this.debounce)
    this.debounce = setTimeout(
      () => this.start(),
      Math.max(0, Math.min(this.timing.debounceMs, untilMax)),
    )
  }

  /**
   * Resolves once no sweep is scheduled (debounced) or running, follow-ups included; at once when
   * there is none. Within requests (see {@link sweepWithinRequests}) it runs, in the caller's own
   * context, the sweep that the requests so far are owed, and resolves once a sweep that started after
   * the last of them has ended: hand it to the request's `waitUntil`.
   */
  idle(): Promise<void> {
    if (this.withinRequests) return this.sweepOwed()
    if (!this.running && this.debounce === undefined && !this.finishing) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  /**
   * For an edge runtime, where a request may not await or resolve a promise (or use a timer) that
   * another request created, and where a request's work after its response lives only as long as
   * its `waitUntil`: from now on `request()` schedules nothing and the interval timer stops; each
   * request's `idle()` then runs the sweep it is owed within that request. It cannot be undone.
   */
  sweepWithinRequests(): void {
    if (this.withinRequests) return
    this.withinRequests = true
    clearInterval(this.interval)
    // A request counted before the switch stays owed: the next request's `idle()` covers it.
    clearTimeout(this.debounce)
    this.debounce = undefined
    this.burstStartedAt = undefined
    if (!this.running) this.wakeIdle()
  }

  /**
   * Stops the timers and every later sweep (a scheduled one is dropped), and aborts the running
   * sweep's signal.
   *
   * @returns Resolves once the sweep in flight, if any, has ended.
   */
  detach(): Promise<void> {
    if (!this.stopped) this.halt()
    if (!this.running && !this.finishing) this.wakeIdle()
    return this.finishing ?? this.running ?? Promise.resolve()
  }

  /**
   * Stops the timers and every later request, and finishes what was asked before: a sweep that is
   * scheduled (debounced) or a follow-up runs now, once, after the sweep in flight, instead of being
   * dropped. The signal is aborted, so no sweep waits out a retry's backoff. Within requests, each
   * request's own `idle()` holds its sweep: this only stops later ones, as `detach()` does.
   *
   * @returns Resolves once every sweep has ended.
   */
  finish(): Promise<void> {
    if (this.stopped) return this.finishing ?? this.running ?? Promise.resolve()
    const owed = !this.withinRequests && (this.debounce !== undefined || this.followUp)
    const inFlight = this.running
    this.halt()
    if (!owed) return this.detach()
    this.finishing = (async () => {
      await inFlight
      await this.runSweep({ withinRequest: false })
    })().finally(() => {
      this.finishing = undefined
      this.wakeIdle()
    })
    return this.finishing
  }

  /** Stops the timers and later sweeps, and aborts the signal. */
  private halt(): void {
    this.stopped = true
    clearInterval(this.interval)
    clearTimeout(this.debounce)
    this.debounce = undefined
    this.followUp = false
    this.stop.abort()
  }

  /** A timer tick sweeps unless a sweep is running or about to. */
  private onTick(): void {
    if (!this.running && this.debounce === undefined) this.start()
  }

  private start(): void {
    clearTimeout(this.debounce)
    this.debounce = undefined
    this.burstStartedAt = undefined
    if (this.stopped || this.running || this.withinRequests) return
    this.running = this.runSweep({ withinRequest: false }).finally(() => {
      this.running = undefined
      if (this.followUp) {
        this.followUp = false
        this.request()
      }
      if (this.debounce === undefined && !this.finishing) this.wakeIdle()
    })
  }

  /** Runs the sweep, marked as the current one, and counts the requests it covered once it ends. */
  private async runSweep(place: ScheduledSweepPlace): Promise<void> {
    const run = { covers: this.asked, startedAt: Date.now() }
    this.current = run
    try {
      await this.sweep(this.stop.signal, place)
    } finally {
      if (this.current === run) this.current = undefined
      this.covered = Math.max(this.covered, run.covers)
    }
  }

  /**
   * Within requests: the caller's sweep, in its own context. After the debounce (a burst's other
   * requests settle meanwhile, and one sweep covers them all), it waits its turn on its own timer,
   * looking at plain data only: while a sweep runs, and while an earlier request waits. Then, unless a
   * sweep that started after its requests has ended meanwhile, it sweeps.
   */
  private async sweepOwed(): Promise<void> {
    const owed = this.asked
    if (this.stopped || this.covered >= owed) return
    const ticket = ++this.tickets
    this.waiting.set(ticket, Date.now())
    try {
      await sleep(this.timing.debounceMs)
      while (!this.stopped && this.covered < owed) {
        this.waiting.set(ticket, Date.now())
        if (this.isTurnOf(ticket)) await this.runSweep({ withinRequest: true })
        else await sleep(turnPollMs)
      }
    } finally {
      this.waiting.delete(ticket)
    }
  }

  /** Whether no sweep runs (or the one marked running was cancelled) and no earlier request waits. */
  private isTurnOf(ticket: number): boolean {
    const now = Date.now()
    if (this.current && now - this.current.startedAt < sweepAbandonedAfterMs) return false
    for (const [other, lookedAt] of this.waiting) {
      if (now - lookedAt >= waiterGoneAfterMs) this.waiting.delete(other)
      else if (other < ticket) return false
    }
    return true
  }

  private wakeIdle(): void {
    for (const resolve of this.idleWaiters.splice(0)) resolve()
  }
}
