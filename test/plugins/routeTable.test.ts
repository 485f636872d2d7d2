/**
 * The x402 route table a paywall is built from: what each route accepts (by scheme in the route's
 * order, in each the vault's USDC first, then the stock buyer's asset), its texts, its extensions, and
 * the default 402 body without payment, which tells a buyer what to pay, where, and what its x402
 * client must allow.
 */
import type {
  HTTPRequestContext,
  RouteConfig,
  SettlementFailedResponseBody,
} from '@x402/core/server'
import { getAddress } from 'viem'
import { describe, expect, it } from 'vitest'
import { VaultValidationError, vaultChains, type X402UsdcAsset } from '../../src/index.js'
import type { PaywallRoute } from '../../src/plugins/paywallOptions.js'
import { settlementFailedBody } from '../../src/plugins/paywallResponseBodies.js'
import { type CheckedRoute, paywallRoutes, routePrice } from '../../src/plugins/paywallRoutes.js'
import type { PaywallScheme } from '../../src/plugins/paywallSchemes.js'

const payTo = getAddress('0x00000000000000000000000000000000000000aa')
const baseUsdc: X402UsdcAsset = {
  address: vaultChains.base.addresses.usdc,
  ...vaultChains.base.usdcPayment,
}
/** Aave's test USDC as the chain shows it: Permit2, its domain read. */
const sepoliaUsdc: X402UsdcAsset = {
  address: vaultChains['base-sepolia'].addresses.usdc,
  name: 'USDC',
  version: '1',
  assetTransferMethod: 'permit2',
}
const circleTestUsdc = vaultChains['base-sepolia'].x402DefaultUsdc as X402UsdcAsset
const weather: PaywallRoute = {
  price: '0.01',
  description: 'Weather now',
  mimeType: 'application/json',
}
const checked = (
  route: PaywallRoute,
  schemes: [PaywallScheme, ...PaywallScheme[]] = ['exact'],
  key = 'GET /weather',
): CheckedRoute => ({ key, route, schemes })

/** A route's default 402 body without payment, as x402 sends it. */
async function unpaid(config: RouteConfig | undefined) {
  const body = await config?.unpaidResponseBody?.({} as HTTPRequestContext)
  expect(body?.contentType).toBe('application/json')
  return body?.body as { error: string; message: string; payment: Record<string, unknown> }
}

describe('paywallRoutes on base', () => {
  const table = (routes: CheckedRoute[], extensions?: Record<string, unknown>) =>
    paywallRoutes({
      chain: 'base',
      network: 'eip155:8453',
      payTo,
      routes,
      assets: [baseUsdc],
      extensions,
    })

  it("accepts the price in the vault's USDC, with the route's texts and the default bodies", async () => {
    const routes = table([checked(weather)])
    expect(Object.keys(routes)).toEqual(['GET /weather'])
    const config = routes['GET /weather'] as RouteConfig
    expect(config.accepts).toEqual([
      {
        scheme: 'exact',
        network: 'eip155:8453',
        payTo,
        price: {
          amount: '10000',
          asset: baseUsdc.address,
          extra: { name: 'USD Coin', version: '2', assetTransferMethod: 'eip3009' },
        },
      },
    ])
    expect(config.description).toBe('Weather now')
    expect(config.mimeType).toBe('application/json')
    expect(config.settlementFailedResponseBody).toBe(settlementFailedBody)
    expect(config).not.toHaveProperty('extensions')
    expect(await unpaid(config)).toEqual({
      error: 'payment_required',
      message: `Pay 0.01 USDC (10000 base units of the USDC at ${baseUsdc.address}) to ${payTo} on eip155:8453 with x402: see the PAYMENT-REQUIRED header.`,
      payment: {
        scheme: 'exact',
        network: 'eip155:8453',
        asset: baseUsdc.address,
        amount: '10000',
        amountUsdc: '0.01',
        payTo,
      },
    })
  })

  it('keeps the route’s maxTimeoutSeconds, its own bodies, and the extensions given', () => {
    const unpaidResponseBody = () => ({ contentType: 'text/plain', body: 'pay' })
    const settlementFailedResponseBody: SettlementFailedResponseBody = () => ({
      contentType: 'text/plain',
      body: 'failed',
    })
    const extensions = { eip2612GasSponsoring: { info: {}, schema: {} } }
    const config = table(
      [
        checked({
          ...weather,
          maxTimeoutSeconds: 60,
          unpaidResponseBody,
          settlementFailedResponseBody,
        }),
      ],
      extensions,
    )['GET /weather'] as RouteConfig
    expect(config.accepts).toMatchObject([{ maxTimeoutSeconds: 60 }])
    expect(config.unpaidResponseBody).toBe(unpaidResponseBody)
    expect(config.settlementFailedResponseBody).toBe(settlementFailedResponseBody)
    expect(config.extensions).toBe(extensions)
  })

  it('names the schemes of a route that sells by use, in its order, and x402’s $1 cap above it', async () => {
    const config = table([checked({ ...weather, price: 2_500_000n }, ['upto', 'exact'])])[
      'GET /weather'
    ] as RouteConfig
    expect((config.accepts as Array<{ scheme: string }>).map(({ scheme }) => scheme)).toEqual([
      'upto',
      'exact',
    ])
    const body = await unpaid(config)
    expect(body.message).toBe(
      `Pay up to 2.5 USDC (2500000 base units of the USDC at ${baseUsdc.address}) to ${payTo} on eip155:8453 with x402's upto or exact scheme (upto settles only what the request used, never more): see the PAYMENT-REQUIRED header. The price is above x402's default cap of 1 USDC a payment: a buyer raises its cap to pay it.`,
    )
    expect(body.payment).toMatchObject({ scheme: 'upto', schemes: ['upto', 'exact'] })
  })

  it('builds one entry per route, keyed as given', () => {
    const routes = table([
      checked(weather),
      checked({ ...weather, price: '0.05' }, ['upto'], 'GET /metered'),
    ])
    expect(Object.keys(routes)).toEqual(['GET /weather', 'GET /metered'])
    expect(routes['GET /metered']?.accepts).toMatchObject([
      { scheme: 'upto', price: { amount: '50000' } },
    ])
  })
})

describe('paywallRoutes on base-sepolia', () => {
  const table = (assets: [X402UsdcAsset, ...X402UsdcAsset[]], schemes: PaywallScheme[]) =>
    paywallRoutes({
      chain: 'base-sepolia',
      network: 'eip155:84532',
      payTo,
      routes: [checked(weather, schemes as [PaywallScheme, ...PaywallScheme[]])],
      assets,
      extensions: undefined,
    })['GET /weather'] as RouteConfig

  it("offers the vault's USDC first in each scheme, then the stock buyer's, and says so", async () => {
    const config = table([sepoliaUsdc, circleTestUsdc], ['upto', 'exact'])
    expect(
      (config.accepts as Array<{ scheme: string; price: { asset: string } }>).map(
        ({ scheme, price }) => [scheme, price.asset],
      ),
    ).toEqual([
      ['upto', sepoliaUsdc.address],
      ['upto', circleTestUsdc.address],
      ['exact', sepoliaUsdc.address],
      ['exact', circleTestUsdc.address],
    ])
    const body = await unpaid(config)
    expect(body.message).toContain(
      `A buyer with x402's default spend controls pays in ${circleTestUsdc.address} (x402's default test USDC); to pay in the vault's USDC at ${sepoliaUsdc.address}, add it to the buyer's allowedAssets.`,
    )
    expect(body.payment.alsoAccepted).toEqual([circleTestUsdc.address])
  })

  it("tells a buyer to allow the vault's USDC when it is the only asset", async () => {
    const body = await unpaid(table([sepoliaUsdc], ['exact']))
    expect(body.message).toContain(
      `The USDC at ${sepoliaUsdc.address} is not x402's default asset on eip155:84532: a buyer adds it to its allowedAssets.`,
    )
    expect(body.payment).not.toHaveProperty('alsoAccepted')
  })
})

describe('routePrice', () => {
  it('names the route in the error for a price the asset refuses', () => {
    expect(routePrice('base', 'GET /a', weather, baseUsdc).amount).toBe('10000')
    let error: unknown
    try {
      routePrice('base', 'GET /a', { ...weather, price: -1n }, baseUsdc)
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(VaultValidationError)
    expect(error).toMatchObject({
      code: 'INVALID_AMOUNT',
      details: { field: 'routes["GET /a"].price' },
    })
  })
})
