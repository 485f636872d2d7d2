/**
 * The sweeper's observers: callbacks never awaited, a throwing or rejecting `onIdleDeposit` reported
 * as an `observer` problem, and a failing `onNonFatalError` dropped.
 */
import { describe, expect, it, vi } from 'vitest'
import type { IdleDeposit, SweeperProblem } from '../../../src/index.js'
import { sweepObservers } from '../../../src/sdk/sweep/sweepObservers.js'

const deposit = {
  deposited: true,
  txHash: `0x${'ab'.repeat(32)}`,
  idleAmount: 10_000_000n,
} as IdleDeposit

/** Lets the callbacks' microtasks run. */
const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 0))

describe('sweepObservers', () => {
  it('hands deposits and problems on without waiting for the callbacks', async () => {
    const received: unknown[] = []
    const observers = sweepObservers({
      onIdleDeposit: (d) => {
        received.push(d)
        return new Promise(() => {}) // never settles
      },
      onNonFatalError: (problem) => {
        received.push(problem)
      },
    })
    observers.deposited(deposit)
    observers.problem('balance-read', new Error('boom'), true)
    // Called later, not during the sweeper's own step.
    expect(received).toEqual([])
    await settle()
    expect(received).toEqual([
      deposit,
      {
        phase: 'balance-read',
        willRetry: true,
        error: expect.objectContaining({ message: 'boom' }),
      },
    ])
  })

  it('reports an onIdleDeposit that throws or rejects as an observer problem', async () => {
    const problems: SweeperProblem[] = []
    let calls = 0
    const observers = sweepObservers({
      onIdleDeposit: () => {
        calls++
        if (calls === 1) throw new Error('bookkeeping is down')
        return Promise.reject(new Error('still down'))
      },
      onNonFatalError: (problem) => {
        problems.push(problem)
      },
    })
    observers.deposited(deposit)
    observers.deposited(deposit)
    await settle()
    expect(
      problems.map(({ phase, willRetry, error }) => [phase, willRetry, error.message]),
    ).toEqual([
      ['observer', false, 'onIdleDeposit failed: bookkeeping is down'],
      ['observer', false, 'onIdleDeposit failed: still down'],
    ])
  })

  it('drops the failure of onNonFatalError itself, and does nothing without callbacks', async () => {
    const unhandled = vi.fn()
    process.on('unhandledRejection', unhandled)
    try {
      const onNonFatalError = vi.fn(() => {
        throw new Error('the error reporter fails too')
      })
      const observers = sweepObservers({
        onIdleDeposit: () => {
          throw new Error('bookkeeping is down')
        },
        onNonFatalError,
      })
      observers.deposited(deposit)
      observers.problem('deposit', new Error('boom'), false)
      await settle()
      expect(onNonFatalError).toHaveBeenCalledTimes(2)
      const silent = sweepObservers({})
      silent.deposited(deposit)
      silent.problem('receipt', new Error('boom'), false)
      await settle()
      expect(unhandled).not.toHaveBeenCalled()
    } finally {
      process.off('unhandledRejection', unhandled)
    }
  })
})
