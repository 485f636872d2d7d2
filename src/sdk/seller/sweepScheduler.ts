/** When a {@link SweepScheduler} runs sweeps, in ms. */
export type SweepTiming = {
  /** A sweep starts this long after the last request of a burst… */
  debounceMs: number
  /** …and at the latest this long after the first one. */
  maxDebounceMs: number
  /** Also sweep on a timer, every this many ms; `undefined` for no timer. */
  intervalMs: number | undefined
}

/**
 * The sweep a scheduler runs. It handles and reports its own failures, so it never rejects. `signal`
 * aborts when the scheduler is detached, to cut short a wait inside the sweep (a retry's backoff).
 */
export type ScheduledSweep = (signal: AbortSignal) => Promise<void>

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
 * - `detach()` stops the timers and every later sweep, aborts the running sweep's signal, and resolves
 *   once that sweep has ended.
 * - `idle()` resolves once no sweep is scheduled or running: what an edge runtime's `waitUntil` needs
 *   to keep the isolate alive until the sweeps a request asked for have ended.
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

  /** Whether `detach()` was called: requests are then ignored. */
  get detached(): boolean {
    return this.stopped
  }

  /** Asks for a sweep: debounced; during a sweep, one follow-up instead. Ignored once detached. */
  request(): void {
    if (this.stopped) return
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
   * there is none. Hand it to an edge runtime's `waitUntil` after a request that asked for a sweep.
   */
  idle(): Promise<void> {
    if (!this.running && this.debounce === undefined) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  /**
   * Stops the timers and every later sweep, and aborts the running sweep's signal.
   *
   * @returns Resolves once the sweep in flight, if any, has ended.
   */
  detach(): Promise<void> {
    if (!this.stopped) {
      this.stopped = true
      clearInterval(this.interval)
      clearTimeout(this.debounce)
      this.debounce = undefined
      this.stop.abort()
    }
    if (!this.running) this.wakeIdle()
    return this.running ?? Promise.resolve()
  }

  /** A timer tick sweeps unless a sweep is running or about to. */
  private onTick(): void {
    if (!this.running && this.debounce === undefined) this.start()
  }

  private start(): void {
    clearTimeout(this.debounce)
    this.debounce = undefined
    this.burstStartedAt = undefined
    if (this.stopped || this.running) return
    this.running = this.sweep(this.stop.signal).finally(() => {
      this.running = undefined
      if (this.followUp) {
        this.followUp = false
        this.request()
      }
      if (this.debounce === undefined) this.wakeIdle()
    })
  }

  private wakeIdle(): void {
    for (const resolve of this.idleWaiters.splice(0)) resolve()
  }
}
