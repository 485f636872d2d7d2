import { formatUsdc } from '../../index.js'
import { toJsonSafe } from '../../sdk/shared.js'

/** A USDC amount in an event: decimal USDC and base units. */
export type EventAmount = { usdc: string; atomic: string }

/** What the watch sweeper reports, one event at a time. */
export type WatchEvent =
  | {
      event: 'start'
      chain: string
      wallet: string
      sender: string
      key: 'merchant' | 'operator'
      minIdle: EventAmount
      reserve: EventAmount
      lock: boolean
      healthUrl: string | null
      /** The block the inflow scan starts after. */
      fromBlock: string
    }
  | { event: 'lock'; state: 'acquired' | 'waiting' | 'lost' | 'released'; reason?: string }
  | {
      event: 'inflow'
      txHash: string
      from: string
      amount: EventAmount
      block: string
    }
  | {
      event: 'sweep'
      startedAt: string
      ms: number
      deposited: boolean
      /** Why nothing was deposited; `null` after a deposit, `failed` when every attempt failed. */
      reason: string | null
      walletBalance: EventAmount | null
      idleAmount: EventAmount | null
    }
  | {
      event: 'deposit'
      txHash: string
      amount: EventAmount
      sharesMinted: string
      block: string
      method: string
    }
  | { event: 'problem'; phase: string; code: string; message: string; willRetry: boolean }
  | {
      event: 'warning'
      kind: 'low-gas' | 'idle-waiting'
      message: string
      details: Record<string, unknown>
    }
  | { event: 'stop'; reason: string }

/** A stamped event, as printed. */
export type StampedEvent = WatchEvent & { time: string }

/** Shows an amount in base units in an event. */
export const eventAmount = (amount: bigint): EventAmount => ({
  usdc: formatUsdc(amount),
  atomic: amount.toString(),
})

/**
 * Prints events: one JSON object per line for log shippers, or one readable line each on a terminal.
 *
 * @param write - Where a line goes (stdout).
 * @param human - Readable lines instead of JSON.
 * @returns `emit(event)`, which also returns the stamped event.
 */
export function eventPrinter(write: (line: string) => void, human: boolean) {
  return (event: WatchEvent): StampedEvent => {
    const stamped = { time: new Date().toISOString(), ...event } as StampedEvent
    write(`${human ? humanLine(stamped) : JSON.stringify(toJsonSafe(stamped))}\n`)
    return stamped
  }
}

const usdc = (amount: EventAmount | null) => (amount ? `${amount.usdc} USDC` : '?')

/** One event as a person reads it on a terminal. */
export function humanLine(event: StampedEvent): string {
  const time = event.time.slice(11, 19)
  const text = ((): string => {
    switch (event.event) {
      case 'start':
        return `watching ${event.wallet} on ${event.chain} from block ${event.fromBlock}: sweeping above ${usdc(event.reserve)} (min ${usdc(event.minIdle)}) with the ${event.key} key ${event.sender}${event.lock ? ', under a lock' : ''}${event.healthUrl ? `; health at ${event.healthUrl}` : ''}`
      case 'lock':
        return `lock ${event.state}${event.reason ? `: ${event.reason}` : ''}`
      case 'inflow':
        return `inflow   ${usdc(event.amount)} from ${event.from} in block ${event.block} (tx ${event.txHash})`
      case 'sweep':
        return event.deposited
          ? `sweep    deposited ${usdc(event.idleAmount)} (${event.ms} ms)`
          : `sweep    nothing deposited: ${event.reason} (idle ${usdc(event.idleAmount)}, ${event.ms} ms)`
      case 'deposit':
        return `deposit  ${usdc(event.amount)} in block ${event.block} (tx ${event.txHash})`
      case 'problem':
        return `problem  ${event.phase}: ${event.code}: ${event.message}${event.willRetry ? ' (retrying)' : ''}`
      case 'warning':
        return `WARNING  ${event.message}`
      case 'stop':
        return `stopped: ${event.reason}`
    }
  })()
  return `${time}  ${text}`
}
