/**
 * One merchant web process for the "several processes, one key" tests: an Express app behind
 * `createPaywall`, with the sweeper on, or off (`SWEEP=off`: `sweep: false`, for instances that
 * `x402-vault sweep --watch` sweeps). `spawnMerchant` runs it bundled (`nodeScript`), with this environment:
 * `RPC_URL`, `FACILITATOR_URL`, `ADDRESSES` (JSON), `MERCHANT_PRIVATE_KEY`, `RESERVE` (base units).
 *
 * It writes one JSON line per event on stdout: `ready` (with its port), `deposit`, `problem`,
 * `swept` (after a `sweep` command: its result, or `failed` with the error code), `switched` and
 * `closed`. On stdin it takes `sweep` (a manual sweep), `sweeper on <reserve>` or `sweeper off` (a
 * new paywall in place of the old one, which is closed: the same process in the other shape, without
 * another start) and `close` (close the paywall and exit). SIGTERM closes it too, as a deployment's
 * shutdown does: the server stops, then the paywall (`close()`), then `closed` and exit 0.
 * `DEBOUNCE_MS` sets the sweeper's debounce (default 0). With `BATCH_DATABASE_URL` it also sells
 * `GET /tick` at 0.001 USDC with `batch-settlement`, its channels in that Postgres
 * (`createPostgresChannelStorage`, in the table `BATCH_TABLE`), claiming every `CLAIM_INTERVAL_MS` and settling every
 * `SETTLE_INTERVAL_MS`: instances given the same URL share the channels and the claim lock.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createInterface } from 'node:readline'
import express from 'express'
import { createPublicClient, createWalletClient, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { createVaultClient, vaultChains, vaultHttp } from '../src/index.js'
import { keepIdleConnections } from '../src/mcp/http/keepIdleConnections.js'
import { createPaywall, createPostgresChannelStorage } from '../src/plugins/express.js'
import { toJsonSafe } from '../src/sdk/errors/classes.js'

const say = (event: Record<string, unknown>) =>
  process.stdout.write(`${JSON.stringify(toJsonSafe(event))}\n`)

const env = process.env as Record<string, string>
/** The devnet's chain (`CHAIN`, Base Sepolia by default). */
const chainName = (env.CHAIN ?? 'base-sepolia') as keyof typeof vaultChains
const chain = vaultChains[chainName].viemChain
const account = privateKeyToAccount(env.MERCHANT_PRIVATE_KEY as Hex)
const transport = vaultHttp(env.RPC_URL, { retryDelay: 20 })
const vault = createVaultClient({
  publicClient: createPublicClient({ chain, transport, pollingInterval: 50 }),
  walletClient: createWalletClient({ account, chain, transport, pollingInterval: 50 }),
  chain: chainName,
  addresses: JSON.parse(env.ADDRESSES as string),
})

const channelStorage = env.BATCH_DATABASE_URL
  ? await createPostgresChannelStorage({ url: env.BATCH_DATABASE_URL, table: env.BATCH_TABLE })
  : undefined

const paywallWith = (sweeper: boolean, reserve: bigint) =>
  createPaywall({
    vault,
    payTo: account.address,
    facilitator: {
      url: env.FACILITATOR_URL as string,
      timeoutMs: env.FACILITATOR_TIMEOUT_MS ? Number(env.FACILITATOR_TIMEOUT_MS) : undefined,
    },
    routes: {
      'GET /paid': { price: '1', description: 'A paid answer', mimeType: 'application/json' },
      ...(channelStorage
        ? {
            'GET /tick': {
              price: '0.001',
              scheme: 'batch-settlement' as const,
              description: 'One tick',
              mimeType: 'application/json',
            },
          }
        : {}),
    },
    ...(channelStorage
      ? {
          batchSettlement: {
            storage: channelStorage,
            claimIntervalMs: Number(env.CLAIM_INTERVAL_MS),
            settleIntervalMs: Number(env.SETTLE_INTERVAL_MS),
          },
        }
      : {}),
    sweep: !sweeper
      ? false
      : {
          minIdleThreshold: '0',
          reserve,
          debounceMs: Number(env.DEBOUNCE_MS ?? 0),
          retry: { initialDelayMs: 50 },
          onIdleDeposit: (deposit) => say({ type: 'deposit', ...deposit }),
          onNonFatalError: ({ phase, error, willRetry }) =>
            say({ type: 'problem', phase, willRetry, code: error.code, message: error.message }),
        },
  })
let paywall = await paywallWith(env.SWEEP !== 'off', BigInt(env.RESERVE as string))

const app = express()
app.use((req, res, next) => paywall.middleware(req, res, next))
app.get('/paid', (_req, res) => {
  res.json({ paid: true })
})
app.get('/tick', (_req, res) => {
  res.json({ tick: true })
})
const server = createServer(app)
// What docs/seller.md asks of a seller's server.
keepIdleConnections(server)
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
say({ type: 'ready', port: (server.address() as AddressInfo).port })

process.once('SIGTERM', async () => {
  server.close()
  await paywall.close()
  await channelStorage?.close()
  say({ type: 'closed' })
  process.exit(0)
})

for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'sweep' && paywall.sweeper) {
    // A manual sweep rejects on failure (a collision with the other process, say): report it.
    await paywall.sweeper.sweep().then(
      (result) => say({ type: 'swept', ...result }),
      (error) => say({ type: 'swept', failed: error.code ?? String(error) }),
    )
  }
  const [command, mode, reserve] = line.split(' ')
  if (command === 'sweeper') {
    const old = paywall
    paywall = await paywallWith(mode === 'on', BigInt(reserve ?? 0))
    await old.close()
    say({ type: 'switched', sweeper: mode })
  }
  if (line === 'close') break
}
await paywall.close()
await channelStorage?.close()
server.closeAllConnections()
server.close()
say({ type: 'closed' })
