import { importPeer, type PeerFeature } from '../sdk/shared.js'
import type { CreatePaywallOptions, Paywall, PaywallSweeper, X402Framework } from './core.js'

/** One framework's x402 middleware package, loaded when `createPaywall` first runs. */
export type PaywallFramework<middleware, response> = PeerFeature &
  Pick<X402Framework<middleware, response>, 'paymentHeaderOf'> & {
    /** Imports the framework's x402 package, such as `() => import('@x402/express')`. */
    load: () => Promise<
      Pick<X402Framework<middleware, response>, 'paymentMiddlewareFromHTTPServer'> & {
        setSettlementOverrides: X402Framework<middleware, response>['setSettlementOverrides']
      }
    >
  }

/**
 * `createPaywall` for one framework, with the x402 packages (optional peer dependencies) loaded on the
 * first call: an app that lacks one gets an error naming it and the install line, not a stack trace
 * from Node's module linker.
 *
 * @param options - As `createPaywall`.
 * @param framework - The entry point, the packages it needs, how to load its x402 package, and where a
 *   handler's response object finds the request's payment header.
 * @returns `{ middleware, resourceServer, sweeper, charge(), close() }`.
 */
export async function createPaywallFor<middleware, response, options extends CreatePaywallOptions>(
  options: options,
  framework: PaywallFramework<middleware, response>,
): Promise<Paywall<middleware, PaywallSweeper<options>, response>> {
  const [{ createPaywallWith }, { paymentMiddlewareFromHTTPServer, setSettlementOverrides }] =
    await importPeer(
      // `./core.js` loads @x402/core and @x402/evm.
      () => Promise.all([import('./core.js'), framework.load()]),
      framework,
    )
  return createPaywallWith(options, {
    paymentMiddlewareFromHTTPServer,
    setSettlementOverrides,
    paymentHeaderOf: framework.paymentHeaderOf,
  })
}
