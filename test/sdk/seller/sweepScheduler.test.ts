/**
 * The sweep scheduler with fake timers and an injected sweep (no chain): debounce and its maximum,
 * one sweep at a time with exactly one follow-up, the interval timer, and detach.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { SweepScheduler, type SweepTiming } from '../../../src/sdk/seller/sweepScheduler.js'

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
  const running: (() => void)[] = []
  const sweep = (signal: AbortSignal) => {
    starts.push(Date.now())
    signals.push(signal)
    return hold ? new Promise<void>((resolve) => running.push(resolve)) : Promise.resolve()
  }
  return {
    sweep,
    starts,
    signals,
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
})
