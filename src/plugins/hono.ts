import type { paymentMiddlewareFromHTTPServer } from '@x402/hono'
import type { Context } from 'hono'
import type { CreatePaywallOptions, Paywall, PaywallSweeper } from './core.js'
import { createPaywallFor } from './loadPaywall.js'

export type {
  CreatePaywallOptions,
  Paywall,
  PaywallBatchSettlement,
  PaywallFacilitator,
  PaywallRoute,
  PaywallScheme,
  PaywallSweeper,
} from './core.js'
export type { ChannelJobLock } from './paywallBatchSettlement.js'
export {
  createPostgresChannelStorage,
  type PostgresChannelStorage,
  type PostgresChannelStorageOptions,
} from './postgresChannelStorage.js'

/** The Hono middleware `createPaywall` returns. */
export type HonoPaywallMiddleware = ReturnType<typeof paymentMiddlewareFromHTTPServer>

/**
 * Paid Hono routes whose revenue flows into the vault: x402's payment middleware for the routes,
 * with the sweeper attached to its resource server, so each sale's USDC is swept into the vault.
 *
 * It resolves once the facilitator has confirmed it supports the vault's network, and rejects with a
 * clear error when something is misconfigured (price, payTo, facilitator URL or credentials, a network
 * the facilitator does not support), where x402's own start-up would call `process.exit`. The x402
 * packages are loaded on the first call: one that is not installed rejects with
 * `PEER_DEPENDENCY_MISSING`, naming it and the install line.
 *
 * On an edge runtime (Cloudflare Workers) each request's sweep is its own: for a request with an
 * execution context (`c.executionCtx`) the sweeper sweeps within requests (`sweepWithinRequests()`),
 * and a request that sold something (a settled payment) gets the sweep its sale is owed in its own
 * `waitUntil` (`idle()`). It runs within that request after the response is sent, waits on no other
 * request's promise or timer, and ends before the runtime may stop the isolate. Where the request has
 * no execution context (Node), the sweep runs in the background as usual.
 *
 * A route with `scheme: 'upto'` sells by use: its price is the most a request may cost, and its handler
 * says what the request costs with `paywall.charge(c, amount)`; only that is settled and swept.
 *
 * @param options - `vault`, `payTo`, `facilitator` (or `resourceServer`), `routes`, `sweep` (or
 *   `false`), `appName`, `testnet`.
 * @returns `{ middleware, resourceServer, sweeper, charge(c, amount), close() }`; call `close()` on
 *   shutdown.
 * @example
 * const paywall = await createPaywall({
 *   vault,
 *   payTo: merchant.address,
 *   facilitator: { url: process.env.X402_FACILITATOR_URL },
 *   routes: { 'GET /weather': { price: '0.01', description: 'Weather now', mimeType: 'application/json' } },
 *   sweep: { minIdleThreshold: '10', reserve: '5' },
 * })
 * app.use(paywall.middleware)
 * app.get('/weather', (c) => c.json({ sky: 'clear' }))
 */
export async function createPaywall<options extends CreatePaywallOptions>(
  options: options,
): Promise<Paywall<HonoPaywallMiddleware, PaywallSweeper<options>, Context>> {
  const paywall = await createPaywallFor(options, {
    feature: 'x402-vault/hono',
    packages: ['@x402/core', '@x402/evm', '@x402/hono', 'hono'],
    load: () => import('@x402/hono'),
    paymentHeaderOf: (c: Context) =>
      c?.req?.header?.('payment-signature') ?? c?.req?.header?.('x-payment'),
  })
  const { sweeper } = paywall
  if (!sweeper) return paywall
  const x402 = paywall.middleware
  const middleware: HonoPaywallMiddleware = async (c, next) => {
    const executionContext = executionContextOf(c)
    // Before the sale's hook runs: on an edge runtime no sweep may hang on a timer another request set.
    if (executionContext) sweeper.sweepWithinRequests()
    const answer = await x402(c, next)
    // A request that sold something (x402 answers it with the settlement's PAYMENT-RESPONSE header,
    // after the after-settle hook has run) sweeps what its sale is owed, within its own `waitUntil`. A
    // request that sold nothing has nothing to sweep, and takes no turn from one that did.
    const response = answer instanceof Response ? answer : c.res
    if (executionContext && response.headers.has('PAYMENT-RESPONSE')) {
      executionContext.waitUntil(sweeper.idle())
    }
    return answer
  }
  return { ...paywall, middleware }
}

/** The request's execution context on an edge runtime; Hono's getter throws where there is none. */
function executionContextOf(
  c: Context,
): { waitUntil(promise: Promise<unknown>): void } | undefined {
  try {
    return c.executionCtx
  } catch {
    return undefined
  }
}
