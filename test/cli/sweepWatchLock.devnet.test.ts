/**
 * Two `x402-vault sweep --watch --lock` sweepers of one wallet, against a devnet and a real Postgres:
 * only the lock holder sends; when it is SIGKILLed the other takes over within 10 s; when the holder's
 * connection to Postgres is cut instead, it stops sending before the other starts. Every deposit is
 * sent by the holder of the moment, and the accounting is exact to the base unit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeAddressesFile } from '../../harness/addressesFile.js'
import { transferToMerchant, usdcBalance } from '../../harness/merchant.js'
import { startWatcher, type WatchEventLine, type Watcher } from '../../harness/watcher.js'
import { type Devnet, startDevnet } from '../../src/devnet/startDevnet.js'
import { parseUsdc } from '../../src/index.js'
import { startPostgres, startTcpProxy } from '../support/postgres.js'

let devnet: Devnet
let postgres: Awaited<ReturnType<typeof startPostgres>>
let addressesPath: string
const watchers: Watcher[] = []

beforeAll(async () => {
  ;[devnet, postgres] = await Promise.all([startDevnet({ chain: 'base-sepolia' }), startPostgres()])
  addressesPath = await writeAddressesFile(devnet)
}, 120_000)
afterAll(async () => {
  for (const watcher of watchers) watcher.child.kill('SIGKILL')
  await Promise.all([devnet?.stop(), postgres?.stop()])
})

const is = (event: string, state?: string) => (line: WatchEventLine) =>
  line.event === event && (state === undefined || line.state === state)
const atomic = (line: WatchEventLine) => BigInt((line.amount as { atomic: string }).atomic)
const at = (line: WatchEventLine) => Date.parse(line.time)
/** `promise`, or a failure naming `what` after `ms`: a hang says what hung. */
const within = <T>(ms: number, what: string, promise: Promise<T>): Promise<T> => {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

describe('x402-vault sweep --watch --lock', () => {
  it('one sender at a time: takeover after a SIGKILL, and after a cut connection', async () => {
    const proxy = await startTcpProxy(postgres.port)
    const env = {
      MERCHANT_PRIVATE_KEY: devnet.accounts.merchant.privateKey,
      BASE_SEPOLIA_RPC_URL: devnet.rpcUrl,
    }
    const watch = (lockUrl: string) =>
      startWatcher(env, [
        ...['--addresses', addressesPath, '--reserve', '900', '--poll', '0.2'],
        ...['--debounce', '100', '--lock', lockUrl],
      ])
    const viaProxy = postgres.url.replace(`:${postgres.port}/`, `:${proxy.port}/`)
    const start = await usdcBalance(devnet, devnet.accounts.merchant.address)
    try {
      // A holds the lock and sweeps what is idle; B waits.
      const a = watch(postgres.url)
      watchers.push(a)
      await a.next(is('lock', 'acquired'))
      const b = watch(viaProxy)
      watchers.push(b)
      await b.next(is('lock', 'waiting'))
      expect(atomic(await a.next(is('deposit')))).toBe(start - parseUsdc('900'))

      // SIGKILL A: B takes over within 10 s and sweeps the next inflow.
      a.child.kill('SIGKILL')
      const killedAt = Date.now()
      const bHolds = await b.next(is('lock', 'acquired'))
      expect(at(bHolds) - killedAt).toBeLessThan(10_000)
      await transferToMerchant(devnet, parseUsdc('25'))
      expect(atomic(await b.next(is('deposit')))).toBe(parseUsdc('25'))

      // C waits; cut B's connection to Postgres: B stops sending before C takes the lock.
      const c = watch(postgres.url)
      watchers.push(c)
      await c.next(is('lock', 'waiting'))
      proxy.cut()
      const bLost = await b.next(is('lock', 'lost'))
      const cHolds = await c.next(is('lock', 'acquired'))
      expect(at(bLost)).toBeLessThan(at(cHolds))
      await transferToMerchant(devnet, parseUsdc('30'))
      expect(atomic(await c.next(is('deposit')))).toBe(parseUsdc('30'))
      // B keeps trying to take the lock again: its connect through the cut network times out (5 s)
      // and it says so. (A heartbeat still waiting on its lost connection used to drop the new one
      // mid-connect, which pg never settles: B hung there, and on SIGTERM.)
      const unavailable = (line: WatchEventLine) =>
        line.event === 'problem' && line.code === 'SWEEP_LOCK_UNAVAILABLE'
      await within(15_000, 'B retries the lock', b.after(b.events.indexOf(bLost), unavailable))

      // Every deposit was sent while its sender held the lock; exact accounting. Both stop at once.
      for (const watcher of [b, c]) watcher.child.kill('SIGTERM')
      expect(await within(5_000, 'B and C exit', Promise.all([b.exited, c.exited]))).toEqual([0, 0])
      const deposits = watchers.flatMap((watcher) => watcher.events.filter(is('deposit')))
      expect(deposits).toHaveLength(3)
      expect(b.events.filter(is('deposit')).every((line) => at(line) < at(bLost))).toBe(true)
      expect(c.events.filter(is('deposit')).every((line) => at(line) > at(cHolds))).toBe(true)
      const end = await usdcBalance(devnet, devnet.accounts.merchant.address)
      const deposited = deposits.reduce((sum, line) => sum + atomic(line), 0n)
      expect(start + parseUsdc('55')).toBe(end + deposited)
      expect(end).toBe(parseUsdc('900'))
      // Nothing failed to send: no nonce conflict, no revert.
      const problems = watchers.flatMap((watcher) => watcher.events.filter(is('problem')))
      expect(problems.filter((line) => line.phase === 'deposit')).toEqual([])
    } finally {
      for (const watcher of watchers) watcher.child.kill('SIGKILL')
      await proxy.stop()
    }
  }, 60_000)
})
