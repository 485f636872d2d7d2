/**
 * The watch sweeper's Postgres lock on its own, against a real Postgres behind a proxy that can cut
 * the network silently (nothing arrives, nothing closes): what happens after the holder's connection
 * is cut.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import { lockKey, postgresLock } from '../../src/cli/watch/postgresLock.js'
import { startPostgres, startTcpProxy } from '../support/postgres.js'

let postgres: Awaited<ReturnType<typeof startPostgres>>
beforeAll(async () => {
  postgres = await startPostgres()
}, 120_000)
afterAll(() => postgres?.stop())

it('after a cut, a check still waiting on the lost connection does not drop the next one: the lock keeps retrying, and stops at once when told', async () => {
  const proxy = await startTcpProxy(postgres.port)
  const viaProxy = postgres.url.replace(`:${postgres.port}/`, `:${proxy.port}/`)
  const lost: string[] = []
  const problems: string[] = []
  const stop = new AbortController()
  let again: Promise<unknown> | undefined
  const lock = await postgresLock(
    viaProxy,
    lockKey(84532, '0x00000000000000000000000000000000000000aa'),
    {
      lost: (reason) => {
        lost.push(reason)
        // As the sweeper does: try to take it again at once, over the same cut network.
        again = lock.acquire(stop.signal).catch((error: unknown) => error)
      },
      problem: (message) => problems.push(message),
      waiting: () => {},
    },
  )
  try {
    await lock.acquire(stop.signal)
    proxy.cut()
    // Two sends check the lock, 300 ms apart, on the connection that is now cut: the first failure
    // loses the lock (and the retry starts a new connection), the second comes while it connects.
    const first = lock.assertHeld().catch((error: { code?: string }) => error.code)
    await new Promise((resolve) => setTimeout(resolve, 300))
    const second = lock.assertHeld().catch((error: { code?: string }) => error.code)
    expect(await Promise.all([first, second])).toEqual(['SWEEP_LOCK_LOST', 'SWEEP_LOCK_LOST'])
    expect(lost).toHaveLength(1)
    // The new connection is not dropped: its connect times out (5 s) and the lock says so, then
    // tries again. Before, pg never settled the dropped connect and the retry hung for good.
    const deadline = Date.now() + 10_000
    while (problems.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(problems, 'the retry said nothing for 10 s: it hung').not.toEqual([])
    expect(problems[0]).toMatch(/^Postgres at .* failed: /)
    // A stop while it connects again ends the retry at once.
    const stopping = performance.now()
    stop.abort(new Error('stopped'))
    expect(await again).toMatchObject({ message: 'stopped' })
    expect(performance.now() - stopping).toBeLessThan(1_000)
    expect(lock.held).toBe(false)
  } finally {
    stop.abort()
    await lock.release()
    await proxy.stop()
  }
}, 60_000)
