import { importPeer, type PeerFeature } from '../sdk/shared.js'
import type { CreatePaywallOptions, MiddlewareFromHTTPServer, Paywall } from './core.js'

/** One framework's x402 middleware package, loaded when `createPaywall` first runs. */
export type PaywallFramework<middleware> = PeerFeature & {
  /** Imports the framework's x402 package, such as `() => import('@x402/express')`. */
  load: () => Promise<{ paymentMiddlewareFromHTTPServer: MiddlewareFromHTTPServer<middleware> }>
}

/**
 * `createPaywall` for one framework, with the x402 packages (optional peer dependencies) loaded on the
 * first call: an app that lacks one gets an error naming it and the install line, not a stack trace
 * from Node's module linker.
 *
 * @param options - As `createPaywall`.
 * @param framework - The entry point, the packages it needs, and how to load its x402 middleware.
 * @returns `{ middleware, resourceServer, sweeper, close() }`.
 */
export async function createPaywallFor<middleware>(
  options: CreatePaywallOptions,
  framework: PaywallFramework<middleware>,
): Promise<Paywall<middleware>> {
  const [{ createPaywallWith }, { paymentMiddlewareFromHTTPServer }] = await importPeer(
    // `./core.js` loads @x402/core and @x402/evm.
    () => Promise.all([import('./core.js'), framework.load()]),
    framework,
  )
  return createPaywallWith(options, paymentMiddlewareFromHTTPServer)
}
