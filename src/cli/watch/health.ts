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
 * Whether the sweeper is healthy: its inflow scan succeeded lately (within `staleMs`) and did not
 * fail since.
 */
export function isHealthy(state: WatchState, staleMs: number, now = Date.now()): boolean {
  if (state.lastScanOkAt === undefined || now - state.lastScanOkAt > staleMs) return false
  return state.lastScanErrorAt === undefined || state.lastScanErrorAt < state.lastScanOkAt
}

/** `GET /healthz`'s body. */
export function healthBody(state: WatchState, staleMs: number) {
  const iso = (at: number | undefined) => (at === undefined ? null : new Date(at).toISOString())
  return toJsonSafe({
    status: isHealthy(state, staleMs) ? 'ok' : 'degraded',
    chain: state.chain,
    wallet: state.wallet,
    sender: state.sender,
    role: state.role,
    uptimeS: Math.round((Date.now() - state.startedAt) / 1000),
    headBlock: state.headBlock ?? null,
    scannedBlock: state.scannedBlock,
    lagBlocks: lagBlocks(state),
    lastScanAt: iso(state.lastScanOkAt),
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
 * Serves `GET /healthz` (200 when healthy, else 503, with a JSON body) and `GET /metrics`
 * (Prometheus text) on `host:port`.
 *
 * @param state - Read on each request.
 * @param options - `host`, `port` (0 for a free one), `staleMs` (how old a scan may be and still be healthy).
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
      const healthy = isHealthy(state, options.staleMs)
      response
        .writeHead(healthy ? 200 : 503, { 'Content-Type': 'application/json' })
        .end(`${JSON.stringify(healthBody(state, options.staleMs))}\n`)
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
