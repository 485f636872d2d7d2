/**
 * What `x402-vault sweep --watch`'s `/healthz` says, against a devnet and a real Postgres. The watch
 * sweeper runs in this process, so that its stale window can be one second instead of 30. On an idle
 * chain that answers (the devnet's anvil mines a block only for a transaction) it stays `ok` however
 * long no block comes, and turns `degraded` once the RPC stops answering. With the lock: the holder is
 * `ok`, a sweeper that waits while its Postgres answers is `standby` (200), and a sweeper that cannot
 * reach Postgres is `degraded` (503), never `ok`: it cannot take over, and may be the last one left.
 */
import { createPublicClient, createWalletClient } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CountingProxy, startCountingProxy } from '../../harness/countingProxy.js'
import { usdcBalance } from '../../harness/merchant.js'
import type { WatchEvent } from '../../src/cli/watch/events.js'
import { runWatchSweeper, type WatchSettings } from '../../src/cli/watch/watchSweeper.js'
import { type Devnet, startDevnet } from '../../src/devnet/startDevnet.js'
import { createVaultClient, vaultHttp } from '../../src/index.js'
import { devnetClients } from '../support/devnet.js'
import { startPostgres, startTcpProxy } from '../support/postgres.js'

let devnet: Devnet
let postgres: Awaited<ReturnType<typeof startPostgres>>
let rpc: CountingProxy
const running: { stop: AbortController; done: Promise<void> }[] = []

beforeAll(async () => {
  ;[devnet, postgres] = await Promise.all([startDevnet({ chain: 'base-sepolia' }), startPostgres()])
  rpc = await startCountingProxy(devnet.rpcUrl)
  // Registered before: the sweepers send nothing at all.
  await devnetClients(devnet).vault.ensureInitializedAndWait()
}, 120_000)
afterAll(async () => {
  for (const sweeper of running) sweeper.stop.abort()
  await Promise.all(running.map((sweeper) => sweeper.done))
  await rpc?.close()
  await Promise.all([devnet?.stop(), postgres?.stop()])
})

/** How old the last scan (or Postgres's last answer) may be and still be healthy, here. */
const staleMs = 1_000

/** Runs a watch sweeper of the merchant wallet in this process; its events as they come. */
async function watch(options: { rpcUrl: string; lockUrl?: string }) {
  const account = privateKeyToAccount(devnet.accounts.merchant.privateKey)
  const transport = vaultHttp(options.rpcUrl, { retryCount: 0 })
  const vault = createVaultClient({
    publicClient: createPublicClient({ chain: devnet.viemChain, transport, pollingInterval: 50 }),
    walletClient: createWalletClient({ account, chain: devnet.viemChain, transport }),
    chain: 'base-sepolia',
    addresses: devnet.addresses,
  })
  const events: WatchEvent[] = []
  const waiters = new Set<() => void>()
  const settings: WatchSettings = {
    vault,
    key: { kind: 'merchant', account, wallet: account.address },
    minIdleThreshold: 0n,
    // Nothing is idle: no sweep deposits, and none sends.
    reserve: await usdcBalance(devnet, account.address),
    intervalMs: 60_000,
    pollMs: 100,
    debounceMs: 100,
    maxLogRange: 1_000n,
    health: { host: '127.0.0.1', port: 0 },
    lockUrl: options.lockUrl,
    lockTiming: { heartbeatMs: 200, retryMs: 200, sessionTimeoutMs: 1_000 },
    maxIdleWaitMs: 3_600_000,
    healthStaleMs: staleMs,
    emit: (event) => {
      events.push(event)
      for (const check of [...waiters]) check()
    },
  }
  const stop = new AbortController()
  running.push({ stop, done: runWatchSweeper(settings, stop.signal) })
  /** The first event at `from` or later that matches, now or when it comes. */
  const next = (match: (event: WatchEvent) => boolean, from = 0) =>
    new Promise<WatchEvent>((resolve) => {
      const check = () => {
        const found = events.slice(from).find(match)
        if (!found) return
        waiters.delete(check)
        resolve(found)
      }
      waiters.add(check)
      check()
    })
  const started = await next((event) => event.event === 'start')
  const url = `${(started as { healthUrl: string }).healthUrl}/healthz`
  /** `GET /healthz`: its status code and body. */
  const health = async () => {
    const response = await fetch(url)
    return { code: response.status, body: (await response.json()) as Record<string, unknown> }
  }
  /**
   * `GET /healthz` until it answers `code`, as a health checker polls it: every 100 ms (the sweeper's
   * own poll). Bounded by the test's timeout.
   */
  const healthUntil = async (code: number) => {
    for (;;) {
      const answer = await health()
      if (answer.code === code) return answer
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  return { events, next, health, healthUntil }
}

describe('x402-vault sweep --watch: /healthz', () => {
  it('an idle chain that answers stays ok however long no block comes; an RPC that stops answering is degraded', async () => {
    const sweeper = await watch({ rpcUrl: rpc.url })
    // Its first sweep, at start, finds nothing idle.
    await sweeper.next((event) => event.event === 'sweep')
    const chain = devnetClients(devnet).publicClient
    const head = await chain.getBlockNumber({ cacheTime: 0 })
    // The scenario is time passing without a block: three stale windows.
    await new Promise((resolve) => setTimeout(resolve, 3 * staleMs))
    expect(await chain.getBlockNumber({ cacheTime: 0 })).toBe(head)
    expect(await sweeper.health()).toMatchObject({
      code: 200,
      body: { status: 'ok', problems: [], role: 'alone', headBlock: head.toString() },
    })

    rpc.setDown(true)
    try {
      await sweeper.next((event) => event.event === 'problem' && event.phase === 'inflow-scan')
      expect(await sweeper.healthUntil(503)).toMatchObject({
        body: { status: 'degraded', problems: ['chain'] },
      })
    } finally {
      rpc.setDown(false)
    }
    expect(await sweeper.healthUntil(200)).toMatchObject({ body: { status: 'ok' } })
  })

  it('with the lock: the holder is ok, a sweeper waiting while Postgres answers is standby, one that cannot reach Postgres is degraded', async () => {
    const cut = await startTcpProxy(postgres.port)
    try {
      const viaCut = postgres.url.replace(`:${postgres.port}/`, `:${cut.port}/`)
      const a = await watch({ rpcUrl: devnet.rpcUrl, lockUrl: viaCut })
      await a.next((event) => event.event === 'lock' && event.state === 'acquired')
      expect(await a.health()).toMatchObject({
        code: 200,
        body: { status: 'ok', problems: [], role: 'holder' },
      })

      const b = await watch({ rpcUrl: devnet.rpcUrl, lockUrl: postgres.url })
      await b.next((event) => event.event === 'lock' && event.state === 'waiting')
      expect(await b.health()).toMatchObject({
        code: 200,
        body: { status: 'standby', problems: [], role: 'standby' },
      })

      // A's Postgres becomes unreachable: A stops sending, and says it is degraded, not ok.
      cut.cut()
      await a.next((event) => event.event === 'lock' && event.state === 'lost')
      expect(await a.health()).toMatchObject({
        code: 503,
        body: { status: 'degraded', problems: ['lock'], role: 'standby' },
      })
      // Still so while its retries fail to reach Postgres.
      const from = a.events.length
      await a.next(
        (event) => event.event === 'problem' && event.code === 'SWEEP_LOCK_UNAVAILABLE',
        from,
      )
      expect(await a.health()).toMatchObject({ code: 503, body: { problems: ['lock'] } })
      // B takes over once Postgres frees A's lock: ok.
      await b.next((event) => event.event === 'lock' && event.state === 'acquired')
      expect(await b.health()).toMatchObject({ code: 200, body: { status: 'ok', role: 'holder' } })
    } finally {
      await cut.stop()
    }
  })
})
