import type {
  FacilitatorConfig,
  SettlementFailedResponseBody,
  UnpaidResponseBody,
  x402ResourceServer,
} from '@x402/core/server'
import type { Address } from 'viem'
import {
  type AttachToResourceServerOptions,
  evmAddress,
  type VaultClient,
  VaultValidationError,
} from '../index.js'
import { type CheckedFacilitator, checkFacilitatorOptions } from './facilitatorOptions.js'
import { type CheckedRoute, routePrice } from './paywallRoutes.js'
import { type PaywallScheme, routeSchemes } from './paywallSchemes.js'

/** One paid route. */
export type PaywallRoute = {
  /**
   * The price in USDC, as a decimal string such as `'0.01'` (or a bigint of base units); on an `upto`
   * route, the most one request may cost.
   */
  price: string | bigint
  /**
   * How the route sells: `'exact'` (the default), `'upto'`, or both, such as `['upto', 'exact']`, in the
   * order the buyer is offered them.
   */
  scheme?: PaywallScheme | readonly PaywallScheme[] | undefined
  /** What the buyer pays for; shown in the payment request. */
  description: string
  /** The MIME type of the paid response, such as `'application/json'`. */
  mimeType: string
  /** How long a payment authorisation stays valid, in seconds. Default 300 (x402's default). */
  maxTimeoutSeconds?: number | undefined
  /** The 402 body for a request without payment (non-browser clients). Default: what to pay, where. */
  unpaidResponseBody?: UnpaidResponseBody | undefined
  /** The 402 body when settlement fails. Default: `{ error, reason, message }`. */
  settlementFailedResponseBody?: SettlementFailedResponseBody | undefined
}

/** How to reach the x402 facilitator. */
export type PaywallFacilitator = {
  /** The facilitator's URL, such as `process.env.X402_FACILITATOR_URL` (unset: a clear error). */
  url: string | undefined
  /** Sent as `Authorization: Bearer <token>` on `verify`, `settle` and `supported`. */
  bearerToken?: string | undefined
  /** Or your own headers, keyed by path (`{ verify, settle, supported }`), as x402 expects. */
  createAuthHeaders?: FacilitatorConfig['createAuthHeaders'] | undefined
  /**
   * How long a call may take, in ms: one number for every call, or `{ verify, settle }`. Default
   * `{ verify: 10_000, settle: 30_000 }` (the `supported` call at start shares `verify`'s). A
   * verification that fails or runs out of time is answered 502 `{ error }` (the payment was not
   * taken); a settlement that does is looked up on chain first (see `settlementCheckMs`). Either is
   * reported to `sweep.onNonFatalError` (phase `facilitator`) and logged.
   */
  timeoutMs?: number | { verify?: number | undefined; settle?: number | undefined } | undefined
}

/** What `createPaywall` takes: the vault, the merchant, the facilitator, the paid routes and the sweep. */
export type CreatePaywallOptions = {
  /**
   * A vault client. With the sweeper on, its wallet client sends the sweeps' deposits: the merchant's
   * key, or an operator key of the merchant wallet that holds no money (see the seller guide).
   */
  vault: VaultClient
  /** The merchant wallet: receives the payments, and its idle USDC is swept into the vault. */
  payTo: Address | string
  /** The facilitator to build the x402 resource server with… */
  facilitator?: PaywallFacilitator | undefined
  /** …or an x402 resource server of your own (its facilitator clients and hooks are kept). */
  resourceServer?: x402ResourceServer | undefined
  /**
   * When a settlement's outcome is unknown (the facilitator's answer timed out, was lost, garbled, had
   * no transaction, or stayed `settlement_pending`), how long the paywall watches the chain for this
   * payment's authorisation before it answers, in ms. Used: the buyer gets the resource and the sale
   * counts; expired unused: the buyer is told it was not taken; still unknown: 402
   * `settlement_pending`. Default 10 000 (five Base blocks).
   */
  settlementCheckMs?: number | undefined
  /** Paid routes, keyed like x402's: `'GET /premium'`, `'/api/*'`, `'/items/:id'`. */
  routes: Record<string, PaywallRoute>
  /** Shown on the browser paywall page. */
  appName?: string | undefined
  /** Whether the browser paywall page is for a test network. Default: `true` on base-sepolia, `false` on base. */
  testnet?: boolean | undefined
  /**
   * Where x402's default USDC is not the vault's (on base-sepolia: Circle's test USDC,
   * `vaultChains['base-sepolia'].x402DefaultUsdc`), also accept it, the asset a stock x402 buyer pays
   * there, beside the vault's USDC; that revenue stays liquid in the wallet (the sweep moves only the
   * vault's USDC). Default `true` there; `false` accepts the vault's USDC alone. Ignored on base,
   * where the vault's USDC is x402's default asset.
   */
  acceptDefaultTestUsdc?: boolean | undefined
  /**
   * The sweeper: `minIdleThreshold`, `reserve`, `onIdleDeposit`, `onNonFatalError`, tuning. `false`
   * turns the in-process sweeper off, for instances swept by `x402-vault sweep --watch`: the paywall
   * then needs no wallet client, sends nothing, and `sweeper` is `undefined`.
   */
  sweep: Omit<AttachToResourceServerOptions, 'wallet'> | false
}

/** `createPaywall`'s options once checked: what the paywall is built from. */
export type CheckedPaywallOptions = {
  vault: VaultClient
  payTo: Address
  routes: CheckedRoute[]
  /** Every scheme the routes sell with, each once, in the order the routes first name them. */
  schemes: PaywallScheme[]
  /** How long an unknown settlement outcome is watched on chain, in ms. */
  settlementCheckMs: number
  acceptDefaultTestUsdc: boolean | undefined
  /** The resource server given, or the facilitator to build one with. */
  x402: CheckedFacilitator
}

/** The default of `settlementCheckMs`: five Base blocks. */
const defaultSettlementCheckMs = 10_000

/**
 * Checks `createPaywall`'s options, all of them before anything goes over the network, so that a typo
 * fails fast with an error naming the field: the vault client, `payTo`, the routes (price, schemes,
 * description, MIME type), `settlementCheckMs`, `acceptDefaultTestUsdc`, and the facilitator or resource
 * server. The `sweep` options are the SDK's, checked when the sweeper is attached.
 *
 * @param options - As `createPaywall`.
 * @returns The options, checked and with their defaults.
 * @throws {VaultValidationError} `INVALID_ARGUMENT`, `INVALID_ADDRESS` or `INVALID_AMOUNT`, with the
 *   field in `details.field`.
 * @example
 * const { vault, payTo, routes, schemes } = checkPaywallOptions(options)
 */
export function checkPaywallOptions(options: CreatePaywallOptions): CheckedPaywallOptions {
  const { vault, routes } = options ?? ({} as CreatePaywallOptions)
  if (typeof vault?.attachToResourceServer !== 'function') {
    throw new VaultValidationError(
      '`vault` must be a vault client (createVaultClient) with a wallet client for the merchant.',
      { code: 'INVALID_ARGUMENT', details: { field: 'vault' } },
    )
  }
  const payTo = evmAddress(options.payTo)
  if (typeof routes !== 'object' || routes === null || Object.keys(routes).length === 0) {
    throw new VaultValidationError(
      "`routes` must name at least one paid route, such as { 'GET /premium': { price: '0.01', … } }.",
      { code: 'INVALID_ARGUMENT', details: { field: 'routes' } },
    )
  }
  const checkedRoutes = Object.entries(routes).map(([key, route]): CheckedRoute => {
    routePrice(vault.chain, key, route, undefined)
    return { key, route, schemes: routeSchemes(key, route) }
  })
  const settlementCheckMs = checkSettlementCheckMs(options.settlementCheckMs)
  const acceptDefaultTestUsdc = checkAcceptDefaultTestUsdc(options.acceptDefaultTestUsdc)
  const x402 = checkFacilitatorOptions(options)
  for (const { key, route } of checkedRoutes) checkRouteTexts(key, route)
  return {
    vault,
    payTo,
    routes: checkedRoutes,
    schemes: [...new Set(checkedRoutes.flatMap((route) => route.schemes))],
    settlementCheckMs,
    acceptDefaultTestUsdc,
    x402,
  }
}

function checkSettlementCheckMs(given: unknown): number {
  if (given === undefined) return defaultSettlementCheckMs
  if (typeof given !== 'number' || !Number.isSafeInteger(given) || given < 0) {
    throw new VaultValidationError(
      `\`settlementCheckMs\` must be a whole number of ms, 0 or more (${String(given)}).`,
      { code: 'INVALID_ARGUMENT', details: { field: 'settlementCheckMs' } },
    )
  }
  return given
}

function checkAcceptDefaultTestUsdc(given: unknown): boolean | undefined {
  if (given !== undefined && typeof given !== 'boolean') {
    throw new VaultValidationError('`acceptDefaultTestUsdc` must be true or false.', {
      code: 'INVALID_ARGUMENT',
      details: { field: 'acceptDefaultTestUsdc' },
    })
  }
  return given
}

/** A route's description and MIME type, which x402 shows the buyer, must be strings. */
function checkRouteTexts(key: string, route: PaywallRoute): void {
  for (const field of ['description', 'mimeType'] as const) {
    if (typeof route[field] !== 'string') {
      throw new VaultValidationError(`routes[${JSON.stringify(key)}].${field} must be a string.`, {
        code: 'INVALID_ARGUMENT',
        details: { field: `routes[${JSON.stringify(key)}].${field}` },
      })
    }
  }
}
