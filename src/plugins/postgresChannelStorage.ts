import type {
  Channel,
  ChannelStorage,
  ChannelUpdateResult,
} from '@x402/evm/batch-settlement/server'
import type { Pool, PoolClient } from 'pg'
import { keccak256, stringToHex } from 'viem'
import { VaultConfigError, VaultValidationError } from '../index.js'
import { importPeer, redactSecrets } from '../sdk/shared.js'
import type { ChannelJobLock } from './paywallBatchSettlement.js'

/** Where `createPostgresChannelStorage` keeps the channels. */
export type PostgresChannelStorageOptions = {
  /** The Postgres URL, such as `process.env.DATABASE_URL` (`postgres://user:password@host:5432/db`)… */
  url?: string | undefined
  /** …or a `pg` Pool of your own (then `close()` leaves it open). */
  pool?: Pool | undefined
  /**
   * The table, created when missing: one row a channel. Default `x402_vault_batch_channels`. Sellers
   * (or routes' `payTo`s) that must not see each other's channels use different tables.
   */
  table?: string | undefined
}

/**
 * x402's channel storage in Postgres, shared by every instance of a seller: the channel state, and the
 * lock under which one instance at a time claims and settles.
 */
export type PostgresChannelStorage = ChannelStorage &
  ChannelJobLock & {
    /** Closes the connections it opened (not a pool you gave it). Call it after the paywall's `close()`. */
    close: () => Promise<void>
  }

const defaultTable = 'x402_vault_batch_channels'
/** Postgres's answer when a lock was not granted within `lock_timeout`. */
const lockNotAvailable = '55P03'

/**
 * Keeps x402's `batch-settlement` channels in Postgres, so that several instances of a seller share them
 * (`createPaywall`'s `batchSettlement.storage`). Each update of a channel runs in a transaction that holds
 * the channel's row lock (`SELECT … FOR UPDATE`) from the read to the write; a channel that does not exist
 * yet is inserted only if no other instance inserted it meanwhile (else the update runs again on that
 * row). That is the atomicity x402's `ChannelStorage.updateChannel` asks for: two instances never both
 * accept a voucher against the same state. The paywall's claim and settle jobs run under a Postgres
 * advisory lock (`whileLocked`), one instance at a time, and a claim updates the channel before the lock
 * is let go: no voucher is claimed twice. A lock holder whose process dies loses the lock with its
 * connection.
 *
 * `pg` is an optional peer dependency: install it (`npm i pg`).
 *
 * @param options - `url` or `pool`, and `table`.
 * @returns The storage, once its table exists.
 * @throws {VaultValidationError} `INVALID_ARGUMENT` for bad options; {VaultConfigError}
 *   `PEER_DEPENDENCY_MISSING` without `pg`, `CHANNEL_STORAGE_UNAVAILABLE` when Postgres cannot be reached
 *   or refuses (the message never shows the URL's credentials).
 * @example
 * const storage = await createPostgresChannelStorage({ url: process.env.DATABASE_URL })
 * const paywall = await createPaywall({ …, batchSettlement: { storage } })
 * process.on('SIGTERM', async () => {
 *   await paywall.close()
 *   await storage.close()
 * })
 */
export async function createPostgresChannelStorage(
  options: PostgresChannelStorageOptions,
): Promise<PostgresChannelStorage> {
  const { url, pool: givenPool } = options ?? {}
  const table = options?.table ?? defaultTable
  if (typeof table !== 'string' || !/^[a-z_][a-z0-9_]{0,62}$/.test(table)) {
    throw new VaultValidationError(
      '`table` must be a lower-case Postgres name (letters, digits, underscores; up to 63).',
      { code: 'INVALID_ARGUMENT', details: { field: 'table' } },
    )
  }
  if ((url === undefined) === (givenPool === undefined)) {
    throw new VaultValidationError(
      'Give `createPostgresChannelStorage` either `url` (a postgres:// URL) or `pool` (a pg Pool), not both.',
      { code: 'INVALID_ARGUMENT', details: { field: url === undefined ? 'url' : 'pool' } },
    )
  }
  if (url !== undefined && (typeof url !== 'string' || !/^postgres(ql)?:\/\//.test(url))) {
    throw new VaultValidationError(
      '`url` must be a postgres:// URL (is the variable that should hold it set?).',
      { code: 'INVALID_ARGUMENT', details: { field: 'url' } },
    )
  }
  let pool: Pool
  if (givenPool) {
    pool = givenPool
  } else {
    const module = await importPeer(() => import('pg'), {
      feature: 'createPostgresChannelStorage',
      packages: ['pg'],
    })
    const pg = (module as typeof module & { default?: typeof module }).default ?? module
    pool = new pg.Pool({
      connectionString: url,
      max: 4,
      application_name: 'x402-vault batch-settlement',
    })
    // An idle connection's error must not end the process; the next query fails and says why.
    pool.on('error', () => {})
  }
  const name = `"${table}"`
  const unavailable = (doing: string, error: unknown) =>
    new VaultConfigError(
      `The Postgres channel storage could not ${doing}: ${redactSecrets(error instanceof Error ? error.message : String(error))}`,
      {
        code: 'CHANNEL_STORAGE_UNAVAILABLE',
        details: { table },
        retryable: true,
        cause: error,
      },
    )
  const withClient = async <value>(
    doing: string,
    work: (client: PoolClient) => Promise<value>,
  ): Promise<value> => {
    let client: PoolClient
    try {
      client = await pool.connect()
    } catch (error) {
      throw unavailable(doing, error)
    }
    let broken = false
    try {
      return await work(client)
    } catch (error) {
      broken = true
      if (error instanceof VaultConfigError || error instanceof JobFailed) throw error
      throw unavailable(doing, error)
    } finally {
      // A connection whose work failed may hold a transaction or a lock: it is closed, not reused.
      client.release(broken)
    }
  }

  await withClient('create its table', async (client) => {
    await client.query('BEGIN')
    // Two instances starting at once would race on CREATE TABLE IF NOT EXISTS.
    await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [lockKey(table, 'create')])
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${name} (channel_id text PRIMARY KEY, channel jsonb NOT NULL, updated_at timestamptz NOT NULL DEFAULT now())`,
    )
    await client.query('COMMIT')
  })

  const storage: PostgresChannelStorage = {
    get: (channelId) =>
      withClient('read a channel', async (client) => {
        const { rows } = await client.query(`SELECT channel FROM ${name} WHERE channel_id = $1`, [
          channelId.toLowerCase(),
        ])
        return rows[0]?.channel as Channel | undefined
      }),
    list: () =>
      withClient('list the channels', async (client) => {
        const { rows } = await client.query(`SELECT channel FROM ${name} ORDER BY channel_id`)
        return rows.map((row) => row.channel as Channel)
      }),
    updateChannel: async (channelId, update) => {
      const id = channelId.toLowerCase()
      for (;;) {
        const outcome = await withClient(
          'update a channel',
          async (client): Promise<ChannelUpdateResult | 'inserted elsewhere'> => {
            await client.query('BEGIN')
            const { rows } = await client.query(
              `SELECT channel FROM ${name} WHERE channel_id = $1 FOR UPDATE`,
              [id],
            )
            const current = rows[0]?.channel as Channel | undefined
            const next = update(current)
            let result: ChannelUpdateResult
            if (next === current) {
              result = { channel: current, status: 'unchanged' }
            } else if (next === undefined) {
              if (current) await client.query(`DELETE FROM ${name} WHERE channel_id = $1`, [id])
              result = { channel: undefined, status: current ? 'deleted' : 'unchanged' }
            } else if (current) {
              await client.query(
                `UPDATE ${name} SET channel = $2, updated_at = now() WHERE channel_id = $1`,
                [id, JSON.stringify(next)],
              )
              result = { channel: next, status: 'updated' }
            } else {
              const inserted = await client.query(
                `INSERT INTO ${name} (channel_id, channel) VALUES ($1, $2) ON CONFLICT (channel_id) DO NOTHING`,
                [id, JSON.stringify(next)],
              )
              if (inserted.rowCount === 0) {
                await client.query('ROLLBACK')
                return 'inserted elsewhere'
              }
              result = { channel: next, status: 'updated' }
            }
            await client.query('COMMIT')
            return result
          },
        )
        // Another instance created the channel between the read and the insert: run the update on it.
        if (outcome !== 'inserted elsewhere') return outcome
      }
    },
    whileLocked: (key, job, waitMs) =>
      withClient('take the claim lock', async (client) => {
        const lock = lockKey(table, key)
        let held: boolean
        if (waitMs <= 0) {
          const { rows } = await client.query('SELECT pg_try_advisory_lock($1::bigint) AS held', [
            lock,
          ])
          held = rows[0]?.held === true
        } else {
          await client.query(`SET lock_timeout = ${Math.ceil(waitMs)}`)
          try {
            await client.query('SELECT pg_advisory_lock($1::bigint)', [lock])
            held = true
          } catch (error) {
            if ((error as { code?: unknown })?.code !== lockNotAvailable) throw error
            held = false
          }
          await client.query('RESET lock_timeout')
        }
        if (!held) return { ran: false } as const
        // The job's own failure is the job's: it is not the storage's, and the lock is let go.
        let outcome: { value: Awaited<ReturnType<typeof job>> } | { error: unknown }
        try {
          outcome = { value: await job() }
        } catch (error) {
          outcome = { error }
        }
        await client.query('SELECT pg_advisory_unlock($1::bigint)', [lock])
        if ('error' in outcome) throw new JobFailed(outcome.error)
        return { ran: true, value: outcome.value } as const
      }).catch((error: unknown) => {
        throw error instanceof JobFailed ? error.failure : error
      }),
    close: async () => {
      if (!givenPool) await pool.end()
    },
  }
  return storage
}

/** Carries a job's own failure through the storage's error handling, to be thrown as it was. */
class JobFailed extends Error {
  constructor(readonly failure: unknown) {
    super('the job failed')
  }
}

/** An advisory lock's key: the first 8 bytes of a keccak-256 of the table and the name, as a signed 64-bit integer. */
function lockKey(table: string, name: string): string {
  const hash = keccak256(stringToHex(`x402-vault channel storage:${table}:${name}`))
  return BigInt.asIntN(64, BigInt(hash.slice(0, 18))).toString()
}
