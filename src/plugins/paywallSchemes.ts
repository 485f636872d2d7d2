import type { x402ResourceServer } from '@x402/core/server'
import type { SchemeNetworkServer } from '@x402/core/types'
import { BatchSettlementEvmScheme, InMemoryChannelStorage } from '@x402/evm/batch-settlement/server'
import { ExactEvmScheme } from '@x402/evm/exact/server'
import { UptoEvmScheme } from '@x402/evm/upto/server'
import type { Address } from 'viem'
import { type VaultNetwork, VaultValidationError } from '../index.js'
import type { CheckedBatchSettlement, PaywallRoute } from './paywallOptions.js'

/**
 * How a route sells: `'exact'` settles the price; `'upto'` makes the price the most a request may cost,
 * and settles what the handler charges (`paywall.charge`), Permit2 only; `'batch-settlement'` takes a
 * deposit once and a signed voucher of the price per request, which the paywall claims and settles to
 * `payTo` in batches (see `batchSettlement`).
 */
export type PaywallScheme = 'exact' | 'upto' | 'batch-settlement'

/** What a scheme's server side is built with: the merchant, and the checked `batchSettlement`. */
export type SchemeServerSettings = {
  payTo: Address
  /** `undefined` when no route sells with `batch-settlement`. */
  batchSettlement: CheckedBatchSettlement | undefined
}

/**
 * Each scheme `createPaywall` sells with, and x402's server side of it. A new scheme is one entry here
 * (and its name in `PaywallScheme`): the option check, the error that lists the schemes and the
 * registration read this table.
 */
const schemeServers: Record<
  PaywallScheme,
  (settings: SchemeServerSettings) => SchemeNetworkServer
> = {
  exact: () => new ExactEvmScheme(),
  upto: () => new UptoEvmScheme(),
  // The channels are kept in the seller's storage; vouchers are answered with no transaction.
  'batch-settlement': ({ payTo, batchSettlement }) =>
    new BatchSettlementEvmScheme(payTo, {
      storage: batchSettlement?.storage ?? new InMemoryChannelStorage(),
      ...(batchSettlement?.receiverAuthorizer
        ? { receiverAuthorizerSigner: batchSettlement.receiverAuthorizer }
        : {}),
    }),
}

/** The schemes `createPaywall` sells with, in the order its errors name them; anything else is refused at start. */
export const paywallSchemes = Object.keys(schemeServers) as readonly PaywallScheme[]

/**
 * A route's schemes, in its order: `['exact']` unless it says otherwise.
 *
 * @param key - The route's key, such as `'GET /premium'`, for the error.
 * @param route - The route, whose `scheme` is one scheme or a list of them.
 * @returns Its schemes.
 * @throws {VaultValidationError} `INVALID_ARGUMENT` for an unknown scheme, an empty list, or a scheme
 *   named twice.
 * @example
 * routeSchemes('GET /metered', { scheme: ['upto', 'exact'], price: '0.05', … }) // ['upto', 'exact']
 */
export function routeSchemes(
  key: string,
  route: PaywallRoute,
): [PaywallScheme, ...PaywallScheme[]] {
  const given = route?.scheme ?? 'exact'
  const schemes: unknown[] = Array.isArray(given) ? given : [given]
  const field = `routes[${JSON.stringify(key)}].scheme`
  const unknown = schemes.find((scheme) => !paywallSchemes.includes(scheme as PaywallScheme))
  if (schemes.length === 0 || unknown !== undefined) {
    throw new VaultValidationError(
      `${field} must be ${namesOf(paywallSchemes)}, or a list of them${schemes.length === 0 ? ' (the list is empty)' : ` (not ${JSON.stringify(unknown) ?? String(unknown)})`}.`,
      { code: 'INVALID_ARGUMENT', details: { field, known: paywallSchemes } },
    )
  }
  if (new Set(schemes).size !== schemes.length) {
    throw new VaultValidationError(`${field} names a scheme twice.`, {
      code: 'INVALID_ARGUMENT',
      details: { field },
    })
  }
  return schemes as [PaywallScheme, ...PaywallScheme[]]
}

/** `'a', 'b' or 'c'`. */
function namesOf(schemes: readonly PaywallScheme[]): string {
  const quoted = schemes.map((scheme) => `'${scheme}'`)
  return quoted.length < 2
    ? quoted.join('')
    : `${quoted.slice(0, -1).join(', ')} or ${quoted[quoted.length - 1]}`
}

/**
 * Registers x402's EVM server scheme for each scheme the routes sell with on the vault's network,
 * unless the resource server has it (a resource server of the seller's own may).
 *
 * @param resourceServer - The paywall's x402 resource server.
 * @param network - The vault's network, such as `'eip155:8453'`.
 * @param schemes - The schemes the routes sell with.
 * @param settings - `payTo`, and the checked `batchSettlement` (its channel storage and receiver
 *   authorizer) for a `batch-settlement` route.
 * @example
 * registerPaywallSchemes(resourceServer, vault.network, ['exact', 'upto'], { payTo, batchSettlement: undefined })
 */
export function registerPaywallSchemes(
  resourceServer: x402ResourceServer,
  network: VaultNetwork,
  schemes: readonly PaywallScheme[],
  settings: SchemeServerSettings,
): void {
  for (const scheme of paywallSchemes.filter((known) => schemes.includes(known))) {
    if (!resourceServer.hasRegisteredScheme(network, scheme)) {
      resourceServer.register(network, schemeServers[scheme](settings))
    }
  }
}
