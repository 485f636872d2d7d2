import type { Address } from 'viem'
import type { VaultContext } from '../../index.js'
import type { SweepKey } from '../sweepKey.js'
import { UsageError } from '../usageError.js'
import { eventPrinter } from './events.js'
import { runWatchSweeper } from './watchSweeper.js'

/** The `--watch` flags, as parsed. */
type WatchFlags = {
  json: boolean
  interval: string
  poll: string
  debounce: string
  'log-range': string
  'health-port'?: string | undefined
  'health-host': string
  lock?: string | undefined
  'max-idle-wait': string
}

/**
 * Runs `x402-vault sweep --watch` until SIGTERM or SIGINT: events on stdout, one JSON line each
 * (readable lines when stdout is a terminal, unless `--json`).
 *
 * @param vault - A vault context that signs with the sweeping key.
 * @param key - The sweeping key and the wallet.
 * @param options - The wallet and the rule's amounts.
 * @param flags - The watch flags.
 * @returns The exit code: 0 once stopped.
 */
export async function runWatchCommand(
  vault: VaultContext,
  key: SweepKey,
  options: { wallet: Address; minIdleThreshold: bigint; reserve: bigint },
  flags: WatchFlags,
): Promise<number> {
  const seconds = (text: string, flag: string) => {
    const value = Number(text)
    if (!/^\d+(\.\d+)?$/.test(text) || !(value > 0)) {
      throw new UsageError(
        `${flag} must be a positive number of seconds, not ${JSON.stringify(text)}.`,
      )
    }
    return Math.round(value * 1000)
  }
  const whole = (text: string, flag: string, min: number, max = Number.MAX_SAFE_INTEGER) => {
    const value = Number(text)
    if (!/^\d+$/.test(text) || value < min || value > max) {
      throw new UsageError(
        `${flag} must be a whole number from ${min} to ${max}, not ${JSON.stringify(text)}.`,
      )
    }
    return value
  }
  const healthPort =
    flags['health-port'] === undefined
      ? undefined
      : whole(flags['health-port'], '--health-port', 0, 65_535)
  const lockUrl = flags.lock
  if (lockUrl !== undefined && !/^postgres(ql)?:\/\//.test(lockUrl)) {
    throw new UsageError('--lock must be a Postgres URL: postgres://user@host:5432/database.')
  }
  const settings = {
    vault,
    key,
    minIdleThreshold: options.minIdleThreshold,
    reserve: options.reserve,
    intervalMs: seconds(flags.interval, '--interval'),
    pollMs: seconds(flags.poll, '--poll'),
    debounceMs: whole(flags.debounce, '--debounce', 0),
    maxLogRange: BigInt(whole(flags['log-range'], '--log-range', 1)),
    health: healthPort === undefined ? undefined : { host: flags['health-host'], port: healthPort },
    lockUrl,
    maxIdleWaitMs: seconds(flags['max-idle-wait'], '--max-idle-wait'),
    emit: eventPrinter(
      (line) => process.stdout.write(line),
      process.stdout.isTTY === true && !flags.json,
    ),
  }
  const stop = new AbortController()
  const onSignal = (signal: NodeJS.Signals) => stop.abort(new Error(signal))
  process.once('SIGTERM', onSignal)
  process.once('SIGINT', onSignal)
  try {
    await runWatchSweeper(settings, stop.signal)
  } finally {
    process.off('SIGTERM', onSignal)
    process.off('SIGINT', onSignal)
  }
  return 0
}
