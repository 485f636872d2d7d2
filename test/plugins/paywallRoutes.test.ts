/**
 * What a Hono paywall answers a request without payment, without a devnet (test/support/stubSeller.ts):
 * the 402 body and the `PAYMENT-REQUIRED` header on both chains, for `exact`, `upto` and both schemes, and
 * the route table (paid and free paths, methods, wildcards, parameters). On Base the vault's USDC is
 * Circle's (EIP-3009); on Base Sepolia it is Aave's test USDC, paid through Permit2, with x402's gas
 * sponsoring declared, and Circle's test USDC accepted second for a stock buyer.
 */
import { decodePaymentRequiredHeader } from '@x402/core/http'
import { describe, expect, it } from 'vitest'
import { vaultChains } from '../../src/index.js'
import { circleTestUsdc } from '../../src/sdk/chains.js'
import { stubSeller, stubShop, useStubServer } from '../support/stubSeller.js'

const sellers = { base: stubSeller('base'), 'base-sepolia': stubSeller('base-sepolia') }
useStubServer(...sellers.base.handlers, ...sellers['base-sepolia'].handlers)

/** Each chain: its USDC's EIP-712 domain and how it is paid, as the requirement names them. */
const chains = [
  {
    chain: 'base',
    extra: { name: 'USD Coin', version: '2', assetTransferMethod: 'eip3009' },
    stock: undefined,
    extensions: [],
  },
  {
    chain: 'base-sepolia',
    extra: { name: 'USDC', version: '1', assetTransferMethod: 'permit2' },
    stock: circleTestUsdc.address,
    extensions: ['eip2612GasSponsoring'],
  },
] as const

const route = { description: 'A paid answer', mimeType: 'application/json' }
const stockExtra = { name: 'USDC', version: '2', assetTransferMethod: 'eip3009' }

describe.each(chains)('on $chain', (setting) => {
  const seller = sellers[setting.chain]
  const usdc = vaultChains[setting.chain].addresses.usdc
  const { network } = seller
  const payTo = () => seller.merchant.address
  const optIn = setting.stock
    ? ` A buyer with x402's default spend controls pays in ${setting.stock} (x402's default test USDC); to pay in the vault's USDC at ${usdc}, add it to the buyer's allowedAssets.`
    : ''
  /**
   * One accepted payment of the requirement, in the vault's USDC or (`stock`) Circle's test USDC; x402's
   * upto pays through Permit2 on either chain, whatever the token, settled by the facilitator it names.
   */
  const accept = (scheme: string, amount: string, asset: 'vault' | 'stock' = 'vault') => ({
    scheme,
    network,
    amount,
    asset: asset === 'vault' ? usdc : setting.stock,
    payTo: payTo(),
    maxTimeoutSeconds: 300,
    extra: {
      ...(asset === 'vault' ? setting.extra : stockExtra),
      ...(scheme === 'upto'
        ? { assetTransferMethod: 'permit2', facilitatorAddress: seller.facilitator.address }
        : {}),
    },
  })
  /** The vault's USDC, then on Base Sepolia the stock buyer's. */
  const accepts = (scheme: string, amount: string) => [
    accept(scheme, amount),
    ...(setting.stock ? [accept(scheme, amount, 'stock')] : []),
  ]

  it('an exact route: 402 with what to pay in the body, and the requirement in PAYMENT-REQUIRED', async () => {
    const { app, paywall } = await stubShop(seller)
    const unpaid = await app.request('http://merchant.test/paid')
    await paywall.close()
    expect(unpaid.status).toBe(402)
    expect(await unpaid.json()).toEqual({
      error: 'payment_required',
      message: `Pay 0.5 USDC (500000 base units of the USDC at ${usdc}) to ${payTo()} on ${network} with x402: see the PAYMENT-REQUIRED header.${optIn}`,
      payment: {
        scheme: 'exact',
        network,
        asset: usdc,
        amount: '500000',
        amountUsdc: '0.5',
        payTo: payTo(),
        ...(setting.stock ? { alsoAccepted: [setting.stock] } : {}),
      },
    })
    const required = decodePaymentRequiredHeader(unpaid.headers.get('PAYMENT-REQUIRED') as string)
    expect(required).toMatchObject({
      x402Version: 2,
      resource: {
        url: 'http://merchant.test/paid',
        description: 'A paid answer',
        mimeType: 'application/json',
      },
    })
    expect(required.accepts).toEqual(accepts('exact', '500000'))
    expect(Object.keys(required.extensions ?? {})).toEqual(setting.extensions)
  })

  it('an upto route: the price is the most a request may cost, and the body says so', async () => {
    const { app, paywall } = await stubShop(seller, {
      routes: { 'GET /metered': { ...route, price: '0.05', scheme: 'upto' } },
    })
    const unpaid = await app.request('/metered')
    await paywall.close()
    expect(unpaid.status).toBe(402)
    expect(await unpaid.json()).toEqual({
      error: 'payment_required',
      message: `Pay up to 0.05 USDC (50000 base units of the USDC at ${usdc}) to ${payTo()} on ${network} with x402's upto scheme (upto settles only what the request used, never more): see the PAYMENT-REQUIRED header.${optIn}`,
      payment: {
        scheme: 'upto',
        network,
        asset: usdc,
        amount: '50000',
        amountUsdc: '0.05',
        payTo: payTo(),
        ...(setting.stock ? { alsoAccepted: [setting.stock] } : {}),
      },
    })
    const required = decodePaymentRequiredHeader(unpaid.headers.get('PAYMENT-REQUIRED') as string)
    expect(required.accepts).toEqual(accepts('upto', '50000'))
  })

  it('a route that sells both: by scheme in the route’s order, the vault’s USDC first in each', async () => {
    const { app, paywall } = await stubShop(seller, {
      routes: { 'GET /metered': { ...route, price: '0.05', scheme: ['upto', 'exact'] } },
    })
    const unpaid = await app.request('/metered')
    await paywall.close()
    const body = (await unpaid.json()) as { message: string; payment: Record<string, unknown> }
    expect(body.message).toMatch(
      /^Pay up to 0\.05 USDC .* with x402's upto or exact scheme \(upto settles only what the request used, never more\): /,
    )
    expect(body.payment).toMatchObject({ scheme: 'upto', schemes: ['upto', 'exact'] })
    const required = decodePaymentRequiredHeader(unpaid.headers.get('PAYMENT-REQUIRED') as string)
    expect(required.accepts).toEqual([...accepts('upto', '50000'), ...accepts('exact', '50000')])
  })

  it('a price above x402’s default cap of 1 USDC: the body says a buyer must raise it', async () => {
    const { app, paywall } = await stubShop(seller, {
      routes: { 'GET /paid': { ...route, price: 2_000_000n } },
    })
    const body = (await (await app.request('/paid')).json()) as { message: string }
    await paywall.close()
    expect(body.message).toMatch(/^Pay 2 USDC \(2000000 base units /)
    expect(body.message).toMatch(
      / The price is above x402's default cap of 1 USDC a payment: a buyer raises its cap to pay it\.$/,
    )
  })

  it('maxTimeoutSeconds and a custom unpaid body are the route’s own', async () => {
    const { app, paywall } = await stubShop(seller, {
      routes: {
        'GET /paid': {
          ...route,
          price: '0.5',
          maxTimeoutSeconds: 60,
          unpaidResponseBody: () => ({ contentType: 'application/json', body: { pay: 'please' } }),
        },
      },
    })
    const unpaid = await app.request('/paid')
    await paywall.close()
    expect(await unpaid.json()).toEqual({ pay: 'please' })
    const required = decodePaymentRequiredHeader(unpaid.headers.get('PAYMENT-REQUIRED') as string)
    expect(required.accepts.map((accepted) => accepted.maxTimeoutSeconds)).toEqual(
      accepts('exact', '500000').map(() => 60),
    )
  })
})

describe('on base-sepolia with acceptDefaultTestUsdc: false', () => {
  it('the vault’s USDC alone, and the body says a buyer must allow it', async () => {
    const seller = sellers['base-sepolia']
    const usdc = vaultChains['base-sepolia'].addresses.usdc
    const { app, paywall } = await stubShop(seller, { acceptDefaultTestUsdc: false })
    const unpaid = await app.request('/paid')
    await paywall.close()
    const body = (await unpaid.json()) as { message: string; payment: Record<string, unknown> }
    expect(body.message).toMatch(
      new RegExp(
        ` The USDC at ${usdc} is not x402's default asset on eip155:84532: a buyer adds it to its allowedAssets\\.$`,
      ),
    )
    expect(body.payment).not.toHaveProperty('alsoAccepted')
    const required = decodePaymentRequiredHeader(unpaid.headers.get('PAYMENT-REQUIRED') as string)
    expect(required.accepts.map((accepted) => accepted.asset)).toEqual([usdc])
  })
})

describe('the route table', () => {
  const seller = sellers.base
  const price = (amount: string) => ({ ...route, price: amount })

  it('pays what it names, by method, wildcard and parameter; everything else passes free', async () => {
    const { app, paywall } = await stubShop(seller, {
      routes: {
        'GET /paid': price('0.5'),
        '/api/*': price('0.02'),
        'POST /items/:id': price('0.03'),
      },
    })
    const amountOf = async (response: Response) =>
      decodePaymentRequiredHeader(response.headers.get('PAYMENT-REQUIRED') as string).accepts[0]
        ?.amount
    const answers = {
      paid: await app.request('/paid'),
      paidPost: await app.request('/paid', { method: 'POST' }),
      free: await app.request('/free'),
      apiGet: await app.request('/api/forecast'),
      apiDeep: await app.request('/api/forecast/tomorrow', { method: 'DELETE' }),
      itemPost: await app.request('/items/7', { method: 'POST' }),
      itemGet: await app.request('/items/7'),
    }
    await paywall.close()
    expect(answers.paid.status).toBe(402)
    expect(await amountOf(answers.paid)).toBe('500000')
    // Another method of a GET route is not behind the paywall: the app answers it (here, not found).
    expect(answers.paidPost.status).toBe(404)
    expect(answers.paidPost.headers.get('PAYMENT-REQUIRED')).toBeNull()
    expect(answers.free.status).toBe(200)
    expect(await answers.free.json()).toEqual({ free: true })
    // A route without a method: every method, every path below the wildcard.
    expect(answers.apiGet.status).toBe(402)
    expect(await amountOf(answers.apiGet)).toBe('20000')
    expect(answers.apiDeep.status).toBe(402)
    expect(await amountOf(answers.apiDeep)).toBe('20000')
    expect(answers.itemPost.status).toBe(402)
    expect(await amountOf(answers.itemPost)).toBe('30000')
    expect(answers.itemGet.status).toBe(200)
    expect(await answers.itemGet.json()).toEqual({ item: '7' })
    // None of it reached the facilitator beyond the start-up's /supported.
    expect(
      seller.facilitator.calls.filter((call) => call.path !== '/supported').map((c) => c.path),
    ).toEqual([])
  })
})
