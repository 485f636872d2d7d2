/**
 * A Hono merchant in the edge style: the module exports a `fetch` handler, and the paywall is built
 * lazily from the environment the runtime hands to the first request (Workers bindings, or
 * `process.env` in Node), then kept for the life of the isolate: building it per request would ask
 * the facilitator for `/supported` every time.
 *
 * On Cloudflare Workers x402 needs `nodejs_compat` (it uses `Buffer`), and the paywall hands the sweep
 * to the request's `waitUntil`: see examples/cloudflare-worker/ for a whole Worker with a Cron Trigger
 * sweep. Node entry: examples/hono-node.ts.
 * Environment: as examples/merchantVault.ts, plus SWEEP_MIN_IDLE_USDC and SWEEP_RESERVE_USDC.
 */
import { Hono } from 'hono'
import { formatUsdc } from 'x402-vault'
import { createPaywall, type HonoPaywallMiddleware, type Paywall } from 'x402-vault/hono'
import { facilitatorFromEnv, type MerchantEnv, merchantVaultFromEnv } from './merchantVault.js'

let paywall: Promise<Paywall<HonoPaywallMiddleware>> | undefined

/** The isolate's paywall, built on the first request; a failed build is retried on the next one. */
export function paywallOf(env: MerchantEnv): Promise<Paywall<HonoPaywallMiddleware>> {
  paywall ??= buildPaywall(env).catch((error: unknown) => {
    paywall = undefined
    throw error
  })
  return paywall
}

async function buildPaywall(env: MerchantEnv) {
  const { vault, merchant, testnet } = await merchantVaultFromEnv(env)
  const facilitator = facilitatorFromEnv(env)
  await vault.verifyAddresses()
  return createPaywall({
    vault,
    payTo: merchant.address,
    facilitator,
    testnet,
    routes: {
      'GET /weather': { price: '0.01', description: 'Weather now', mimeType: 'application/json' },
    },
    sweep: {
      minIdleThreshold: env.SWEEP_MIN_IDLE_USDC ?? '25',
      reserve: env.SWEEP_RESERVE_USDC ?? '10',
      onIdleDeposit: ({ idleAmount, txHash }) =>
        console.log(`deposited ${formatUsdc(idleAmount)} USDC: ${txHash}`),
      onNonFatalError: ({ phase, error }) => console.warn(`sweep ${phase}: ${error.message}`),
    },
  })
}

const app = new Hono<{ Bindings: MerchantEnv }>()
app.use(async (c, next) => (await paywallOf(c.env)).middleware(c, next))
app.get('/weather', (c) => c.json({ sky: 'clear', celsius: 21 }))

export default { fetch: app.fetch }
