/**
 * The watch sweeper's reports without a chain: its events as JSON lines and readable lines, health
 * (`ok`, `standby`, or `degraded` by a stale or failing inflow scan, a lock whose Postgres does not
 * answer, a failed sweep), the Prometheus text, and the lock's key.
 */
import { describe, expect, it } from 'vitest'
import { eventPrinter, humanLine } from '../../../src/cli/watch/events.js'
import {
  healthBody,
  healthOf,
  metricsText,
  type WatchState,
} from '../../../src/cli/watch/health.js'
import { lockKey } from '../../../src/cli/watch/postgresLock.js'

const wallet = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'
const state = (patch: Partial<WatchState> = {}): WatchState => ({
  chain: 'base-sepolia',
  wallet,
  sender: wallet,
  startedAt: 1_000,
  role: 'alone',
  lock: undefined,
  headBlock: 110n,
  scannedBlock: 100n,
  lastScanOkAt: Date.now(),
  lastScanErrorAt: undefined,
  lastSweep: undefined,
  lastError: undefined,
  sweptUnits: 125_000_000n,
  sweeps: { deposited: 2, nothing: 1, failed: 0 },
  errors: { 'inflow-scan': 3 },
  inflows: 4,
  senderBalanceWei: 10n ** 18n,
  ...patch,
})

describe('watch events', () => {
  it('prints one JSON line per event, bigints as strings, or a readable line on a terminal', () => {
    const lines: string[] = []
    const emit = eventPrinter((line) => lines.push(line), false)
    emit({ event: 'lock', state: 'acquired' })
    expect(lines).toHaveLength(1)
    expect(lines[0]?.endsWith('\n')).toBe(true)
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({ event: 'lock', state: 'acquired' })
    const stamped = eventPrinter(() => {}, true)({
      event: 'deposit',
      txHash: '0xabc',
      amount: { usdc: '25', atomic: '25000000' },
      sharesMinted: '25000000',
      block: '7',
      method: 'deposit',
    })
    expect(humanLine(stamped)).toMatch(
      /^\d\d:\d\d:\d\d {2}deposit {2}25 USDC in block 7 \(tx 0xabc\)$/,
    )
  })
})

describe('watch health and metrics', () => {
  it('is ok while the inflow scan is recent and has not failed since', () => {
    const now = Date.now()
    expect(healthOf(state(), 30_000, now)).toEqual({ status: 'ok', problems: [] })
    expect(healthOf(state({ lastScanOkAt: now - 60_000 }), 30_000, now)).toEqual({
      status: 'degraded',
      problems: ['chain'],
    })
    expect(
      healthOf(state({ lastScanOkAt: now - 10, lastScanErrorAt: now }), 30_000, now),
    ).toMatchObject({ status: 'degraded', problems: ['chain'] })
    expect(healthBody(state(), 30_000)).toMatchObject({
      status: 'ok',
      problems: [],
      lagBlocks: '10',
      role: 'alone',
      lastLockAnswerAt: null,
    })
  })

  it('with a lock: the holder is ok; a standby is standby while Postgres answers, degraded once it does not', () => {
    const now = Date.now()
    const withLock = (
      role: WatchState['role'],
      answeredAt: number | undefined,
      failedAt?: number,
    ) => healthOf(state({ role, lock: { answeredAt, failedAt } }), 30_000, now)
    expect(withLock('holder', now - 100)).toEqual({ status: 'ok', problems: [] })
    expect(withLock('standby', now - 100)).toEqual({ status: 'standby', problems: [] })
    // Postgres failed after its last answer, or has not answered for too long, or ever.
    for (const health of [
      withLock('standby', now - 100, now - 50),
      withLock('standby', now - 60_000),
      withLock('standby', undefined),
    ]) {
      expect(health).toEqual({ status: 'degraded', problems: ['lock'] })
    }
    // The RPC down as well: both said.
    expect(
      healthOf(
        state({ role: 'standby', lock: { answeredAt: undefined, failedAt: now }, lastScanOkAt: 0 }),
        30_000,
        now,
      ),
    ).toEqual({ status: 'degraded', problems: ['chain', 'lock'] })
  })

  it('a last sweep that failed is degraded until a sweep succeeds', () => {
    const sweep = (reason: string | null) => ({
      at: Date.now(),
      deposited: reason === null,
      reason,
      idleAmount: null,
      txHash: null,
    })
    expect(healthOf(state({ lastSweep: sweep('failed') }), 30_000)).toEqual({
      status: 'degraded',
      problems: ['sweep'],
    })
    for (const reason of [null, 'below-threshold', 'paused']) {
      expect(healthOf(state({ lastSweep: sweep(reason) }), 30_000).status).toBe('ok')
    }
  })

  it('serves the Prometheus text: sweeps, errors by phase, USDC swept, ETH, lag, lock', () => {
    const text = metricsText(state({ role: 'standby' }))
    for (const line of [
      '# TYPE x402_vault_sweeper_sweeps_total counter',
      'x402_vault_sweeper_sweeps_total{result="deposited"} 2',
      'x402_vault_sweeper_errors_total{phase="inflow-scan"} 3',
      'x402_vault_sweeper_swept_usdc_total 125',
      'x402_vault_sweeper_sender_balance_eth 1',
      'x402_vault_sweeper_head_lag_blocks 10',
      'x402_vault_sweeper_lock_held 0',
    ]) {
      expect(text.split('\n')).toContain(line)
    }
  })

  it('keys the lock by chain and wallet, in any letter case, as a signed 64-bit integer', () => {
    const key = lockKey(84532, wallet)
    expect(key).toBe(lockKey(84532, wallet.toLowerCase() as typeof wallet))
    expect(key).not.toBe(lockKey(8453, wallet))
    expect(BigInt(key)).toBe(BigInt.asIntN(64, BigInt(key)))
  })
})
