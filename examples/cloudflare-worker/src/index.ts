/**
 * A Cloudflare Worker that sells `GET /weather` through the x402 paywall and sweeps the revenue into
 * the vault:
 * - after each sale the request's `waitUntil` holds the sweep its sale is owed, run within that
 *   request (x402-vault/hono does it), so the deposit completes after the response is sent and no
 *   request waits on another's promise;
 * - a Cron Trigger (`scheduled`) runs one sweep with the same rule, for whatever a sale's sweep missed.
 *
 * Everything comes from the Worker's bindings (wrangler.jsonc `vars` and `wrangler secret put`), never
 * from `process.env`. The paywall is built once per isolate, on its first request; a failed build is
 * retried on the next one. It needs `nodejs_compat` (x402 uses `Buffer`).
 *
 * The sweeping key is best an operator key that holds no money (SWEEPER_PRIVATE_KEY with
 * MERCHANT_ADDRESS, after `x402-vault sweep --setup`); MERCHANT_PRIVATE_KEY works too.
 */
import { Hono } from 'hono'
import { type Address, createPublicClient, createWalletClient, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import {
  createVaultClient,
  formatUsdc,
  parseVaultAddresses,
  type VaultClient,
  vaultChains,
  vaultHttp,
} from 'x402-vault'
import { createPaywall, type HonoPaywallMiddleware, type Paywall } from 'x402-vault/hono'

/** The Worker's bindings. */
export type Env = {
  /** base (default) or base-sepolia. */
  VAULT_CHAIN?: string
  /** The RPC URL (a secret: it often holds an API key). */
  RPC_URL: string
  /** The merchant wallet: it receives the payments and owns the vault position. */
  MERCHANT_ADDRESS: string
  /** An operator key of the merchant wallet (a secret): it only pays the deposits' gas. */
  SWEEPER_PRIVATE_KEY?: string
  /** Or the merchant wallet's own key (a secret). */
  MERCHANT_PRIVATE_KEY?: string
  X402_FACILITATOR_URL: string
  X402_FACILITATOR_BEARER_TOKEN?: string
  /** The vault's addresses as JSON (a devnet or a private deployment); default: the public ones. */
  VAULT_ADDRESSES_JSON?: string
  SWEEP_MIN_IDLE_USDC?: string
  SWEEP_RESERVE_USDC?: string
}

/**
 * Work handed to `waitUntil` is cancelled 30 s after the response: give up waiting for a receipt well
 * before (viem waits 180 s); the next sweep waits for the same deposit again.
 */
const receiptTimeoutMs = 20_000

/** The vault client and the merchant wallet from the bindings. */
function vaultOf(env: Env): { vault: VaultClient; wallet: Address; testnet: boolean } {
  const chain = env.VAULT_CHAIN ?? 'base'
  if (chain !== 'base' && chain !== 'base-sepolia') {
    throw new Error(`VAULT_CHAIN must be base or base-sepolia, not ${JSON.stringify(chain)}.`)
  }
  const key = env.SWEEPER_PRIVATE_KEY || env.MERCHANT_PRIVATE_KEY
  if (!key || !/^0x[0-9a-fA-F]{64}$/.test(key)) {
    throw new Error('SWEEPER_PRIVATE_KEY (or MERCHANT_PRIVATE_KEY) must be 0x and 64 hex digits.')
  }
  if (!env.RPC_URL) throw new Error('Set RPC_URL.')
  const account = privateKeyToAccount(key as Hex)
  const viemChain = vaultChains[chain].viemChain
  const transport = vaultHttp(env.RPC_URL)
  const vault = createVaultClient({
    publicClient: createPublicClient({ chain: viemChain, transport }),
    walletClient: createWalletClient({ account, chain: viemChain, transport }),
    chain,
    addresses: env.VAULT_ADDRESSES_JSON
      ? parseVaultAddresses(JSON.parse(env.VAULT_ADDRESSES_JSON), {
          chain,
          source: 'VAULT_ADDRESSES_JSON',
        })
      : undefined,
  })
  return {
    vault,
    wallet: (env.MERCHANT_ADDRESS || account.address) as Address,
    testnet: chain === 'base-sepolia',
  }
}

/** The sweep rule's amounts from the bindings. */
const ruleOf = (env: Env) => ({
  minIdleThreshold: env.SWEEP_MIN_IDLE_USDC ?? '25',
  reserve: env.SWEEP_RESERVE_USDC ?? '10',
})

let paywall: Promise<Paywall<HonoPaywallMiddleware>> | undefined

/** The isolate's paywall, built on its first request. */
function paywallOf(env: Env): Promise<Paywall<HonoPaywallMiddleware>> {
  paywall ??= buildPaywall(env).catch((error: unknown) => {
    paywall = undefined
    throw error
  })
  return paywall
}

async function buildPaywall(env: Env) {
  const { vault, wallet, testnet } = vaultOf(env)
  return createPaywall({
    vault,
    payTo: wallet,
    facilitator: {
      url: env.X402_FACILITATOR_URL,
      bearerToken: env.X402_FACILITATOR_BEARER_TOKEN || undefined,
    },
    testnet,
    routes: {
      'GET /weather': { price: '0.01', description: 'Weather now', mimeType: 'application/json' },
    },
    sweep: {
      ...ruleOf(env),
      receiptTimeoutMs,
      onIdleDeposit: ({ idleAmount, txHash }) =>
        console.log(`deposited ${formatUsdc(idleAmount)} USDC: ${txHash}`),
      onNonFatalError: ({ phase, error }) => console.warn(`sweep ${phase}: ${error.message}`),
    },
  })
}

const app = new Hono<{ Bindings: Env }>()
app.use(async (c, next) => (await paywallOf(c.env)).middleware(c, next))
app.get('/weather', (c) => c.json({ sky: 'clear', celsius: 21 }))

/**
 * The Cron Trigger: one sweep with the same rule. It builds its own vault client: objects that do I/O
 * are not shared between a request and a scheduled event.
 */
async function scheduledSweep(env: Env): Promise<void> {
  const { vault, wallet } = vaultOf(env)
  const result = await vault.sweep({ wallet, ...ruleOf(env), timeout: receiptTimeoutMs })
  console.log(
    result.deposited
      ? `cron: deposited ${formatUsdc(result.idleAmount)} USDC: ${result.txHash}`
      : `cron: nothing to deposit (${result.reason})`,
  )
}

export default {
  fetch: app.fetch,
  scheduled(_event: unknown, env: Env, ctx: { waitUntil(promise: Promise<unknown>): void }) {
    ctx.waitUntil(scheduledSweep(env))
  },
}
