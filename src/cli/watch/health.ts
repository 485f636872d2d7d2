import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { formatEther } from 'viem'
import { formatUsdc } from '../../index.js'
import { toJsonSafe } from '../../sdk/shared.js'

/** What the watch sweeper knows about itself: what `/healthz` and `/metrics` report. */
export type WatchState = {
  chain: string
  wallet: string
  sender: string
  startedAt: number
  /** `alone` without a lock; with one, `holder` or `standby`. */
  role: 'alone' | 'holder' | 'standby'
  /**
   * With `--lock`: when Postgres last answered a query of the lock, and when one last failed (or the
   * lock was lost). `undefined` without a lock.
   */
  lock: { answeredAt: number | undefined; failedAt: number | undefined } | undefined
  headBlock: bigint | undefined
  /** The last block the inflow scan has read. */
  scannedBlock: bigint
  lastScanOkAt: number | undefined
  lastScanErrorAt: number | undefined
  lastSweep:
    | {
        at: number
        deposited: boolean
        reason: string | null
        idleAmount: bigint | null
        txHash: string | null
      }
    | undefined
  lastError: { at: number; phase: string; code: string; message: string } | undefined
  /** USDC deposited by this process, base units. */
  sweptUnits: bigint
  sweeps: { deposited: number; nothing: number; failed: number }
  errors: Record<string, number>
  inflows: number
  /** The sending key's ETH balance in wei, last read. */
  senderBalanceWei: bigint | undefined
}

/** Blocks between the chain head and the last block scanned; `null` before the first scan. */
export const lagBlocks = (state: WatchState): bigint | null =>
  state.headBlock === undefined
    ? null
    : state.headBlock > state.scannedBlock
      ? state.headBlock - state.scannedBlock
      : 0n

/**
 * Why a sweeper cannot promise that money above the threshold will be swept:
 * - `chain`: its inflow scan has not succeeded within the stale window, or failed since (the RPC does
 *   not answer: inflows go unseen, and no sweep could send);
 * - `lock`: with `--lock`, it does not hold the lock and Postgres has not answered within the stale
 *   window, or failed since: it cannot take over, and may be the only sweeper left;
 * - `sweep`: its last sweep failed, every attempt (the next one may succeed).
 */
export type HealthProblem = 'chain' | 'lock' | 'sweep'

/** What `/healthz` says: its status, and why when it is `degraded`. */
export type Health = {
  /**
   * `ok`: this sweeper sweeps (no lock, or it holds the lock) and nothing is wrong. `standby`: another
   * sweeper holds the lock, and this one, whose RPC and Postgres answer, takes over when that one
   * stops. `degraded`: `problems` says why money above the threshold may not be swept.
   */
  status: 'ok' | 'standby' | 'degraded'
  problems: HealthProblem[]
}

/** Whether `answeredAt` is within `staleMs` of `now` and no failure came after it. */
const answersLately = (
  answeredAt: number | undefined,
  failedAt: number | undefined,
  staleMs: number,
  now: number,
) =>
  answeredAt !== undefined &&
  now - answeredAt <= staleMs &&
  (failedAt === undefined || failedAt < answeredAt)

/**
 * The sweeper's health: `ok`, `standby` or `degraded` with its problems (see {@link Health}). A chain
 * without new blocks is no problem while the RPC answers.
 *
 * @param state - The sweeper's state.
 * @param staleMs - How old the last scan (or Postgres answer) may be.
 * @param now - The time to judge at.
 * @returns The status and the problems.
 */
export function healthOf(state: WatchState, staleMs: number, now = Date.now()): Health {
  const problems: HealthProblem[] = []
  if (!answersLately(state.lastScanOkAt, state.lastScanErrorAt, staleMs, now)) {
    problems.push('chain')
  }
  if (
    state.lock &&
    state.role !== 'holder' &&
    !answersLately(state.lock.answeredAt, state.lock.failedAt, staleMs, now)
  ) {
    problems.push('lock')
  }
  if (state.lastSweep?.reason === 'failed') problems.push('sweep')
  const status = problems.length > 0 ? 'degraded' : state.role === 'standby' ? 'standby' : 'ok'
  return { status, problems }
}

/** `GET /healthz`'s body, with the health it reports (by default, as of now). */
export function healthBody(
  state: WatchState,
  staleMs: number,
  health: Health = healthOf(state, staleMs),
) {
  const iso = (at: number | undefined) => (at === undefined ? null : new Date(at).toISOString())
  return toJsonSafe({
    ...health,
    chain: state.chain,
    wallet: state.wallet,
    sender: state.sender,
    role: state.role,
    uptimeS: Math.round((Date.now() - state.startedAt) / 1000),
    headBlock: state.headBlock ?? null,
    scannedBlock: state.scannedBlock,
    lagBlocks: lagBlocks(state),
    lastScanAt: iso(state.lastScanOkAt),
    lastLockAnswerAt: iso(state.lock?.answeredAt),
    lastSweep: state.lastSweep
      ? {
          ...state.lastSweep,
          at: iso(state.lastSweep.at),
          idleAmount:
            state.lastSweep.idleAmount === null ? null : formatUsdc(state.lastSweep.idleAmount),
        }
      : null,
    lastError: state.lastError ? { ...state.lastError, at: iso(state.lastError.at) } : null,
  })
}

/** Escapes a Prometheus label value. */
const label = (value: string) => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')

/**
 * The Prometheus text exposition of the sweeper's state.
 *
 * @param state - The sweeper's state.
 * @returns The `/metrics` body.
 */
export function metricsText(state: WatchState): string {
  const lines: string[] = []
  const metric = (
    name: string,
    type: 'gauge' | 'counter',
    help: string,
    samples: [labels: string, value: string | number][],
  ) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`)
    for (const [labels, value] of samples) lines.push(`${name}${labels} ${value}`)
  }
  metric('x402_vault_sweeper_info', 'gauge', 'The wallet swept and the key that sends.', [
    [
      `{chain="${label(state.chain)}",wallet="${label(state.wallet)}",sender="${label(state.sender)}",role="${state.role}"}`,
      1,
    ],
  ])
  metric(
    'x402_vault_sweeper_last_sweep_timestamp_seconds',
    'gauge',
    'When the last sweep ended (Unix time); 0 before the first.',
    [['', state.lastSweep ? Math.floor(state.lastSweep.at / 1000) : 0]],
  )
  metric('x402_vault_sweeper_swept_usdc_total', 'counter', 'USDC deposited into the vault.', [
    ['', formatUsdc(state.sweptUnits)],
  ])
  metric(
    'x402_vault_sweeper_sweeps_total',
    'counter',
    'Sweeps by result: deposited, nothing (the rule said no), failed (every attempt failed).',
    Object.entries(state.sweeps).map(([result, count]) => [`{result="${result}"}`, count]),
  )
  metric(
    'x402_vault_sweeper_errors_total',
    'counter',
    'Problems by phase: inflow-scan, lock, balance-read, deposit, receipt, gas-read.',
    Object.entries(state.errors).map(([phase, count]) => [`{phase="${label(phase)}"}`, count]),
  )
  metric(
    'x402_vault_sweeper_sender_balance_eth',
    'gauge',
    "The sending key's ETH balance, which pays the sweeps' gas.",
    state.senderBalanceWei === undefined ? [] : [['', formatEther(state.senderBalanceWei)]],
  )
  const lag = lagBlocks(state)
  metric(
    'x402_vault_sweeper_head_lag_blocks',
    'gauge',
    'Blocks between the chain head and the last block the inflow scan read.',
    lag === null ? [] : [['', lag.toString()]],
  )
  metric('x402_vault_sweeper_inflows_total', 'counter', 'USDC transfers to the wallet seen.', [
    ['', state.inflows],
  ])
  metric(
    'x402_vault_sweeper_lock_held',
    'gauge',
    '1 while this process may send (no lock, or the lock held), else 0.',
    [['', state.role === 'standby' ? 0 : 1]],
  )
  return `${lines.join('\n')}\n`
}

/**
 * Serves `GET /healthz` (200 for `ok` and `standby`, 503 for `degraded`, with a JSON body: see
 * {@link healthOf}) and `GET /metrics` (Prometheus text) on `host:port`.
 *
 * @param state - Read on each request.
 * @param options - `host`, `port` (0 for a free one), `staleMs` (how old a scan, or Postgres's last
 *   answer, may be and still be healthy).
 * @returns The server and its URL.
 */
export async function startHealthServer(
  state: WatchState,
  options: { host: string; port: number; staleMs: number },
): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0]
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { Allow: 'GET, HEAD' }).end()
      return
    }
    if (path === '/healthz') {
      const health = healthOf(state, options.staleMs)
      response
        .writeHead(health.status === 'degraded' ? 503 : 200, { 'Content-Type': 'application/json' })
        .end(`${JSON.stringify(healthBody(state, options.staleMs, health))}\n`)
      return
    }
    if (path === '/metrics') {
      response
        .writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' })
        .end(metricsText(state))
      return
    }
    response.writeHead(404, { 'Content-Type': 'text/plain' }).end('GET /healthz or /metrics\n')
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, resolve)
  })
  const { port } = server.address() as AddressInfo
  const host = options.host.includes(':') ? `[${options.host}]` : options.host
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
