import type { paymentMiddlewareFromHTTPServer } from '@x402/hono'
import type { CreatePaywallOptions, Paywall } from './core.js'
import { createPaywallFor } from './loadPaywall.js'

export type { CreatePaywallOptions, Paywall, PaywallFacilitator, PaywallRoute } from './core.js'

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
 * @param options - `vault`, `payTo`, `facilitator` (or `resourceServer`), `routes`, `sweep`,
 *   `appName`, `testnet`.
 * @returns `{ middleware, resourceServer, sweeper, close() }`; call `close()` on shutdown.
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
export function createPaywall(
  options: CreatePaywallOptions,
): Promise<Paywall<HonoPaywallMiddleware>> {
  return createPaywallFor(options, {
    feature: 'x402-vault/hono',
    packages: ['@x402/core', '@x402/evm', '@x402/hono', 'hono'],
    load: () => import('@x402/hono'),
  })
}
