/**
 * The watch sweeper's reports without a chain: its events as JSON lines and readable lines, health
 * (a stale or failing inflow scan is degraded), the Prometheus text, and the lock's key.
 */
import { describe, expect, it } from 'vitest'
import { eventPrinter, humanLine } from '../../../src/cli/watch/events.js'
import {
  healthBody,
  isHealthy,
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
  it('is healthy while the inflow scan is recent and has not failed since', () => {
    expect(isHealthy(state(), 30_000)).toBe(true)
    expect(isHealthy(state({ lastScanOkAt: Date.now() - 60_000 }), 30_000)).toBe(false)
    const now = Date.now()
    expect(isHealthy(state({ lastScanOkAt: now - 10, lastScanErrorAt: now }), 30_000, now)).toBe(
      false,
    )
    expect(healthBody(state(), 30_000)).toMatchObject({
      status: 'ok',
      lagBlocks: '10',
      role: 'alone',
    })
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
