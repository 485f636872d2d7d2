/**
 * The sweep scheduler with fake timers and an injected sweep (no chain): debounce and its maximum,
 * one sweep at a time with exactly one follow-up, the interval timer, detach and finish, and sweeps
 * within requests (edge runtimes): each request's idle() runs its own sweep, one at a time, earliest
 * request first, waiting on nothing but its own timers.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import {
  type ScheduledSweepPlace,
  SweepScheduler,
  type SweepTiming,
} from '../../../src/sdk/sweep/sweepScheduler.js'

beforeEach(() => {
  vi.useFakeTimers({ now: 0 })
})
afterEach(() => {
  vi.useRealTimers()
})

/**
 * A sweep to inject. It records when each run starts (fake time) and with which signal; with `hold`,
 * each run lasts until `finish()`, otherwise it ends at once.
 */
function injectedSweep({ hold = false } = {}) {
  const starts: number[] = []
  const signals: AbortSignal[] = []
  const places: ScheduledSweepPlace[] = []
  const running: (() => void)[] = []
  const sweep = (signal: AbortSignal, place: ScheduledSweepPlace) => {
    starts.push(Date.now())
    signals.push(signal)
    places.push(place)
    return hold ? new Promise<void>((resolve) => running.push(resolve)) : Promise.resolve()
  }
  return {
    sweep,
    starts,
    signals,
    places,
    /** Ends the run in flight. */
    finish: () => running.shift()?.(),
  }
}

const timing = (overrides: Partial<SweepTiming> = {}): SweepTiming => ({
  debounceMs: 250,
  maxDebounceMs: 5_000,
  intervalMs: undefined,
  ...overrides,
})

describe('SweepScheduler', () => {
  it('debounces a burst into one sweep, debounceMs after the last request', async () => {
    const injected = injectedSweep()
    const scheduler = new SweepScheduler(injected.sweep, timing())
    scheduler.request()
    await vi.advanceTimersByTimeAsync(200)
    scheduler.request()
    await vi.advanceTimersByTimeAsync(200)
    scheduler.request()
    await vi.advanceTimersByTimeAsync(249)
    expect(injected.starts).toEqual([])
    await vi.advanceTimersByTimeAsync(1)
    expect(injected.starts).toEqual([650])
    await vi.advanceTimersByTimeAsync(10_000)
    expect(injected.starts).toEqual([650])
  })

  it('sweeps at the latest maxDebounceMs after the first request of a burst that goes on', async () => {
    const injected = injectedSweep()
    const scheduler = new SweepScheduler(
      injected.sweep,
      timing({ debounceMs: 250, maxDebounceMs: 1_000 }),
    )
    for (let i = 0; i < 8; i++) {
      scheduler.request()
      await vi.advanceTimersByTimeAsync(200)
    }
    // Requests at 0, 200, …, 1400: the first sweep at 1000, the next burst starts at 1200.
    expect(injected.starts).toEqual([1_000])
    await vi.advanceTimersByTimeAsync(250)
    expect(injected.starts).toEqual([1_000, 1_650])
  })

  it('runs one sweep at a time; requests during a sweep lead to exactly one follow-up', async () => {
    const injected = injectedSweep({ hold: true })
    const scheduler = new SweepScheduler(injected.sweep, timing({ debounceMs: 10 }))
    scheduler.request()
    await vi.advanceTimersByTimeAsync(10)
    expect(injected.starts).toEqual([10])
    for (let i = 0; i < 5; i++) {
      scheduler.request()
      await vi.advanceTimersByTimeAsync(100)
    }
    expect(injected.starts).toEqual([10])
    injected.finish()
    // The follow-up is debounced from the end of the sweep.
    await vi.advanceTimersByTimeAsync(9)
    expect(injected.starts).toEqual([10])
    await vi.advanceTimersByTimeAsync(1)
    expect(injected.starts).toEqual([10, 520])
    injected.finish()
    await vi.advanceTimersByTimeAsync(10_000)
    expect(injected.starts).toEqual([10, 520])
  })

  it('sweeps on its interval unless a sweep is running or scheduled', async () => {
    const injected = injectedSweep({ hold: true })
    const scheduler = new SweepScheduler(
      injected.sweep,
      timing({ debounceMs: 250, intervalMs: 1_000 }),
    )
    await vi.advanceTimersByTimeAsync(1_000)
    expect(injected.starts).toEqual([1_000])
    // Still running at the next tick: no second sweep.
    await vi.advanceTimersByTimeAsync(1_000)
    expect(injected.starts).toEqual([1_000])
    injected.finish()
    // A request at 2900 is pending at the tick of 3000: the tick leaves it to the debounce.
    await vi.advanceTimersByTimeAsync(900)
    scheduler.request()
    await vi.advanceTimersByTimeAsync(250)
    expect(injected.starts).toEqual([1_000, 3_150])
    injected.finish()
    await vi.advanceTimersByTimeAsync(850)
    expect(injected.starts).toEqual([1_000, 3_150, 4_000])
    injected.finish()
    await scheduler.detach()
  })

  it('detach stops the timers, aborts the signal, and resolves after the sweep in flight', async () => {
    const injected = injectedSweep({ hold: true })
    const scheduler = new SweepScheduler(
      injected.sweep,
      timing({ debounceMs: 10, intervalMs: 1_000 }),
    )
    scheduler.request()
    await vi.advanceTimersByTimeAsync(10)
    scheduler.request() // asks for a follow-up, which detach cancels
    expect(injected.starts).toEqual([10])

    let resolved = false
    const detached = scheduler.detach().then(() => {
      resolved = true
    })
    expect(scheduler.detached).toBe(true)
    expect(injected.signals[0]?.aborted).toBe(true)
    expect(vi.getTimerCount()).toBe(0)
    await vi.advanceTimersByTimeAsync(100)
    expect(resolved).toBe(false)
    injected.finish()
    await detached
    expect(resolved).toBe(true)

    // Inert from now on: requests, timers and follow-ups start nothing.
    scheduler.request()
    await vi.advanceTimersByTimeAsync(10_000)
    expect(injected.starts).toEqual([10])
    expect(vi.getTimerCount()).toBe(0)
    await expect(scheduler.detach()).resolves.toBeUndefined()
  })

  it('detach with no sweep in flight resolves at once and cancels a scheduled one', async () => {
    const injected = injectedSweep()
    const scheduler = new SweepScheduler(injected.sweep, timing())
    scheduler.request()
    await scheduler.detach()
    await vi.advanceTimersByTimeAsync(10_000)
    expect(injected.starts).toEqual([])
  })

  it('idle() resolves once the debounced sweep, its follow-up and nothing else are done (what waitUntil waits for)', async () => {
    const injected = injectedSweep({ hold: true })
    const scheduler = new SweepScheduler(injected.sweep, timing({ debounceMs: 10 }))
    await expect(scheduler.idle()).resolves.toBeUndefined() // nothing to wait for
    let idleAt: number | undefined
    scheduler.request()
    const idle = scheduler.idle().then(() => {
      idleAt = Date.now()
    })
    await vi.advanceTimersByTimeAsync(10)
    expect(injected.starts).toEqual([10])
    scheduler.request() // during the sweep: one follow-up
    await vi.advanceTimersByTimeAsync(100)
    injected.finish()
    await vi.advanceTimersByTimeAsync(0)
    expect(idleAt).toBeUndefined() // the follow-up is scheduled
    await vi.advanceTimersByTimeAsync(10)
    expect(injected.starts).toEqual([10, 120])
    expect(idleAt).toBeUndefined() // …and running
    await vi.advanceTimersByTimeAsync(50)
    injected.finish()
    await idle
    expect(idleAt).toBe(170)
  })

  it('idle() resolves on detach when only a debounced sweep was pending', async () => {
    const injected = injectedSweep()
    const scheduler = new SweepScheduler(injected.sweep, timing())
    scheduler.request()
    const idle = scheduler.idle()
    await scheduler.detach()
    await expect(idle).resolves.toBeUndefined()
    expect(injected.starts).toEqual([])
  })

  it('finish runs the sweep a request scheduled at once, instead of dropping it, and resolves once it ended', async () => {
    const injected = injectedSweep({ hold: true })
    const scheduler = new SweepScheduler(injected.sweep, timing({ debounceMs: 250 }))
    scheduler.request()
    await vi.advanceTimersByTimeAsync(100)
    let finished = false
    const finishing = scheduler.finish().then(() => {
      finished = true
    })
    // Not 150 ms later, when its debounce would have ended: now, with the signal aborted (one attempt).
    await vi.advanceTimersByTimeAsync(0)
    expect(injected.starts).toEqual([100])
    expect(injected.signals[0]?.aborted).toBe(true)
    expect(scheduler.detached).toBe(true)
    await vi.advanceTimersByTimeAsync(1_000)
    expect(finished).toBe(false)
    injected.finish()
    await finishing
    // Stopped: later requests start nothing.
    scheduler.request()
    await vi.advanceTimersByTimeAsync(10_000)
    expect(injected.starts).toEqual([100])
    expect(vi.getTimerCount()).toBe(0)
  })

  it('finish runs a follow-up asked for during the sweep in flight, after it', async () => {
    const injected = injectedSweep({ hold: true })
    const scheduler = new SweepScheduler(injected.sweep, timing({ debounceMs: 10 }))
    scheduler.request()
    await vi.advanceTimersByTimeAsync(10)
    scheduler.request() // during the sweep: a follow-up
    const idle = scheduler.idle()
    const finishing = scheduler.finish()
    await vi.advanceTimersByTimeAsync(100)
    expect(injected.starts).toEqual([10])
    injected.finish()
    await vi.advanceTimersByTimeAsync(0)
    expect(injected.starts).toEqual([10, 110])
    injected.finish()
    await finishing
    await idle
    expect(injected.starts).toEqual([10, 110])
  })

  it('finish with nothing asked for resolves after the sweep in flight, and starts none', async () => {
    const injected = injectedSweep({ hold: true })
    const scheduler = new SweepScheduler(injected.sweep, timing({ debounceMs: 10 }))
    await expect(scheduler.finish()).resolves.toBeUndefined()
    expect(injected.starts).toEqual([])

    const other = new SweepScheduler(injected.sweep, timing({ debounceMs: 10 }))
    other.request()
    await vi.advanceTimersByTimeAsync(10)
    let finished = false
    const finishing = other.finish().then(() => {
      finished = true
    })
    await vi.advanceTimersByTimeAsync(100)
    expect(finished).toBe(false)
    injected.finish()
    await finishing
    expect(injected.starts).toEqual([10])
  })
})

describe('SweepScheduler within requests (edge runtimes)', () => {
  it('a request only counts; its idle() sweeps, within the caller, after the debounce', async () => {
    const injected = injectedSweep()
    const scheduler = new SweepScheduler(
      injected.sweep,
      timing({ debounceMs: 250, intervalMs: 1_000 }),
    )
    scheduler.sweepWithinRequests()
    // No shared timer: neither the interval nor a debounce.
    expect(vi.getTimerCount()).toBe(0)
    scheduler.request()
    expect(vi.getTimerCount()).toBe(0)
    await vi.advanceTimersByTimeAsync(10_000)
    expect(injected.starts).toEqual([])
    // The request's own idle(): it sweeps, 250 ms after it was called, outside the write queue.
    const idle = scheduler.idle()
    await vi.advanceTimersByTimeAsync(250)
    await idle
    expect(injected.starts).toEqual([10_250])
    expect(injected.places).toEqual([{ withinRequest: true }])
    // Nothing owed any more: idle() resolves at once and sweeps nothing.
    await scheduler.idle()
    expect(injected.starts).toEqual([10_250])
  })

  it('a burst: the first request sweeps for all; the others sweep nothing and end with it', async () => {
    const injected = injectedSweep({ hold: true })
    const scheduler = new SweepScheduler(injected.sweep, timing({ debounceMs: 250 }))
    scheduler.sweepWithinRequests()
    const ended: string[] = []
    const idles = ['a', 'b', 'c'].map((name) => {
      scheduler.request()
      return scheduler.idle().then(() => ended.push(name))
    })
    await vi.advanceTimersByTimeAsync(250)
    expect(injected.starts).toEqual([250])
    await vi.advanceTimersByTimeAsync(500)
    expect(ended).toEqual([])
    injected.finish()
    // The others look again on their own timers (every 50 ms) and find their sales covered.
    await vi.advanceTimersByTimeAsync(50)
    await Promise.all(idles)
    expect(injected.starts).toEqual([250])
    expect(ended.sort()).toEqual(['a', 'b', 'c'])
  })

  it('a sale during another request’s sweep: its request waits on its own timer, then sweeps itself', async () => {
    const injected = injectedSweep({ hold: true })
    const scheduler = new SweepScheduler(injected.sweep, timing({ debounceMs: 10 }))
    scheduler.sweepWithinRequests()
    scheduler.request()
    let firstDone = false
    const first = scheduler.idle().then(() => {
      firstDone = true
    })
    await vi.advanceTimersByTimeAsync(10)
    expect(injected.starts).toEqual([10])
    // A second sale while the first request's sweep runs: that sweep read before it.
    scheduler.request()
    let secondDone = false
    const second = scheduler.idle().then(() => {
      secondDone = true
    })
    await vi.advanceTimersByTimeAsync(500)
    expect(injected.starts).toEqual([10])
    injected.finish()
    await first
    expect(firstDone).toBe(true)
    expect(secondDone).toBe(false)
    // The second request looks again on its own timer (every 50 ms from its first look, at 20), and
    // sweeps.
    await vi.advanceTimersByTimeAsync(10)
    expect(injected.starts).toEqual([10, 520])
    injected.finish()
    await second
    expect(secondDone).toBe(true)
  })

  it('requests waiting for the same sweep take their turns earliest first', async () => {
    const order: string[] = []
    const holds: (() => void)[] = []
    const scheduler = new SweepScheduler(
      () => new Promise<void>((resolve) => holds.push(resolve)),
      timing({ debounceMs: 0 }),
    )
    scheduler.sweepWithinRequests()
    scheduler.request()
    const first = scheduler.idle()
    await vi.advanceTimersByTimeAsync(0)
    expect(holds).toHaveLength(1)
    // Two more sales during the first sweep. The later one looks at 30, 80, …: before the earlier
    // one, which looks at 0, 50, …
    scheduler.request()
    const second = scheduler.idle().then(() => order.push('second'))
    await vi.advanceTimersByTimeAsync(30)
    scheduler.request()
    const third = scheduler.idle().then(() => order.push('third'))
    await vi.advanceTimersByTimeAsync(180)
    holds.shift()?.()
    await first
    // At 230 the third looks first, and leaves the turn to the second, which sweeps at 250 (for both).
    await vi.advanceTimersByTimeAsync(30)
    expect(holds).toHaveLength(0)
    await vi.advanceTimersByTimeAsync(10)
    expect(holds).toHaveLength(1)
    holds.shift()?.()
    await vi.advanceTimersByTimeAsync(50)
    await Promise.all([second, third])
    expect(holds).toHaveLength(0)
    expect(order).toEqual(['second', 'third'])
  })

  it('a request whose sweep never ends (its request was cancelled) holds the others up for a minute at most', async () => {
    const injected = injectedSweep({ hold: true })
    const scheduler = new SweepScheduler(injected.sweep, timing({ debounceMs: 0 }))
    scheduler.sweepWithinRequests()
    scheduler.request()
    void scheduler.idle() // its request is cancelled mid-sweep: this never settles
    await vi.advanceTimersByTimeAsync(0)
    scheduler.request()
    let done = false
    const next = scheduler.idle().then(() => {
      done = true
    })
    await vi.advanceTimersByTimeAsync(59_000)
    expect(injected.starts).toEqual([0])
    await vi.advanceTimersByTimeAsync(1_050)
    expect(injected.starts).toEqual([0, 60_000])
    injected.finish() // the cancelled one: never, in workerd; here it just must not matter
    injected.finish()
    await next
    expect(done).toBe(true)
  })

  it('a waiting request that is gone (cancelled) no longer holds up later ones', async () => {
    const injected = injectedSweep()
    const scheduler = new SweepScheduler(injected.sweep, timing({ debounceMs: 100 }))
    scheduler.sweepWithinRequests()
    // The waiting list as a cancelled request leaves it: a ticket that stopped looking.
    ;(scheduler as unknown as { waiting: Map<number, number>; tickets: number }).waiting.set(0, 0)
    await vi.advanceTimersByTimeAsync(1_000)
    scheduler.request()
    const idle = scheduler.idle()
    await vi.advanceTimersByTimeAsync(100)
    // 1,100 ms since the gone one last looked: still inside its 2 s, so this request waits…
    expect(injected.starts).toEqual([])
    await vi.advanceTimersByTimeAsync(950)
    await idle
    // …until it counts as gone.
    expect(injected.starts).toEqual([2_000])
  })

  it('detach ends the waiting requests at once', async () => {
    const injected = injectedSweep({ hold: true })
    const scheduler = new SweepScheduler(injected.sweep, timing({ debounceMs: 0 }))
    scheduler.sweepWithinRequests()
    scheduler.request()
    void scheduler.idle()
    await vi.advanceTimersByTimeAsync(0)
    scheduler.request()
    const waiting = scheduler.idle()
    await vi.advanceTimersByTimeAsync(100)
    void scheduler.detach()
    await vi.advanceTimersByTimeAsync(50)
    await waiting
    expect(injected.starts).toEqual([0])
  })
})
