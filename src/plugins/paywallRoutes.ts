import type { RouteConfig } from '@x402/core/server'
import type { Address } from 'viem'
import {
  type VaultChainName,
  type VaultNetwork,
  VaultValidationError,
  type X402UsdcAsset,
  type X402UsdcPrice,
  x402UsdcPrice,
} from '../index.js'
import type { PaywallRoute } from './paywallOptions.js'
import { settlementFailedBody, unpaidBody } from './paywallResponseBodies.js'
import type { PaywallScheme } from './paywallSchemes.js'

/** One route whose options are checked: its key, as given, and its schemes in its order. */
export type CheckedRoute = {
  key: string
  route: PaywallRoute
  schemes: [PaywallScheme, ...PaywallScheme[]]
}

/** What the route table is built from. */
export type PaywallRoutesParameters = {
  chain: VaultChainName
  network: VaultNetwork
  payTo: Address
  routes: readonly CheckedRoute[]
  /** The assets each route accepts, in order: the vault's USDC, then the stock buyer's where there is one. */
  assets: readonly [X402UsdcAsset, ...X402UsdcAsset[]]
  /** The routes' x402 extensions (gas sponsoring on a Permit2 asset), or none. */
  extensions: Record<string, unknown> | undefined
}

/**
 * A route's price in one asset, the error naming the route.
 *
 * @param chain - The vault's chain.
 * @param key - The route's key, for the error.
 * @param route - The route; its `price` is decimal USDC or a bigint of base units.
 * @param asset - The asset, as read from the chain; `undefined` checks the price against the chain's
 *   public USDC (before the chain is read).
 * @returns x402's price entry.
 * @throws {VaultValidationError} `INVALID_AMOUNT` for a zero, negative or malformed price.
 * @example
 * routePrice('base', 'GET /weather', route, asset) // { amount: '10000', asset: '0x8335…', extra }
 */
export function routePrice(
  chain: VaultChainName,
  key: string,
  route: PaywallRoute,
  asset: X402UsdcAsset | undefined,
): X402UsdcPrice {
  try {
    return x402UsdcPrice({ chain, amount: route?.price, asset })
  } catch (error) {
    throw new VaultValidationError(
      `routes[${JSON.stringify(key)}].price: ${(error as Error).message}`,
      { code: 'INVALID_AMOUNT', details: { field: `routes[${JSON.stringify(key)}].price` } },
    )
  }
}

/**
 * The x402 route table: for each route, what it accepts (by scheme in the route's order; in each, the
 * vault's USDC first: a buyer that allows it pays it, and the sweep deposits it; a stock buyer on
 * base-sepolia skips to the next, x402's default asset), its description and MIME type, its 402
 * bodies (the route's own, or the defaults) and the extensions.
 *
 * @param parameters - The chain and network, `payTo`, the checked routes, the assets and extensions.
 * @returns The routes as `x402HTTPResourceServer` takes them, keyed as given.
 * @throws {VaultValidationError} `INVALID_AMOUNT` for a price the asset refuses.
 * @example
 * const routes = paywallRoutes({ chain, network, payTo, routes: checked.routes, assets: [asset], extensions })
 */
export function paywallRoutes(parameters: PaywallRoutesParameters): Record<string, RouteConfig> {
  const { chain, network, payTo, assets, extensions } = parameters
  return Object.fromEntries(
    parameters.routes.map(({ key, route, schemes }) => {
      const prices = assets.map((asset) => routePrice(chain, key, route, asset)) as [
        X402UsdcPrice,
        ...X402UsdcPrice[],
      ]
      const accepts = schemes.flatMap((scheme) =>
        prices.map((price) => ({
          scheme,
          network,
          payTo,
          price,
          ...(route.maxTimeoutSeconds === undefined
            ? {}
            : { maxTimeoutSeconds: route.maxTimeoutSeconds }),
        })),
      )
      const config: RouteConfig = {
        accepts,
        description: route.description,
        mimeType: route.mimeType,
        unpaidResponseBody:
          route.unpaidResponseBody ?? unpaidBody({ chain, network, payTo, prices, schemes }),
        settlementFailedResponseBody: route.settlementFailedResponseBody ?? settlementFailedBody,
        ...(extensions === undefined ? {} : { extensions }),
      }
      return [key, config]
    }),
  )
}
