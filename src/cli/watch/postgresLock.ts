import type { Client, ClientConfig } from 'pg'
import { type Address, keccak256, stringToHex } from 'viem'
import { VaultPreconditionError } from '../../index.js'
import { redactUrl, sleep } from '../../sdk/shared.js'
import { UsageError } from '../usageError.js'

/*
 * One sender at a time, for two (or more) watch sweepers of one wallet: a Postgres session-level
 * advisory lock keyed by chain and wallet. The holder sweeps; the others wait and try again.
 *
 * Losing it safely: Postgres frees the lock when the holder's session ends, which happens at once when
 * its process dies (the socket closes), and, when the network between them is cut instead, once the
 * server notices: the session is idle past `idle_session_timeout`, set here to `sessionTimeoutMs`. The
 * holder checks its session every `heartbeatMs` and treats it as lost when a check fails or does not
 * answer within `heartbeatMs` (so after at most 2 × `heartbeatMs`), well before the server can free
 * the lock. Right before each send it asks once more (one round trip), and refuses to send unless the
 * session answers. So a holder that lost its connection has stopped sending before another can take
 * the lock; and a takeover takes at most `sessionTimeoutMs` plus one `retryMs`.
 */

/** The lock's timing, in ms. */
export type LockTiming = {
  /** How often the holder checks its session; also the deadline of each check. */
  heartbeatMs: number
  /** How often a waiting sweeper tries to take the lock, and reconnects after a failure. */
  retryMs: number
  /** The server ends a session idle this long, freeing its lock. Must exceed 2 × `heartbeatMs`. */
  sessionTimeoutMs: number
}

export const defaultLockTiming: LockTiming = {
  heartbeatMs: 1_000,
  retryMs: 1_000,
  sessionTimeoutMs: 5_000,
}

/** What the lock tells the sweeper. */
export type LockEvents = {
  /** The lock was lost: stop sending now. */
  lost: (reason: string) => void
  /** A connection or query failed while waiting (retried). */
  problem: (message: string) => void
  /** Another sweeper holds the lock: this one waits (once per `acquire`). */
  waiting: () => void
  /** Postgres answered a query of the lock (a try to take it, a heartbeat, a check before a send). */
  answered?: () => void
}

export type SweepLock = {
  /** Resolves once this process holds the lock (it keeps trying), or rejects when `signal` aborts. */
  acquire(signal: AbortSignal): Promise<void>
  /**
   * Checks, with one round trip, that the lock is still held right now.
   *
   * @throws {VaultPreconditionError} `SWEEP_LOCK_LOST` when it is not (and the lock counts as lost).
   */
  assertHeld(): Promise<void>
  /** Whether the lock is held, as far as the last check knows. */
  readonly held: boolean
  /** Releases the lock (if held) and closes the connection. */
  release(): Promise<void>
}

/**
 * The advisory lock's key for a chain and a wallet: the first 8 bytes of a keccak-256, as a signed
 * 64-bit integer (what `pg_try_advisory_lock(bigint)` takes), in decimal.
 */
export function lockKey(chainId: number, wallet: Address): string {
  const hash = keccak256(stringToHex(`x402-vault sweep:${chainId}:${wallet.toLowerCase()}`))
  return BigInt.asIntN(64, BigInt(hash.slice(0, 18))).toString()
}

/** Loads `pg`, an optional peer dependency, only when `--lock` is given. */
async function loadPg(): Promise<typeof import('pg')> {
  try {
    const module = (await import('pg')) as typeof import('pg') & { default?: typeof import('pg') }
    return module.default ?? module
  } catch {
    throw new UsageError(
      '--lock needs the `pg` package (an optional peer dependency of x402-vault): npm i pg',
    )
  }
}

/**
 * A Postgres advisory lock for one chain and wallet.
 *
 * @param url - The Postgres URL (`postgres://user:password@host:5432/db`); only its host is ever shown.
 * @param key - From {@link lockKey}.
 * @param events - Where losses and problems go.
 * @param timing - Heartbeat, retry and session timeout.
 * @returns The lock.
 */
export async function postgresLock(
  url: string,
  key: string,
  events: LockEvents,
  timing: LockTiming = defaultLockTiming,
): Promise<SweepLock> {
  const pg = await loadPg()
  const shown = redactUrl(url)
  let client: Client | undefined
  let held = false
  let lastOkAt = 0
  let heartbeat: ReturnType<typeof setInterval> | undefined

  const config: ClientConfig = {
    connectionString: url,
    connectionTimeoutMillis: timing.retryMs * 5,
    application_name: 'x402-vault sweep --watch',
    keepAlive: true,
  }

  /**
   * Drops the connection without waiting on a peer that may never answer: its socket is destroyed, not
   * ended, because pg never settles a `connect()` that `end()` interrupts (the sweeper then hung in
   * `acquire`, and on SIGTERM).
   */
  const discard = () => {
    const dead = client
    client = undefined
    destroySocket(dead)
  }

  /**
   * The lock is lost because `from` failed. A late failure of a connection already replaced (a
   * heartbeat that was still waiting on it) is ignored: it must not drop the new one.
   */
  const lose = (reason: string, from: Client | undefined) => {
    if (from !== client) return
    clearInterval(heartbeat)
    heartbeat = undefined
    discard()
    if (!held) return
    held = false
    events.lost(reason)
  }

  /** One query, given up after `heartbeatMs` (pg honours `query_timeout` per query; its types lack it). */
  const ask = (text: string, values: unknown[] = []): Promise<{ rows: unknown[] }> => {
    if (!client) return Promise.reject(new Error('not connected'))
    const query = { text, values, query_timeout: timing.heartbeatMs } as { text: string }
    return client.query(query)
  }

  const connect = async () => {
    const next = new pg.Client(config)
    // Without a listener an error on an idle connection would end the process.
    next.on('error', (error) => lose(`the Postgres connection failed: ${error.message}`, next))
    next.on('end', () => lose('the Postgres connection closed', next))
    client = next
    await next.connect()
    try {
      await next.query(`SET idle_session_timeout = ${Math.round(timing.sessionTimeoutMs)}`)
    } catch (error) {
      // Before Postgres 14: a cut network frees the lock only once the server's TCP keepalive notices.
      events.problem(
        `Postgres at ${shown} has no idle_session_timeout (it needs 14 or newer): a takeover after a network cut may take minutes (${(error as Error).message})`,
      )
    }
  }

  const check = async () => {
    const asked = client
    try {
      await ask('SELECT 1')
      if (client === asked) lastOkAt = Date.now()
      events.answered?.()
    } catch (error) {
      lose(`the lock's session did not answer: ${(error as Error).message}`, asked)
    }
  }

  return {
    get held() {
      return held && Date.now() - lastOkAt < 2 * timing.heartbeatMs
    },
    async acquire(signal) {
      let saidWaiting = false
      // A stop while connecting (up to 5 retries' time over a cut network) drops the socket: the
      // connect fails at once.
      const onAbort = () => discard()
      signal.addEventListener('abort', onAbort, { once: true })
      try {
        while (!held) {
          signal.throwIfAborted()
          try {
            if (!client) await connect()
            const { rows } = await ask('SELECT pg_try_advisory_lock($1::bigint) AS locked', [key])
            events.answered?.()
            if ((rows[0] as { locked?: boolean } | undefined)?.locked === true) {
              held = true
              lastOkAt = Date.now()
              heartbeat = setInterval(() => void check(), timing.heartbeatMs)
              return
            }
            if (!saidWaiting) events.waiting()
            saidWaiting = true
          } catch (error) {
            signal.throwIfAborted()
            events.problem(
              `Postgres at ${shown} failed: ${(error as Error).message.replaceAll(url, shown)}`,
            )
            discard()
          }
          await sleep(timing.retryMs, signal)
        }
      } finally {
        signal.removeEventListener('abort', onAbort)
      }
    },
    async assertHeld() {
      const asked = client
      const fail = (reason: string) => {
        lose(reason, asked)
        return new VaultPreconditionError(`Not sending: ${reason}.`, {
          code: 'SWEEP_LOCK_LOST',
          details: { lock: shown },
        })
      }
      if (!held) throw fail('this sweeper does not hold the lock')
      if (Date.now() - lastOkAt >= 2 * timing.heartbeatMs) {
        throw fail('the lock was not confirmed in time')
      }
      try {
        await ask('SELECT 1')
      } catch (error) {
        throw fail(`the lock's session did not answer: ${(error as Error).message}`)
      }
      if (!held || client !== asked) throw fail('the lock was lost')
      lastOkAt = Date.now()
      events.answered?.()
    },
    async release() {
      clearInterval(heartbeat)
      heartbeat = undefined
      if (held && client) {
        await ask('SELECT pg_advisory_unlock($1::bigint)', [key]).catch(() => {})
      }
      held = false
      const closing = client
      client = undefined
      if (!closing) return
      // Over a cut network `end()` never completes: it gets one heartbeat, then the socket goes.
      let timer: ReturnType<typeof setTimeout> | undefined
      await Promise.race([
        closing.end().catch(() => {}),
        new Promise((resolve) => {
          timer = setTimeout(resolve, timing.heartbeatMs)
        }),
      ])
      clearTimeout(timer)
      destroySocket(closing)
    },
  }
}

/** Destroys a pg client's socket at once (pg has no public way to). */
function destroySocket(client: Client | undefined): void {
  ;(
    client as unknown as { connection?: { stream?: { destroy(): void } } } | undefined
  )?.connection?.stream?.destroy()
}
