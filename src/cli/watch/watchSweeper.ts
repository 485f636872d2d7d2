import { getBalance, getBlockNumber, getGasPrice } from 'viem/actions'
import {
  ensureInitializedAndWait,
  isRegistered,
  type SweepResult,
  type VaultContext,
  type VaultErrorCode,
} from '../../index.js'
import {
  resolveSweepSettings,
  resolveSweepTuning,
  SettlementRecord,
  type SweeperParts,
  SweepScheduler,
  sweepGas,
  sweepObservers,
  sweepWithRetries,
  toVaultError,
} from '../../sdk/shared.js'
import type { SweepKey } from '../sweepKey.js'
import { eventAmount, type WatchEvent } from './events.js'
import { startHealthServer, type WatchState } from './health.js'
import { watchInflows } from './inflows.js'
import { type LockTiming, lockKey, postgresLock, type SweepLock } from './postgresLock.js'

/** What `x402-vault sweep --watch` runs with, checked. */
export type WatchSettings = {
  vault: VaultContext
  key: SweepKey
  minIdleThreshold: bigint
  reserve: bigint
  /** A timer sweep every this many ms, for what the logs miss. */
  intervalMs: number
  /** How often the chain head is polled for inflows, in ms. */
  pollMs: number
  /** Inflows within this many ms become one sweep. */
  debounceMs: number
  /** The largest `eth_getLogs` block range. */
  maxLogRange: bigint
  /** Serve `/healthz` and `/metrics` here, when set. */
  health: { host: string; port: number } | undefined
  /** The Postgres URL of the lock, when set. */
  lockUrl: string | undefined
  lockTiming?: LockTiming | undefined
  /** Warn when idle USDC above the threshold has waited longer than this, in ms. */
  maxIdleWaitMs: number
  /**
   * `/healthz` is `degraded` once the last scan (or, with the lock, Postgres's last answer) is older
   * than this, in ms. Default: 3 × `pollMs`, and at least 30 s.
   */
  healthStaleMs?: number | undefined
  emit: (event: WatchEvent) => void
}

/** The low-gas warning fires below the ETH that this many sweeps need. */
const sweepsOfGas = 10n

/**
 * Runs the watch sweeper until `stop` aborts: watches the wallet's USDC inflows, sweeps after them
 * (debounced, single flight, one follow-up) and on a timer, with the usual rule, retries and
 * reports; with a lock, sweeps only while holding it. On `stop` it finishes the sweep in flight,
 * releases the lock and resolves.
 *
 * @param settings - What to watch and how.
 * @param stop - Aborts on SIGTERM or SIGINT.
 * @returns Resolves once everything has stopped.
 */
export async function runWatchSweeper(settings: WatchSettings, stop: AbortSignal): Promise<void> {
  const { vault, key, emit } = settings
  const wallet = key.wallet
  const sender = key.account.address
  const startBlock = await getBlockNumber(vault.publicClient, { cacheTime: 0 }).catch((error) => {
    throw toVaultError(error, { action: 'Latest block read' })
  })
  const state: WatchState = {
    chain: vault.chain,
    wallet,
    sender,
    startedAt: Date.now(),
    role: settings.lockUrl ? 'standby' : 'alone',
    lock: settings.lockUrl ? { answeredAt: undefined, failedAt: undefined } : undefined,
    headBlock: startBlock,
    scannedBlock: startBlock,
    lastScanOkAt: Date.now(),
    lastScanErrorAt: undefined,
    lastSweep: undefined,
    lastError: undefined,
    sweptUnits: 0n,
    sweeps: { deposited: 0, nothing: 0, failed: 0 },
    errors: {},
    inflows: 0,
    senderBalanceWei: undefined,
  }
  const problem = (
    phase: string,
    error: { code: VaultErrorCode; message: string },
    willRetry: boolean,
  ) => {
    state.errors[phase] = (state.errors[phase] ?? 0) + 1
    state.lastError = { at: Date.now(), phase, code: error.code, message: error.message }
    if (phase === 'lock' && state.lock) state.lock.failedAt = Date.now()
    emit({ event: 'problem', phase, code: error.code, message: error.message, willRetry })
  }

  // Idle USDC above the threshold that no sweep could deposit: since when, and whether we warned.
  let idleSince: number | undefined
  let idleWarned = false
  let lowGasWarned = false
  const checkIdleWait = () => {
    if (idleSince === undefined || idleWarned) return
    const waitedMs = Date.now() - idleSince
    if (waitedMs <= settings.maxIdleWaitMs) return
    idleWarned = true
    emit({
      event: 'warning',
      kind: 'idle-waiting',
      message: `idle USDC above the threshold has waited ${Math.round(waitedMs / 1000)} s without a deposit, or sweeps have failed that long (last: ${state.lastSweep?.reason ?? state.lastError?.code ?? 'unknown'})`,
      details: { waitedS: Math.round(waitedMs / 1000), since: new Date(idleSince).toISOString() },
    })
  }
  const idleWaiting = (waiting: boolean) => {
    if (!waiting) {
      idleSince = undefined
      idleWarned = false
    } else idleSince ??= Date.now()
    checkIdleWait()
  }

  const checkGas = async () => {
    try {
      const [balance, gasPrice] = await Promise.all([
        getBalance(vault.publicClient, { address: sender }),
        getGasPrice(vault.publicClient),
      ])
      state.senderBalanceWei = balance
      const need = gasPrice * sweepGas * sweepsOfGas
      if (balance >= need) {
        lowGasWarned = false
        return
      }
      if (lowGasWarned) return
      lowGasWarned = true
      emit({
        event: 'warning',
        kind: 'low-gas',
        message: `the sending key ${sender} holds ${balance} wei of ETH, less than ${sweepsOfGas} sweeps need (${need} wei at ${gasPrice} wei of gas price): fund it`,
        details: { sender, balanceWei: balance, neededWei: need, gasPriceWei: gasPrice },
      })
    } catch (error) {
      problem('gas-read', toVaultError(error, { action: 'Gas read' }), true)
    }
  }

  let lock: SweepLock | undefined
  let onLost: (() => void) | undefined
  if (settings.lockUrl) {
    lock = await postgresLock(
      settings.lockUrl,
      lockKey(vault.chainId, wallet),
      {
        lost: (reason) => {
          state.role = 'standby'
          problem('lock', { code: 'SWEEP_LOCK_LOST', message: `Stopped sending: ${reason}.` }, true)
          emit({ event: 'lock', state: 'lost', reason })
          onLost?.()
        },
        problem: (message) => problem('lock', { code: 'SWEEP_LOCK_UNAVAILABLE', message }, true),
        waiting: () => emit({ event: 'lock', state: 'waiting' }),
        answered: () => {
          if (state.lock) state.lock.answeredAt = Date.now()
        },
      },
      settings.lockTiming,
    )
  }

  const tuning = resolveSweepTuning({ debounceMs: settings.debounceMs, maxDebounceMs: 5_000 })
  const parts: SweeperParts = {
    ctx: vault,
    settings: resolveSweepSettings(vault, {
      wallet,
      minIdleThreshold: settings.minIdleThreshold,
      reserve: settings.reserve,
    }),
    // The watch sweeper knows of no settlements: it sweeps balances.
    record: new SettlementRecord(1),
    observers: sweepObservers({
      onIdleDeposit: (deposit) => {
        state.sweptUnits += deposit.idleAmount
        emit({
          event: 'deposit',
          txHash: deposit.txHash,
          amount: eventAmount(deposit.idleAmount),
          sharesMinted: deposit.sharesMinted.toString(),
          block: deposit.blockNumber.toString(),
          method: deposit.method,
        })
      },
      onNonFatalError: ({ phase, error, willRetry }) => problem(phase, error, willRetry),
    }),
    beforeSend: lock ? () => lock.assertHeld() : undefined,
  }

  let registered = key.kind === 'operator' || (await isRegistered(vault, { wallet }))
  const sweep = async (signal: AbortSignal) => {
    if (!registered) {
      try {
        await parts.beforeSend?.()
        await ensureInitializedAndWait(vault)
        registered = true
      } catch (error) {
        problem('register', toVaultError(error), false)
        return
      }
    }
    const startedAt = Date.now()
    const result = await sweepWithRetries(parts, tuning.retry, signal)
    reportSweep(result, startedAt, signal.aborted)
    await checkGas()
  }
  const reportSweep = (result: SweepResult | undefined, startedAt: number, aborted: boolean) => {
    const reason = result
      ? result.deposited
        ? null
        : result.reason
      : aborted
        ? 'aborted'
        : 'failed'
    state.sweeps[result ? (result.deposited ? 'deposited' : 'nothing') : 'failed']++
    state.lastSweep = {
      at: Date.now(),
      deposited: result?.deposited ?? false,
      reason,
      idleAmount: result?.idleAmount ?? null,
      txHash: result?.deposited ? result.txHash : null,
    }
    emit({
      event: 'sweep',
      startedAt: new Date(startedAt).toISOString(),
      ms: Date.now() - startedAt,
      deposited: result?.deposited ?? false,
      reason,
      walletBalance: result ? eventAmount(result.walletBalance) : null,
      idleAmount: result ? eventAmount(result.idleAmount) : null,
    })
    // Money above the threshold waits when the vault refuses it (paused, capped) or sweeps fail.
    idleWaiting(
      result === undefined
        ? !aborted
        : !result.deposited && ['paused', 'tvl-cap'].includes(reason ?? ''),
    )
  }

  let scheduler: SweepScheduler | undefined
  const inflows = watchInflows(vault, wallet, {
    afterBlock: startBlock,
    pollMs: settings.pollMs,
    maxRange: settings.maxLogRange,
    maxBackoffMs: Math.max(settings.pollMs, 30_000),
    onHead: (head) => {
      state.headBlock = head
      checkIdleWait()
    },
    onScanned: (block) => {
      state.scannedBlock = block
      state.lastScanOkAt = Date.now()
    },
    onInflow: (inflow) => {
      state.inflows++
      emit({
        event: 'inflow',
        txHash: inflow.txHash,
        from: inflow.from,
        amount: eventAmount(inflow.amount),
        block: inflow.block.toString(),
      })
      scheduler?.request()
    },
    onProblem: (error, retryInMs) => {
      state.lastScanErrorAt = Date.now()
      problem('inflow-scan', error, retryInMs > 0)
    },
  })

  const health = settings.health
    ? await startHealthServer(state, {
        ...settings.health,
        staleMs: settings.healthStaleMs ?? Math.max(3 * settings.pollMs, 30_000),
      })
    : undefined

  emit({
    event: 'start',
    chain: vault.chain,
    wallet,
    sender,
    key: key.kind,
    minIdle: eventAmount(settings.minIdleThreshold),
    reserve: eventAmount(settings.reserve),
    lock: lock !== undefined,
    healthUrl: health?.url ?? null,
    fromBlock: startBlock.toString(),
  })
  await checkGas()

  const stopped = new Promise<void>((resolve) => {
    if (stop.aborted) resolve()
    stop.addEventListener('abort', () => resolve(), { once: true })
  })
  const sweepWhileAllowed = async () => {
    while (!stop.aborted) {
      if (lock) {
        state.role = 'standby'
        try {
          await lock.acquire(stop)
        } catch {
          return // stopped while waiting
        }
        state.role = 'holder'
        emit({ event: 'lock', state: 'acquired' })
      }
      const current = new SweepScheduler(sweep, {
        ...tuning.timing,
        intervalMs: settings.intervalMs,
      })
      scheduler = current
      // Whatever arrived before, or while another sweeper held the lock, is swept now.
      current.request()
      const lost = lock
        ? new Promise<void>((resolve) => {
            onLost = resolve
          })
        : new Promise<void>(() => {})
      await Promise.race([stopped, lost])
      scheduler = undefined
      // Stops every later sweep at once; the one in flight cannot send any more (the lock refuses).
      await current.detach()
    }
  }
  await sweepWhileAllowed()
  await inflows.stop()
  if (lock?.held) emit({ event: 'lock', state: 'released' })
  await lock?.release()
  await health?.close()
  emit({ event: 'stop', reason: 'stopped on request; the sweep in flight has ended' })
}
