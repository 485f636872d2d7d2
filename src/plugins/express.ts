import type { paymentMiddlewareFromHTTPServer } from '@x402/express'
import type { Response } from 'express'
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

/** The Express middleware `createPaywall` returns. */
export type ExpressPaywallMiddleware = ReturnType<typeof paymentMiddlewareFromHTTPServer>

/**
 * Paid Express routes whose revenue flows into the vault: x402's payment middleware for the routes,
 * with the sweeper attached to its resource server, so each sale's USDC is swept into the vault.
 *
 * It resolves once the facilitator has confirmed it supports the vault's network, and rejects with a
 * clear error when something is misconfigured (price, payTo, facilitator URL or credentials, a network
 * the facilitator does not support), where x402's own start-up would call `process.exit`. The x402
 * packages are loaded on the first call: one that is not installed rejects with
 * `PEER_DEPENDENCY_MISSING`, naming it and the install line.
 *
 * A route with `scheme: 'upto'` sells by use: its price is the most a request may cost, and its handler
 * says what the request costs with `paywall.charge(res, amount)`; only that is settled and swept.
 *
 * @param options - `vault`, `payTo`, `facilitator` (or `resourceServer`), `routes`, `sweep` (or
 *   `false`: no in-process sweeper), `appName`, `testnet`.
 * @returns `{ middleware, resourceServer, sweeper, charge(res, amount), close() }`; call `close()` on
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
 * app.get('/weather', (req, res) => res.json({ sky: 'clear' }))
 */
export function createPaywall<options extends CreatePaywallOptions>(
  options: options,
): Promise<Paywall<ExpressPaywallMiddleware, PaywallSweeper<options>, Response>> {
  return createPaywallFor(options, {
    feature: 'x402-vault/express',
    packages: ['@x402/core', '@x402/evm', '@x402/express', 'express'],
    load: () => import('@x402/express'),
    paymentHeaderOf: (res: Response) =>
      res?.req?.get?.('payment-signature') ?? res?.req?.get?.('x-payment'),
  })
}
