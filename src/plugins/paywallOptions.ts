import type {
  FacilitatorConfig,
  SettlementFailedResponseBody,
  UnpaidResponseBody,
  x402ResourceServer,
} from '@x402/core/server'
import type { AuthorizerSigner, ChannelStorage } from '@x402/evm/batch-settlement/server'
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
   * How the route sells: `'exact'` (the default), `'upto'`, `'batch-settlement'`, or several, such as
   * `['batch-settlement', 'exact']`, in the order the buyer is offered them.
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

/**
 * How a paywall runs x402's `batch-settlement` routes: where the channels' state lives, and how often
 * x402's channel manager claims the buyers' vouchers, settles the claimed money to `payTo` and refunds
 * idle channels.
 */
export type PaywallBatchSettlement = {
  /**
   * Where the channels (each buyer's deposit, its latest voucher, what is claimed) are kept: an x402
   * `ChannelStorage`. Default x402's `InMemoryChannelStorage`, for one instance: what is not claimed yet
   * is lost with the process (the buyers can take it back after the channel's withdraw delay). Several
   * instances share one store: `createPostgresChannelStorage` (its claims run on one instance at a
   * time), or x402's `RedisChannelStorage`.
   */
  storage?: ChannelStorage | undefined
  /**
   * The key that signs claims and refunds as the channels' receiver authorizer. Default: none, the
   * facilitator's (it must advertise one, as x402's does).
   */
  receiverAuthorizer?: AuthorizerSigner | undefined
  /** How often the vouchers are claimed, in ms. Default 60 000. */
  claimIntervalMs?: number | undefined
  /**
   * How often what is claimed is settled to `payTo` (one transfer, which the sweep then follows), in ms.
   * Default 300 000.
   */
  settleIntervalMs?: number | undefined
  /**
   * A channel without a request for this long, in ms, has its unclaimed deposit refunded to its buyer
   * (checked with each claim). Default 86 400 000 (a day); `false` refunds none.
   */
  refundIdleAfterMs?: number | false | undefined
  /**
   * How long `close()` may take to claim and settle what is owed, in ms. Default 30 000. What is not
   * settled by then stays in the storage (and in the contract's escrow) for the next start.
   */
  closeTimeoutMs?: number | undefined
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
  /**
   * For `batch-settlement` routes: where the channels are kept (`storage`; several instances share
   * one, such as `createPostgresChannelStorage`), how often vouchers are claimed and settled, when idle
   * channels are refunded, and how long `close()` may take to settle what is owed.
   */
  batchSettlement?: PaywallBatchSettlement | undefined
}

/** `batchSettlement` once checked, with its defaults; `storage` stays unset for x402's in-memory one. */
export type CheckedBatchSettlement = {
  storage: ChannelStorage | undefined
  receiverAuthorizer: AuthorizerSigner | undefined
  claimIntervalMs: number
  settleIntervalMs: number
  refundIdleAfterMs: number | false
  closeTimeoutMs: number
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
  /** How `batch-settlement` routes run; `undefined` when no route sells with it. */
  batchSettlement: CheckedBatchSettlement | undefined
}

/** The default of `settlementCheckMs`: five Base blocks. */
const defaultSettlementCheckMs = 10_000

/** The defaults of `batchSettlement`'s intervals and timeout, in ms. */
const batchSettlementDefaults = {
  claimIntervalMs: 60_000,
  settleIntervalMs: 300_000,
  refundIdleAfterMs: 86_400_000,
  closeTimeoutMs: 30_000,
}

/**
 * Checks `createPaywall`'s options, all of them before anything goes over the network, so that a typo
 * fails fast with an error naming the field: the vault client, `payTo`, the routes (price, schemes,
 * description, MIME type), `settlementCheckMs`, `acceptDefaultTestUsdc`, the facilitator or resource
 * server, and `batchSettlement` (a `batch-settlement` route needs a facilitator). The `sweep` options are the SDK's, checked when the sweeper is attached.
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
  const schemes = [...new Set(checkedRoutes.flatMap((route) => route.schemes))]
  const batchSettlement = schemes.includes('batch-settlement')
    ? checkBatchSettlement(options.batchSettlement, x402)
    : undefined
  for (const { key, route } of checkedRoutes) checkRouteTexts(key, route)
  return {
    vault,
    payTo,
    routes: checkedRoutes,
    schemes,
    settlementCheckMs,
    acceptDefaultTestUsdc,
    x402,
    batchSettlement,
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

/**
 * `batchSettlement`, for a paywall with a `batch-settlement` route: the paywall sends the channel
 * manager's claims, settlements and refunds to its facilitator, so it needs one (not a resource server).
 */
function checkBatchSettlement(
  given: PaywallBatchSettlement | undefined,
  x402: CheckedFacilitator,
): CheckedBatchSettlement {
  if ('resourceServer' in x402) {
    throw new VaultValidationError(
      'A `batch-settlement` route needs `facilitator` (not `resourceServer`): the paywall sends the channel manager’s claims, settlements and refunds to it.',
      { code: 'INVALID_ARGUMENT', details: { field: 'resourceServer' } },
    )
  }
  if (given !== undefined && (typeof given !== 'object' || given === null)) {
    throw new VaultValidationError('`batchSettlement` must be an object of options.', {
      code: 'INVALID_ARGUMENT',
      details: { field: 'batchSettlement' },
    })
  }
  const storage = given?.storage
  if (
    storage !== undefined &&
    !['get', 'list', 'updateChannel'].every(
      (method) => typeof (storage as unknown as Record<string, unknown>)?.[method] === 'function',
    )
  ) {
    throw new VaultValidationError(
      '`batchSettlement.storage` must be an x402 ChannelStorage (get, list, updateChannel), such as createPostgresChannelStorage()',
      { code: 'INVALID_ARGUMENT', details: { field: 'batchSettlement.storage' } },
    )
  }
  const receiverAuthorizer = given?.receiverAuthorizer
  if (receiverAuthorizer !== undefined && typeof receiverAuthorizer?.signTypedData !== 'function') {
    throw new VaultValidationError(
      '`batchSettlement.receiverAuthorizer` must be a signer with an address and signTypedData, such as a viem local account.',
      { code: 'INVALID_ARGUMENT', details: { field: 'batchSettlement.receiverAuthorizer' } },
    )
  }
  const ms = (field: keyof typeof batchSettlementDefaults, allowFalse = false): number | false => {
    const value = given?.[field]
    if (value === undefined) return batchSettlementDefaults[field]
    if (allowFalse && value === false) return false
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
      throw new VaultValidationError(
        `\`batchSettlement.${field}\` must be a positive whole number of ms${allowFalse ? ', or false' : ''} (${String(value)}).`,
        { code: 'INVALID_ARGUMENT', details: { field: `batchSettlement.${field}` } },
      )
    }
    return value
  }
  return {
    storage,
    receiverAuthorizer,
    claimIntervalMs: ms('claimIntervalMs') as number,
    settleIntervalMs: ms('settleIntervalMs') as number,
    refundIdleAfterMs: ms('refundIdleAfterMs', true),
    closeTimeoutMs: ms('closeTimeoutMs') as number,
  }
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
