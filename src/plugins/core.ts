import {
  type FacilitatorClient,
  type FacilitatorConfig,
  type HTTPResponseBody,
  type PaywallConfig,
  type RouteConfig,
  type SettlementFailedResponseBody,
  type UnpaidResponseBody,
  x402HTTPResourceServer,
  x402ResourceServer,
} from '@x402/core/server'
import { ExactEvmScheme } from '@x402/evm/exact/server'
import { UptoEvmScheme } from '@x402/evm/upto/server'
import { type Address, isAddressEqual } from 'viem'
import {
  type AttachToResourceServerOptions,
  evmAddress,
  formatUsdc,
  readX402UsdcAsset,
  type Sweeper,
  type VaultClient,
  VaultConfigError,
  VaultError,
  VaultPreconditionError,
  VaultTransactionError,
  VaultValidationError,
  vaultChains,
  type X402UsdcAsset,
  type X402UsdcPrice,
  x402UsdcPrice,
} from '../index.js'
import { redactSecrets, sweepGasText, sweepObservers } from '../sdk/shared.js'
import {
  type BatchSettlementRunner,
  batchSettlementNeedsFacilitator,
  type PaywallBatchSettlement,
  prepareBatchSettlement,
} from './batchSettlement.js'
import {
  defaultFacilitatorTimeouts,
  type FacilitatorTimeouts,
  guardedFacilitatorClient,
} from './facilitatorClient.js'
import { gasSponsoringExtensions } from './gasSponsoring.js'
import {
  type PaywallReport,
  PaywallSettlements,
  paymentAuthorizationInHeader,
  pendingPaymentBody,
  settlementPendingReason,
} from './paywallSettlements.js'
import { explainPermit2AllowanceRequired } from './permit2Allowance.js'
import { requestCharge } from './requestCharge.js'

/**
 * How a route sells: `'exact'` settles the price; `'upto'` makes the price the most a request may cost,
 * and settles what the handler charges (`paywall.charge`), Permit2 only; `'batch-settlement'` takes a
 * deposit once and a signed voucher of the price per request, which the paywall claims and settles to
 * `payTo` in batches (see `batchSettlement`).
 */
export type PaywallScheme = 'exact' | 'upto' | 'batch-settlement'

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

/** What both adapters build from: the initialised x402 HTTP server and the attached sweeper. */
export type PaywallCore = {
  httpServer: x402HTTPResourceServer
  resourceServer: x402ResourceServer
  paywallConfig: PaywallConfig
  sweeper: Sweeper | undefined
  /** Stops the sweeper (its `detach()`); resolves once a sweep in flight has ended. */
  close: () => Promise<void>
}

/** What `createPaywall` returns: the framework's middleware and the handles behind it. */
export type Paywall<middleware, sweeper extends Sweeper | undefined = Sweeper, response = never> = {
  middleware: middleware
  resourceServer: x402ResourceServer
  /** The in-process sweeper; `undefined` with `sweep: false`. */
  sweeper: sweeper
  /**
   * Says, in a paid handler, what this request costs (an `upto` route): USDC as a decimal string
   * (`'0.004'`) or a bigint of base units, from 0 (settles nothing) to the route's price (the maximum).
   * Only that is settled, after the handler answers; the buyer's `PAYMENT-RESPONSE` says what was
   * charged. Call it again to change it. On a payment of the `exact` scheme (a route that offers both)
   * the price is settled whatever the handler charges.
   *
   * @param response - Express: the handler's `res`; Hono: its `c`.
   * @param amount - What to charge.
   * @returns What will be settled, in base units.
   * @throws {VaultValidationError} `INVALID_AMOUNT` for an amount above the maximum (nothing is
   *   charged for it: charge again, or fail the request and the payment is not settled), negative or
   *   malformed; `INVALID_ARGUMENT` outside a paid request.
   */
  charge: (response: response, amount: string | bigint) => bigint
  /**
   * Call on shutdown: claims and settles what `batch-settlement` routes are owed (within
   * `batchSettlement.closeTimeoutMs`), then stops the sweeper; resolves once a sweep in flight has ended.
   */
  close: () => Promise<void>
}

/**
 * The paywall's `sweeper` for the options given: `undefined` with `sweep: false`, a `Sweeper` with
 * sweep options, either when the type allows both.
 */
export type PaywallSweeper<options extends CreatePaywallOptions> = options['sweep'] extends false
  ? undefined
  : false extends options['sweep']
    ? Sweeper | undefined
    : Sweeper

/** x402's `paymentMiddlewareFromHTTPServer` of one framework (`@x402/express` or `@x402/hono`). */
export type MiddlewareFromHTTPServer<middleware> = (
  httpServer: x402HTTPResourceServer,
  paywallConfig?: PaywallConfig,
  paywall?: undefined,
  syncFacilitatorOnStart?: boolean,
) => middleware

/** What the paywall takes from one framework's x402 package (`@x402/express` or `@x402/hono`). */
export type X402Framework<middleware, response> = {
  paymentMiddlewareFromHTTPServer: MiddlewareFromHTTPServer<middleware>
  /** x402's `setSettlementOverrides` of the framework. */
  setSettlementOverrides: (response: response, overrides: { amount: string }) => void
  /** The paid request's x402 payment header (`PAYMENT-SIGNATURE`, or v1's `X-PAYMENT`). */
  paymentHeaderOf: (response: response) => string | undefined
}

/**
 * `createPaywall` for the framework whose x402 package is given: the whole of it, so that each adapter
 * is one line.
 *
 * @param options - As `createPaywall`.
 * @param framework - The framework's `paymentMiddlewareFromHTTPServer`, `setSettlementOverrides`, and
 *   where a handler's response object finds the request's payment header.
 * @returns `{ middleware, resourceServer, sweeper, charge(), close() }`.
 */
export async function createPaywallWith<middleware, response, options extends CreatePaywallOptions>(
  options: options,
  framework: X402Framework<middleware, response>,
): Promise<Paywall<middleware, PaywallSweeper<options>, response>> {
  const core = await preparePaywall(options)
  return {
    // `false`: the server is initialised above; x402's background start-up would exit the process
    // on a configuration error.
    middleware: framework.paymentMiddlewareFromHTTPServer(
      core.httpServer,
      core.paywallConfig,
      undefined,
      false,
    ),
    resourceServer: core.resourceServer,
    // preparePaywall attaches a sweeper exactly when `sweep` is not `false`.
    sweeper: core.sweeper as PaywallSweeper<options>,
    charge: (response, amount) => {
      const charge = requestCharge(framework.paymentHeaderOf(response), amount)
      if (charge.override) framework.setSettlementOverrides(response, charge.override)
      return charge.settles
    },
    close: core.close,
  }
}

/**
 * Builds what an Express or Hono paywall needs, framework-neutrally: checks the options, builds the
 * payment requirements (each route's schemes, `exact` by default, the vault's network, `payTo`, the
 * price in the vault's USDC as read from the chain; on a Permit2 asset, x402's EIP-2612 gas sponsoring
 * declared so that a buyer who never approved Permit2 can pay), builds or takes the x402 resource
 * server, registers the exact EVM scheme (and the upto one for `upto` routes) for the vault's network,
 * initialises the HTTP server (so a configuration error rejects here, instead of x402's background
 * start-up calling `process.exit`), makes sure the merchant wallet is registered with the vault
 * router, and attaches the sweeper.
 *
 * @param options - As `createPaywall`.
 * @returns The initialised HTTP server, the resource server, the paywall page options, the sweeper
 *   and `close()`.
 * @throws {VaultValidationError} for a bad option (price, payTo, route); {VaultConfigError}
 *   `FACILITATOR_UNREACHABLE`, `FACILITATOR_UNSUPPORTED`, and the SDK's errors for the vault.
 */
export async function preparePaywall(options: CreatePaywallOptions): Promise<PaywallCore> {
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
  // Prices and schemes are checked before anything goes over the network: a typo fails fast.
  for (const [key, route] of Object.entries(routes)) {
    routePrice(vault, key, route, undefined)
    routeSchemes(key, route)
  }

  // Read, not assumed: the token decides EIP-3009 or Permit2, and its EIP-712 domain (x402 needs it for
  // EIP-3009, and for gas sponsoring on Permit2).
  const checkMs = settlementCheckMs(options.settlementCheckMs)
  const asset = await readX402UsdcAsset(vault)
  const extensions = await gasSponsoringExtensions(asset)
  const stockAsset = stockBuyerAsset(vault, options.acceptDefaultTestUsdc)
  const report = paywallReporter(options.sweep)
  const facilitatorClient = facilitatorClientOf(options, report)
  const resourceServer = options.resourceServer ?? new x402ResourceServer(facilitatorClient)
  const schemes = new Set(
    Object.entries(routes).flatMap(([key, route]) => routeSchemes(key, route)),
  )
  if (schemes.has('exact') && !resourceServer.hasRegisteredScheme(vault.network, 'exact')) {
    resourceServer.register(vault.network, new ExactEvmScheme())
  }
  if (schemes.has('upto') && !resourceServer.hasRegisteredScheme(vault.network, 'upto')) {
    resourceServer.register(vault.network, new UptoEvmScheme())
  }
  const settlements = new PaywallSettlements({
    vault,
    checkMs,
    checkClaims: options.sweep !== false,
    report,
  })
  settlements.attach(resourceServer)
  let batch: BatchSettlementRunner | undefined
  if (schemes.has('batch-settlement')) {
    if (facilitatorClient === undefined) throw batchSettlementNeedsFacilitator()
    batch = await prepareBatchSettlement({
      vault,
      payTo,
      resourceServer,
      facilitatorClient,
      assets: [asset.address, ...(stockAsset ? [stockAsset.address] : [])],
      options: options.batchSettlement,
      report,
      settled: (context) => settlements.settled(context),
    })
  }
  const routesConfig = Object.fromEntries(
    Object.entries(routes).map(([key, route]) => [
      key,
      routeConfig(
        vault,
        payTo,
        key,
        route,
        [
          routePrice(vault, key, route, asset),
          ...(stockAsset ? [routePrice(vault, key, route, stockAsset)] : []),
        ],
        extensions,
      ),
    ]),
  )
  const httpServer = await initialized(resourceServer, routesConfig, vault.network, [...schemes])
  batch?.start()
  explainPermit2AllowanceRequired(httpServer, { gasSponsoring: extensions !== undefined, report })
  let sweeper: Sweeper | undefined
  // Without the in-process sweeper the paywall sends nothing: the watch sweeper registers the wallet.
  if (options.sweep !== false) {
    await checkSweepKey(vault, payTo)
    await ensureRegistered(vault, payTo)
    // The sweeper hears of the settlements the chain shows, not of the facilitator's every claim.
    const attached = vault.attachToResourceServer(settlements.sweeperTarget, {
      ...options.sweep,
      wallet: payTo,
    })
    sweeper = {
      ...attached,
      idle: async () => {
        await settlements.idle()
        await attached.idle()
      },
    }
  }
  return {
    httpServer,
    resourceServer,
    paywallConfig: {
      ...(options.appName === undefined ? {} : { appName: options.appName }),
      testnet: options.testnet ?? vaultChains[vault.chain].viemChain.testnet === true,
    },
    sweeper,
    close: async () => {
      // First: a settlement it makes reaches the sweeper.
      await batch?.close()
      await settlements.close()
      await sweeper?.detach()
    },
  }
}

/**
 * The second asset a route accepts, so that a stock buyer can pay: x402's default USDC where it is
 * not the vault's (on base-sepolia only).
 */
function stockBuyerAsset(
  vault: VaultClient,
  accept: boolean | undefined,
): X402UsdcAsset | undefined {
  if (accept !== undefined && typeof accept !== 'boolean') {
    throw new VaultValidationError('`acceptDefaultTestUsdc` must be true or false.', {
      code: 'INVALID_ARGUMENT',
      details: { field: 'acceptDefaultTestUsdc' },
    })
  }
  const stock = vaultChains[vault.chain].x402DefaultUsdc
  if (stock === undefined || accept === false) return undefined
  // A private deployment whose USDC is that token already accepts it.
  if (vault.addresses.usdc.toLowerCase() === stock.address.toLowerCase()) return undefined
  return stock
}

/**
 * The facilitator client the paywall builds its resource server with (and sends `batch-settlement`
 * claims to); `undefined` when the seller gives a resource server of their own, which is checked.
 */
function facilitatorClientOf(
  options: CreatePaywallOptions,
  report: PaywallReport,
): FacilitatorClient | undefined {
  const { facilitator, resourceServer } = options
  if (resourceServer !== undefined) {
    if (facilitator !== undefined) {
      throw new VaultValidationError(
        'Give either `facilitator` or `resourceServer`, not both: a resource server has its own facilitator clients.',
        { code: 'INVALID_ARGUMENT', details: { field: 'facilitator' } },
      )
    }
    // Structural: the caller's resource server may come from another copy of @x402/core.
    if (
      typeof resourceServer?.register !== 'function' ||
      typeof resourceServer.hasRegisteredScheme !== 'function' ||
      typeof resourceServer.onAfterSettle !== 'function' ||
      typeof resourceServer.onSettleFailure !== 'function'
    ) {
      throw new VaultValidationError(
        '`resourceServer` must be an x402ResourceServer (from @x402/core/server, @x402/express or @x402/hono).',
        { code: 'INVALID_ARGUMENT', details: { field: 'resourceServer' } },
      )
    }
    return undefined
  }
  if (typeof facilitator?.url !== 'string' || !/^https?:\/\//.test(facilitator.url)) {
    // Usually from an environment variable; its value is never echoed (a URL may hold a key).
    const unset = facilitator !== undefined && facilitator.url === undefined
    throw new VaultValidationError(
      `\`facilitator.url\` must be the http(s) URL of an x402 facilitator (or pass \`resourceServer\`)${unset ? '; it is undefined: is the variable that should hold it (such as X402_FACILITATOR_URL) set?' : '.'}`,
      { code: 'INVALID_ARGUMENT', details: { field: 'facilitator.url' } },
    )
  }
  if (facilitator.bearerToken !== undefined && facilitator.createAuthHeaders !== undefined) {
    throw new VaultValidationError(
      'Give either `facilitator.bearerToken` or `facilitator.createAuthHeaders`, not both.',
      { code: 'INVALID_ARGUMENT', details: { field: 'facilitator' } },
    )
  }
  return guardedFacilitatorClient(
    { url: facilitator.url, ...authHeaders(facilitator) },
    facilitatorTimeouts(facilitator.timeoutMs),
    ({ error }) => report('facilitator', error),
  )
}

function facilitatorTimeouts(given: PaywallFacilitator['timeoutMs']): FacilitatorTimeouts {
  const pair = typeof given === 'number' ? { verify: given, settle: given } : { ...given }
  const timeouts = {
    verify: pair.verify ?? defaultFacilitatorTimeouts.verify,
    settle: pair.settle ?? defaultFacilitatorTimeouts.settle,
  }
  for (const [name, ms] of Object.entries(timeouts)) {
    if (!Number.isSafeInteger(ms) || ms <= 0) {
      throw new VaultValidationError(
        `\`facilitator.timeoutMs\` must be a positive whole number of ms, or { verify, settle } of them (${name}: ${String(ms)}).`,
        { code: 'INVALID_ARGUMENT', details: { field: 'facilitator.timeoutMs' } },
      )
    }
  }
  return timeouts
}

/** The default of `settlementCheckMs`: five Base blocks. */
const defaultSettlementCheckMs = 10_000

function settlementCheckMs(given: unknown): number {
  if (given === undefined) return defaultSettlementCheckMs
  if (typeof given !== 'number' || !Number.isSafeInteger(given) || given < 0) {
    throw new VaultValidationError(
      `\`settlementCheckMs\` must be a whole number of ms, 0 or more (${String(given)}).`,
      { code: 'INVALID_ARGUMENT', details: { field: 'settlementCheckMs' } },
    )
  }
  return given
}

/**
 * Tells the seller of a problem with a buyer's payment: in the log (x402 logs nothing for it) and,
 * with the sweeper on, to `onNonFatalError`.
 */
function paywallReporter(sweep: CreatePaywallOptions['sweep']): PaywallReport {
  const observers = sweep === false ? undefined : sweepObservers(sweep ?? {})
  return (phase, error) => {
    console.warn(`x402-vault: ${error.message}`)
    observers?.problem(phase, error, false)
  }
}

/** x402 wants facilitator headers keyed by path; a flat object would throw on the first request. */
function authHeaders(
  facilitator: PaywallFacilitator,
): Pick<FacilitatorConfig, 'createAuthHeaders'> {
  if (facilitator.createAuthHeaders) return { createAuthHeaders: facilitator.createAuthHeaders }
  const token = facilitator.bearerToken
  if (token === undefined) return {}
  if (typeof token !== 'string' || token === '' || /[\s]/.test(token)) {
    throw new VaultValidationError(
      '`facilitator.bearerToken` must be a non-empty token without spaces.',
      { code: 'INVALID_ARGUMENT', details: { field: 'facilitator.bearerToken' } },
    )
  }
  const headers = { Authorization: `Bearer ${token}` }
  return {
    createAuthHeaders: async () => ({ verify: headers, settle: headers, supported: headers }),
  }
}

function routePrice(
  vault: VaultClient,
  key: string,
  route: PaywallRoute,
  asset: X402UsdcAsset | undefined,
): X402UsdcPrice {
  try {
    return x402UsdcPrice({ chain: vault.chain, amount: route?.price, asset })
  } catch (error) {
    throw new VaultValidationError(
      `routes[${JSON.stringify(key)}].price: ${(error as Error).message}`,
      { code: 'INVALID_AMOUNT', details: { field: `routes[${JSON.stringify(key)}].price` } },
    )
  }
}

/** The schemes `createPaywall` sells with; anything else is refused at start. */
const paywallSchemes: readonly PaywallScheme[] = ['exact', 'upto', 'batch-settlement']

/** A route's schemes, in its order: `['exact']` unless it says otherwise. */
function routeSchemes(key: string, route: PaywallRoute): PaywallScheme[] {
  const given = route?.scheme ?? 'exact'
  const schemes: unknown[] = Array.isArray(given) ? given : [given]
  const field = `routes[${JSON.stringify(key)}].scheme`
  const unknown = schemes.find((scheme) => !paywallSchemes.includes(scheme as PaywallScheme))
  if (schemes.length === 0 || unknown !== undefined) {
    throw new VaultValidationError(
      `${field} must be ${paywallSchemes
        .map((scheme) => `'${scheme}'`)
        .join(', ')
        .replace(
          /, ([^,]*)$/,
          ' or $1',
        )}, or a list of them${schemes.length === 0 ? ' (the list is empty)' : ` (not ${JSON.stringify(unknown) ?? String(unknown)})`}.`,
      { code: 'INVALID_ARGUMENT', details: { field, known: paywallSchemes } },
    )
  }
  if (new Set(schemes).size !== schemes.length) {
    throw new VaultValidationError(`${field} names a scheme twice.`, {
      code: 'INVALID_ARGUMENT',
      details: { field },
    })
  }
  return schemes as PaywallScheme[]
}

function routeConfig(
  vault: VaultClient,
  payTo: Address,
  key: string,
  route: PaywallRoute,
  prices: X402UsdcPrice[],
  extensions: Record<string, unknown> | undefined,
): RouteConfig {
  for (const field of ['description', 'mimeType'] as const) {
    if (typeof route[field] !== 'string') {
      throw new VaultValidationError(`routes[${JSON.stringify(key)}].${field} must be a string.`, {
        code: 'INVALID_ARGUMENT',
        details: { field: `routes[${JSON.stringify(key)}].${field}` },
      })
    }
  }
  // By scheme in the route's order; in each, the vault's USDC first: a buyer that allows it pays it (and
  // the sweep deposits it); a stock buyer on base-sepolia skips to the next, x402's default asset.
  const accepts = routeSchemes(key, route).flatMap((scheme) =>
    prices.map((price) => ({
      scheme,
      network: vault.network,
      payTo,
      price,
      ...(route.maxTimeoutSeconds === undefined
        ? {}
        : { maxTimeoutSeconds: route.maxTimeoutSeconds }),
    })),
  )
  return {
    accepts,
    description: route.description,
    mimeType: route.mimeType,
    unpaidResponseBody:
      route.unpaidResponseBody ?? unpaidBody(vault, payTo, prices, routeSchemes(key, route)),
    settlementFailedResponseBody: route.settlementFailedResponseBody ?? settlementFailedBody,
    ...(extensions === undefined ? {} : { extensions }),
  }
}

/**
 * The default 402 body without payment: what to pay, on which network, in which assets, to whom, and
 * what a buyer with x402's default spend controls must change: allow the vault's USDC where it is not
 * x402's default asset, and raise the $1 cap for a price above it.
 */
function unpaidBody(
  vault: VaultClient,
  payTo: Address,
  prices: X402UsdcPrice[],
  schemes: PaywallScheme[],
): UnpaidResponseBody {
  const [price, stock] = prices as [X402UsdcPrice, ...X402UsdcPrice[]]
  const [scheme] = schemes as [PaywallScheme, ...PaywallScheme[]]
  const amountUsdc = formatUsdc(BigInt(price.amount))
  const buyers: string[] = []
  if (stock) {
    buyers.push(
      `A buyer with x402's default spend controls pays in ${stock.asset} (x402's default test USDC); to pay in the vault's USDC at ${price.asset}, add it to the buyer's allowedAssets.`,
    )
  } else if (vaultChains[vault.chain].x402DefaultUsdc) {
    buyers.push(
      `The USDC at ${price.asset} is not x402's default asset on ${vault.network}: a buyer adds it to its allowedAssets.`,
    )
  }
  if (BigInt(price.amount) > maxDefaultPayment) {
    buyers.push(
      `The price is above x402's default cap of 1 USDC a payment: a buyer raises its cap to pay it.`,
    )
  }
  // An exact-only route reads as it always has; any other names its schemes.
  const upTo = scheme === 'upto' ? 'up to ' : ''
  const how =
    schemes.length === 1 && scheme === 'exact'
      ? 'with x402'
      : `with x402's ${schemes.join(' or ')} scheme${schemes.includes('upto') ? ' (upto settles only what the request used, never more)' : ''}`
  const body = {
    error: 'payment_required',
    message: [
      `Pay ${upTo}${amountUsdc} USDC (${price.amount} base units of the USDC at ${price.asset}) to ${payTo} on ${vault.network} ${how}: see the PAYMENT-REQUIRED header.`,
      ...buyers,
    ].join(' '),
    payment: {
      scheme,
      ...(schemes.length > 1 ? { schemes } : {}),
      network: vault.network,
      asset: price.asset,
      amount: price.amount,
      amountUsdc,
      payTo,
      ...(stock ? { alsoAccepted: [stock.asset] } : {}),
    },
  }
  return (): HTTPResponseBody => ({ contentType: 'application/json', body })
}

/** x402's client pays at most this much a payment by default (1 USDC in base units). */
const maxDefaultPayment = 1_000_000n

/**
 * The default 402 body when settlement fails: `{ error, reason, message }`; for a settlement still
 * pending, what the buyer must not do and until when, with the payment it concerns.
 */
const settlementFailedBody: SettlementFailedResponseBody = (context, failure) => ({
  contentType: 'application/json',
  body:
    failure.errorReason === settlementPendingReason
      ? pendingPaymentBody(paymentAuthorizationInHeader(context.paymentHeader), failure)
      : {
          error: 'settlement_failed',
          reason: failure.errorReason,
          // x402 copies the reason code into `errorMessage` when the facilitator gave no words.
          message:
            failure.errorMessage && failure.errorMessage !== failure.errorReason
              ? failure.errorMessage
              : `The payment could not be settled (${failure.errorReason}).`,
        },
})

/**
 * Builds and initialises the HTTP resource server, turning x402's start-up failures into errors that
 * say what to fix. Initialising here is what keeps x402 from calling `process.exit` on them.
 */
async function initialized(
  resourceServer: x402ResourceServer,
  routes: Record<string, RouteConfig>,
  network: string,
  schemes: PaywallScheme[],
): Promise<x402HTTPResourceServer> {
  let httpServer: x402HTTPResourceServer
  try {
    httpServer = new x402HTTPResourceServer(resourceServer, routes)
  } catch (error) {
    throw new VaultValidationError(`x402 refused the routes: ${messageOf(error)}`, {
      code: 'INVALID_ARGUMENT',
    })
  }
  try {
    await httpServer.initialize()
  } catch (error) {
    if ((error as Error)?.name === 'RouteConfigurationError') {
      throw new VaultConfigError(
        `The facilitator does not support the ${schemes.join(' and ')} scheme${schemes.length > 1 ? 's' : ''} on ${network}, which the routes sell with: use a facilitator that supports ${schemes.length > 1 ? 'them' : 'it'} on ${network}. (${messageOf(error)})`,
        { code: 'FACILITATOR_UNSUPPORTED', details: { network, schemes } },
      )
    }
    throw new VaultConfigError(
      `The x402 facilitator could not be reached or refused the request: ${messageOf(error)}. Check its URL and credentials.`,
      { code: 'FACILITATOR_UNREACHABLE', details: { network }, cause: error },
    )
  }
  return httpServer
}

/**
 * Registers the merchant wallet with the router unless it is. Several instances starting at once may
 * collide on it; the one that loses finds the wallet registered on a second look.
 */
async function ensureRegistered(vault: VaultClient, wallet: Address): Promise<void> {
  try {
    await vault.ensureInitializedAndWait({ wallet })
  } catch (error) {
    const collided =
      error instanceof VaultError &&
      (error.code === 'NONCE_CONFLICT' || error.code === 'WALLET_ALREADY_REGISTERED')
    if (error instanceof VaultError && error.code === 'INSUFFICIENT_FUNDS_FOR_GAS') {
      throw new VaultTransactionError(
        `Registering ${wallet} with the vault router failed: ${senderOf(vault)} has no ETH for gas. ${gasAdvice(vault, senderOf(vault))}`,
        { code: 'INSUFFICIENT_FUNDS_FOR_GAS', details: { account: senderOf(vault) }, cause: error },
      )
    }
    if (!collided) throw error
    await vault.ensureInitializedAndWait({ wallet })
  }
}

/** The address that sends the sweeps' transactions and pays their gas. */
const senderOf = (vault: VaultClient): Address => vault.walletClient?.account?.address as Address

/** Which address needs ETH, and roughly how much. */
function gasAdvice(vault: VaultClient, sender: Address): string {
  return `Send ETH on ${vault.chain} to ${sender}, the key that sends the registration and every sweep: a sweep uses about ${sweepGasText} gas (0.00001 ETH or less at Base's usual fees); 0.001 ETH lasts about a hundred sweeps.`
}

/**
 * Refuses a sweep that could never deposit: the vault client's key must be `payTo`'s own, or its
 * operator with the router approved to take `payTo`'s USDC. Otherwise every sweep would fail with
 * `INSUFFICIENT_ALLOWANCE` while the revenue piles up, so the paywall does not start.
 */
async function checkSweepKey(vault: VaultClient, payTo: Address): Promise<void> {
  const sender = senderOf(vault)
  if (sender === undefined || isAddressEqual(sender, payTo)) return
  const [plan, allowance] = await Promise.all([
    vault.planSetOperator({ wallet: payTo, operator: sender }),
    // Through the SDK, as every read: its errors are converted (and redacted) like the others.
    vault.getUsdcAllowance({ wallet: payTo }),
  ])
  const missing = [
    ...(plan.alreadySet ? [] : [`made ${sender} its operator`]),
    ...(allowance > 0n ? [] : [`approved the vault router ${vault.addresses.router}`]),
  ]
  if (missing.length === 0) return
  throw new VaultPreconditionError(
    `The sweep cannot deposit for payTo ${payTo}: the vault client's key is ${sender}, not payTo's, and payTo has not ${missing.join(' nor ')}. Build the vault client with payTo's key, or have payTo set ${sender} up as its operator (\`x402-vault sweep --setup --wallet ${payTo} --operator ${sender}\` prints the steps), or pass \`sweep: false\` and sweep elsewhere.`,
    { code: 'NOT_AUTHORISED', details: { wallet: payTo, account: sender } },
  )
}

/** An error's message and its causes' on one line, with URLs reduced to their origin. */
function messageOf(error: unknown): string {
  const parts: string[] = []
  for (let e: unknown = error; e instanceof Error && parts.length < 3; e = e.cause) {
    parts.push(e.message.replace(/\s*\n\s*/g, ' '))
  }
  const text = parts.length > 0 ? parts.join(': ') : String(error)
  return redactSecrets(text, { hideHex32: true })
}
