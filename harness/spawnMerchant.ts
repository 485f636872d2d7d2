/**
 * Starts `merchantProcess.ts` as a child process: a merchant web shop with the paywall and its
 * sweeper, as a deployment would run it, for the tests with several processes or a killed one.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import type { Devnet } from '../src/devnet/startDevnet.js'
import { nodeScript } from './nodeScript.js'

/** One JSON line the merchant process wrote: `ready`, `deposit`, `problem`, `swept`, `closed`. */
export type MerchantEvent = Record<string, unknown> & { type: string }

/** A running merchant process: its events as they come, waits on them, its stdin, its end. */
export type MerchantProcess = {
  events: MerchantEvent[]
  /** Resolves with the first event of `type` at or after position `after`. */
  next: (type: string, after?: number) => Promise<MerchantEvent>
  /** Writes one command line to its stdin: `sweep` or `close`. */
  send: (command: string) => void
  /** Asks it to close the paywall and exit; resolves with its exit code. */
  close: () => Promise<number | null>
  /** SIGKILLs it (no clean-up runs), or sends it `signal`. */
  kill: (signal?: NodeJS.Signals) => void
  /** Resolves with its exit code (or `null` when killed by a signal). */
  exited: Promise<number | null>
}

/**
 * Spawns a merchant process whose RPC traffic goes to `rpcUrl` (a proxy in front of the devnet) and
 * whose paywall settles through the devnet's facilitator, with the merchant's key.
 *
 * @param devnet - The devnet, with its facilitator.
 * @param rpcUrl - Where the process sends its RPC requests.
 * @param reserve - The sweeper's reserve, in base units.
 * @param options - `sweep: false` turns its in-process sweeper off; `debounceMs`, the sweeper's
 *   debounce (default 0); `facilitatorUrl`, a facilitator other than the devnet's;
 *   `facilitatorTimeoutMs`, the paywall's `facilitator.timeoutMs` (default its own); `batch`, a
 *   `batch-settlement` route (`GET /tick`) with its channels in the Postgres at `databaseUrl`, in `table`.
 * @returns The process.
 * @example
 * const shop = spawnMerchant(devnet, proxy.url, start - parseUsdc('10'))
 * const { port } = await shop.next('ready')
 */
export function spawnMerchant(
  devnet: Devnet,
  rpcUrl: string,
  reserve: bigint,
  options: {
    sweep?: false
    debounceMs?: number
    facilitatorUrl?: string
    facilitatorTimeoutMs?: number
    batch?: {
      databaseUrl: string
      table: string
      claimIntervalMs: number
      settleIntervalMs: number
    }
  } = {},
): MerchantProcess {
  const child: ChildProcess = spawn(
    process.execPath,
    [nodeScript(join(import.meta.dirname, 'merchantProcess.ts'))],
    {
      cwd: join(import.meta.dirname, '..'),
      env: {
        PATH: process.env.PATH,
        RPC_URL: rpcUrl,
        CHAIN: devnet.chain,
        FACILITATOR_URL: options.facilitatorUrl ?? devnet.facilitatorUrl,
        ADDRESSES: JSON.stringify(devnet.addresses),
        MERCHANT_PRIVATE_KEY: devnet.accounts.merchant.privateKey,
        RESERVE: reserve.toString(),
        ...(options.sweep === false ? { SWEEP: 'off' } : {}),
        ...(options.debounceMs === undefined ? {} : { DEBOUNCE_MS: String(options.debounceMs) }),
        ...(options.facilitatorTimeoutMs === undefined
          ? {}
          : { FACILITATOR_TIMEOUT_MS: String(options.facilitatorTimeoutMs) }),
        ...(options.batch
          ? {
              BATCH_DATABASE_URL: options.batch.databaseUrl,
              BATCH_TABLE: options.batch.table,
              CLAIM_INTERVAL_MS: String(options.batch.claimIntervalMs),
              SETTLE_INTERVAL_MS: String(options.batch.settleIntervalMs),
            }
          : {}),
      },
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  )
  const events: MerchantEvent[] = []
  const waiters: (() => void)[] = []
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
  void (async () => {
    for await (const line of createInterface({ input: child.stdout as NodeJS.ReadableStream })) {
      events.push(JSON.parse(line) as MerchantEvent)
      for (const waiter of waiters.splice(0)) waiter()
    }
  })()
  const next = (type: string, after = 0): Promise<MerchantEvent> =>
    new Promise((resolve) => {
      const check = () => {
        const found = events.slice(after).find((event) => event.type === type)
        if (found) resolve(found)
        else waiters.push(check)
      }
      check()
    })
  return {
    events,
    next,
    send: (command) => {
      child.stdin?.write(`${command}\n`)
    },
    close() {
      child.stdin?.end('close\n')
      return exited
    },
    kill: (signal = 'SIGKILL') => {
      child.kill(signal)
    },
    exited,
  }
}

/**
 * Manual sweeps, one process at a time, until none finds anything to deposit (at most five passes):
 * each queues behind its own process's sweep in flight, so the last ones see the settled wallet.
 *
 * @param shops - Merchant processes with their sweeper on.
 * @example
 * await sweepUntilIdle(shops)
 */
export async function sweepUntilIdle(shops: MerchantProcess[]): Promise<void> {
  for (let pass = 0; pass < 5; pass++) {
    const results = []
    for (const shop of shops) {
      const before = shop.events.length
      shop.send('sweep')
      results.push(await shop.next('swept', before))
    }
    if (results.every((result) => result.deposited === false)) return
  }
}
