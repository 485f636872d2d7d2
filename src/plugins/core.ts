import type { PaywallConfig, x402HTTPResourceServer, x402ResourceServer } from '@x402/core/server'
import { type Sweeper, vaultChains } from '../index.js'
import { readPaywallAssets } from './paywallAssets.js'
import { type BatchSettlementRunner, paywallBatchSettlement } from './paywallBatchSettlement.js'
import { initializePaywallHttpServer } from './paywallHttpServer.js'
import { type CreatePaywallOptions, checkPaywallOptions } from './paywallOptions.js'
import { paywallReporter } from './paywallReporter.js'
import { paywallResourceServer } from './paywallResourceServer.js'
import { paywallRoutes } from './paywallRoutes.js'
import { registerPaywallSchemes } from './paywallSchemes.js'
import { PaywallSettlements } from './paywallSettlements.js'
import { startPaywallSweeper } from './paywallSweeper.js'
import { explainPermit2AllowanceRequired } from './permit2Allowance.js'
import { requestCharge } from './requestCharge.js'

export type {
  CreatePaywallOptions,
  PaywallBatchSettlement,
  PaywallFacilitator,
  PaywallRoute,
} from './paywallOptions.js'
export type { PaywallScheme } from './paywallSchemes.js'

/** What both adapters build from: the initialised x402 HTTP server and the attached sweeper. */
export type PaywallCore = {
  httpServer: x402HTTPResourceServer
  resourceServer: x402ResourceServer
  paywallConfig: PaywallConfig
  sweeper: Sweeper | undefined
  /**
   * Claims and settles what `batch-settlement` routes are owed, then stops the sweeper (its `detach()`);
   * resolves once a sweep in flight has ended.
   */
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
 * Builds what an Express or Hono paywall needs, framework-neutrally: checks every option before it
 * reads the chain, builds the payment requirements (each route's schemes, `exact` by default, the
 * vault's network, `payTo`, the price in the vault's USDC as read from the chain; on a Permit2 asset,
 * x402's EIP-2612 gas sponsoring declared so that a buyer who never approved Permit2 can pay), builds
 * or takes the x402 resource server, registers the x402 EVM scheme of each scheme the routes sell with
 * for the vault's network, initialises the HTTP server (so a configuration error rejects here, instead
 * of x402's background start-up calling `process.exit`), starts `batch-settlement`'s claim and settle
 * jobs, makes sure the merchant wallet is registered with the vault router, and attaches the sweeper.
 *
 * @param options - As `createPaywall`.
 * @returns The initialised HTTP server, the resource server, the paywall page options, the sweeper
 *   and `close()`.
 * @throws {VaultValidationError} for a bad option (price, payTo, route); {VaultConfigError}
 *   `FACILITATOR_UNREACHABLE`, `FACILITATOR_UNSUPPORTED`, and the SDK's errors for the vault.
 */
export async function preparePaywall(options: CreatePaywallOptions): Promise<PaywallCore> {
  // Every option is checked before anything goes over the network: a typo fails fast.
  const checked = checkPaywallOptions(options)
  const { vault, payTo, schemes } = checked
  const { assets, extensions } = await readPaywallAssets(vault, checked.acceptDefaultTestUsdc)
  const report = paywallReporter(options.sweep)
  const { resourceServer, facilitatorClient } = paywallResourceServer(checked.x402, report)
  registerPaywallSchemes(resourceServer, vault.network, schemes, {
    payTo,
    batchSettlement: checked.batchSettlement,
  })
  const settlements = new PaywallSettlements({
    vault,
    checkMs: checked.settlementCheckMs,
    checkClaims: options.sweep !== false,
    report,
  })
  settlements.attach(resourceServer)
  let batch: BatchSettlementRunner | undefined
  // checkPaywallOptions refuses a batch-settlement route without a facilitator (client).
  if (checked.batchSettlement !== undefined && facilitatorClient !== undefined) {
    batch = paywallBatchSettlement({
      vault,
      payTo,
      resourceServer,
      facilitatorClient,
      assets: assets.map((asset) => asset.address),
      options: checked.batchSettlement,
      report,
      settled: (context) => settlements.settled(context),
    })
  }
  const routes = paywallRoutes({
    chain: vault.chain,
    network: vault.network,
    payTo,
    routes: checked.routes,
    assets,
    extensions,
  })
  const httpServer = await initializePaywallHttpServer(
    resourceServer,
    routes,
    vault.network,
    schemes,
  )
  batch?.start()
  explainPermit2AllowanceRequired(httpServer, { gasSponsoring: extensions !== undefined, report })
  // Without the in-process sweeper the paywall sends nothing: the watch sweeper registers the wallet.
  const sweeper =
    options.sweep === false
      ? undefined
      : await startPaywallSweeper(vault, payTo, options.sweep, settlements)
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
