/**
 * `createPaywall`'s option checks, without a devnet: each misconfiguration rejects with its own code and
 * words (never `process.exit`, never a secret), against a stubbed chain and an in-process facilitator
 * (test/support/stubSeller.ts). The Hono adapter; Express shares the same core (`preparePaywall`).
 */
import { x402ResourceServer } from '@x402/core/server'
import { HttpResponse, http, passthrough } from 'msw'
import { describe, expect, it } from 'vitest'
import type { CreatePaywallOptions, PaywallRoute } from '../../src/plugins/core.js'
import { preparePaywall } from '../../src/plugins/core.js'
import { createPaywall } from '../../src/plugins/hono.js'
import { expectVaultError } from '../support/expectVaultError.js'
import { refusedUrl, stubFacilitator } from '../support/stubFacilitator.js'
import { stubRoutes, stubSeller, useStubServer } from '../support/stubSeller.js'

const seller = stubSeller('base-sepolia')
const guarded = stubFacilitator({
  networks: [seller.network],
  bearerToken: 'stub-secret-token',
  url: 'http://guarded-facilitator.stub.test',
})
const server = useStubServer(...seller.handlers, ...guarded.handlers)

const options = (): CreatePaywallOptions => ({
  vault: seller.vault,
  payTo: seller.merchant.address,
  facilitator: { url: seller.facilitator.url },
  routes: stubRoutes(),
  sweep: false,
})

const route = { price: '0.5', description: 'A paid answer', mimeType: 'application/json' }

describe('a misconfigured paywall: a rejected promise with a clear error', () => {
  // Each mistake once (checkPaywallOptions and checkFacilitatorOptions): its code, its words, the field
  // it names (none for an address), and never the URL's key or a token.
  const paid = (override: Partial<PaywallRoute>) => ({ 'GET /paid': { ...route, ...override } })
  const batchRoute = paid({ scheme: 'batch-settlement' })
  const url = 'https://facilitator.example/x402?key=secret'
  it.each([
    [
      'not a vault client',
      { vault: {} as CreatePaywallOptions['vault'] },
      'INVALID_ARGUMENT',
      'vault',
      /^`vault` must be a vault client/,
    ],
    ['a bad payTo', { payTo: '0x1234' }, 'INVALID_ADDRESS', undefined, /Invalid address "0x1234"/],
    ['no routes', { routes: {} }, 'INVALID_ARGUMENT', 'routes', /at least one paid route/],
    [
      'a zero price',
      { routes: stubRoutes('0') },
      'INVALID_AMOUNT',
      'routes["GET /paid"].price',
      /^routes\["GET \/paid"\]\.price: amount must be greater than zero/,
    ],
    [
      'a malformed price',
      { routes: stubRoutes('0.0000001') },
      'INVALID_AMOUNT',
      'routes["GET /paid"].price',
      /^routes\["GET \/paid"\]\.price: .*at most 6 decimals/,
    ],
    [
      'an unknown scheme',
      { routes: paid({ scheme: 'batch' as 'exact' }) },
      'INVALID_ARGUMENT',
      'routes["GET /paid"].scheme',
      /^routes\["GET \/paid"\]\.scheme must be 'exact', 'upto' or 'batch-settlement', or a list of them \(not "batch"\)\.$/,
    ],
    [
      'an empty list of schemes',
      { routes: paid({ scheme: [] }) },
      'INVALID_ARGUMENT',
      'routes["GET /paid"].scheme',
      /\.scheme must be 'exact', 'upto' or 'batch-settlement', or a list of them \(the list is empty\)\.$/,
    ],
    [
      'a scheme named twice',
      { routes: paid({ scheme: ['upto', 'upto'] as const }) },
      'INVALID_ARGUMENT',
      'routes["GET /paid"].scheme',
      /^routes\["GET \/paid"\]\.scheme names a scheme twice\.$/,
    ],
    [
      'a batch-settlement route with a resource server of the seller’s own',
      { routes: batchRoute, facilitator: undefined, resourceServer: new x402ResourceServer() },
      'INVALID_ARGUMENT',
      'resourceServer',
      /^A `batch-settlement` route needs `facilitator` \(not `resourceServer`\)/,
    ],
    [
      'a batch-settlement storage that is not a ChannelStorage',
      { routes: batchRoute, batchSettlement: { storage: {} as never } },
      'INVALID_ARGUMENT',
      'batchSettlement.storage',
      /must be an x402 ChannelStorage \(get, list, updateChannel\)/,
    ],
    [
      'a batch-settlement claim interval of 0',
      { routes: batchRoute, batchSettlement: { claimIntervalMs: 0 } },
      'INVALID_ARGUMENT',
      'batchSettlement.claimIntervalMs',
      /^`batchSettlement\.claimIntervalMs` must be a positive whole number of ms \(0\)\.$/,
    ],
    [
      'a negative settlementCheckMs',
      { settlementCheckMs: -1 },
      'INVALID_ARGUMENT',
      'settlementCheckMs',
      /^`settlementCheckMs` must be a whole number of ms, 0 or more \(-1\)\.$/,
    ],
    [
      'acceptDefaultTestUsdc that is not a boolean',
      { acceptDefaultTestUsdc: 'yes' as unknown as boolean },
      'INVALID_ARGUMENT',
      'acceptDefaultTestUsdc',
      /^`acceptDefaultTestUsdc` must be true or false\.$/,
    ],
    [
      'no facilitator',
      { facilitator: undefined },
      'INVALID_ARGUMENT',
      'facilitator.url',
      /^`facilitator\.url` must be the http\(s\) URL of an x402 facilitator \(or pass `resourceServer`\)\.$/,
    ],
    [
      'a facilitator URL from an unset variable',
      { facilitator: { url: undefined } },
      'INVALID_ARGUMENT',
      'facilitator.url',
      /it is undefined: is the variable that should hold it \(such as X402_FACILITATOR_URL\) set\?$/,
    ],
    [
      'a facilitator URL that is not http(s)',
      { facilitator: { url: 'ftp://facilitator.example/?key=secret' } },
      'INVALID_ARGUMENT',
      'facilitator.url',
      /^`facilitator\.url` must be the http\(s\) URL of an x402 facilitator \(or pass `resourceServer`\)\.$/,
    ],
    [
      'both a bearer token and createAuthHeaders',
      {
        facilitator: {
          url,
          bearerToken: 'secret',
          createAuthHeaders: async () => ({ verify: {}, settle: {}, supported: {} }),
        },
      },
      'INVALID_ARGUMENT',
      'facilitator',
      /^Give either `facilitator\.bearerToken` or `facilitator\.createAuthHeaders`, not both\.$/,
    ],
    [
      'a bearer token with a space',
      { facilitator: { url, bearerToken: 'secret token' } },
      'INVALID_ARGUMENT',
      'facilitator.bearerToken',
      /^`facilitator\.bearerToken` must be a non-empty token without spaces\.$/,
    ],
    [
      'an empty bearer token',
      { facilitator: { url, bearerToken: '' } },
      'INVALID_ARGUMENT',
      'facilitator.bearerToken',
      /^`facilitator\.bearerToken` must be a non-empty token without spaces\.$/,
    ],
    [
      'a zero timeout',
      { facilitator: { url, timeoutMs: 0 } },
      'INVALID_ARGUMENT',
      'facilitator.timeoutMs',
      /positive whole number of ms, or \{ verify, settle \} of them \(verify: 0\)/,
    ],
    [
      'a settle timeout of 0',
      { facilitator: { url, timeoutMs: { settle: 0 } } },
      'INVALID_ARGUMENT',
      'facilitator.timeoutMs',
      /^`facilitator\.timeoutMs` must be a positive whole number of ms, or \{ verify, settle \} of them \(settle: 0\)\.$/,
    ],
    [
      'a fractional settle timeout',
      { facilitator: { url, timeoutMs: { settle: 1.5 } } },
      'INVALID_ARGUMENT',
      'facilitator.timeoutMs',
      /\(settle: 1\.5\)/,
    ],
    [
      'both a facilitator and a resource server',
      { facilitator: { url }, resourceServer: new x402ResourceServer() },
      'INVALID_ARGUMENT',
      'facilitator',
      /^Give either `facilitator` or `resourceServer`, not both/,
    ],
    [
      'a resource server that is not one',
      { facilitator: undefined, resourceServer: {} as x402ResourceServer },
      'INVALID_ARGUMENT',
      'resourceServer',
      /^`resourceServer` must be an x402ResourceServer/,
    ],
    [
      'a description that is not a string',
      { routes: paid({ description: 42 as unknown as string }) },
      'INVALID_ARGUMENT',
      'routes["GET /paid"].description',
      /^routes\["GET \/paid"\]\.description must be a string\.$/,
    ],
    [
      'no MIME type',
      { routes: paid({ mimeType: undefined as unknown as string }) },
      'INVALID_ARGUMENT',
      'routes["GET /paid"].mimeType',
      /mimeType must be a string/,
    ],
  ] as const)('%s', async (_name, override, code, field, message) => {
    const before = seller.rpc.requests.length
    const error = await expectVaultError(
      createPaywall({ ...options(), ...(override as Partial<CreatePaywallOptions>) }),
      code,
    )
    expect(error.message).toMatch(message)
    if (field !== undefined) expect(error.details).toMatchObject({ field })
    expect(JSON.stringify(error)).not.toContain('secret')
    expect(String(error.cause ?? '')).not.toContain('secret')
    // Nothing reached the facilitator; the chain at most for the USDC's metadata (one round trip).
    expect(seller.rpc.requests.length - before).toBeLessThanOrEqual(1)
  })

  it('a price or a scheme is refused before anything goes over the network', async () => {
    const before = { rpc: seller.rpc.requests.length, facilitator: seller.facilitator.calls.length }
    await expectVaultError(
      createPaywall({ ...options(), routes: stubRoutes('0') }),
      'INVALID_AMOUNT',
    )
    await expectVaultError(
      createPaywall({
        ...options(),
        routes: { 'GET /paid': { ...route, scheme: 'batch' as 'exact' } },
      }),
      'INVALID_ARGUMENT',
    )
    expect(seller.rpc.requests.length).toBe(before.rpc)
    expect(seller.facilitator.calls.length).toBe(before.facilitator)
  })

  it('a facilitator that is down: FACILITATOR_UNREACHABLE, without the URL’s key', async () => {
    // A real connection refused.
    const down = await refusedUrl()
    server.use(http.all(`${down}/*`, () => passthrough()))
    const error = await expectVaultError(
      createPaywall({ ...options(), facilitator: { url: `${down}/x402?key=secret` } }),
      'FACILITATOR_UNREACHABLE',
    )
    expect(error.message).toMatch(
      /^The x402 facilitator could not be reached or refused the request: .*ECONNREFUSED.*\. Check its URL and credentials\.$/,
    )
    expect(error.details).toEqual({ network: seller.network })
    expect(JSON.stringify(error)).not.toContain('secret')
    expect(String(error.cause ?? '')).not.toContain('secret')
  })

  it('a facilitator that answers /supported with 500: FACILITATOR_UNREACHABLE with its status', async () => {
    server.use(
      http.get(`${seller.facilitator.url}/supported`, () =>
        HttpResponse.json({ error: 'database down' }, { status: 500 }),
      ),
    )
    const error = await expectVaultError(createPaywall(options()), 'FACILITATOR_UNREACHABLE')
    expect(error.message).toContain('Facilitator getSupported failed (500)')
  })

  it('a facilitator that does not support the network: FACILITATOR_UNSUPPORTED, naming it and the schemes', async () => {
    // The Base vault, with Base Sepolia's facilitator: it settles eip155:84532 only.
    const base = stubSeller('base')
    server.use(...base.rpc.handlers)
    const error = await expectVaultError(
      createPaywall({
        ...options(),
        vault: base.vault,
        routes: { 'GET /paid': { ...route, scheme: ['exact', 'upto'] } },
      }),
      'FACILITATOR_UNSUPPORTED',
    )
    expect(error.message).toMatch(
      /^The facilitator does not support the exact and upto schemes on eip155:8453, which the routes sell with: use a facilitator that supports them on eip155:8453\. /,
    )
    expect(error.details).toEqual({ network: 'eip155:8453', schemes: ['exact', 'upto'] })
  })

  it('a facilitator that wants a bearer token: refused without it (401), sent on every call with it', async () => {
    const refused = await expectVaultError(
      createPaywall({ ...options(), facilitator: { url: guarded.url } }),
      'FACILITATOR_UNREACHABLE',
    )
    expect(refused.message).toMatch(/401/)
    const paywall = await createPaywall({
      ...options(),
      facilitator: { url: guarded.url, bearerToken: 'stub-secret-token' },
    })
    await paywall.close()
    expect(guarded.calls.map((call) => [call.path, call.authorization])).toEqual([
      ['/supported', null],
      ['/supported', 'Bearer stub-secret-token'],
    ])
  })
})

describe('a paywall that starts', () => {
  it('with `sweep: false` has no sweeper and reads the chain once (the USDC, in one multicall)', async () => {
    const before = seller.rpc.requests.length
    const paywall = await createPaywall(options())
    await paywall.close()
    expect(paywall.sweeper).toBeUndefined()
    expect(seller.rpc.requests.slice(before)).toEqual([
      {
        method: 'eth_call',
        calls: ['aggregate3', 'name', 'version', 'DOMAIN_SEPARATOR', 'authorizationState'],
      },
    ])
  })

  it('the browser paywall page options: appName, and testnet by chain unless given', async () => {
    const core = await preparePaywall({ ...options(), appName: 'Weather shop' })
    await core.close()
    expect(core.paywallConfig).toEqual({ appName: 'Weather shop', testnet: true })
    const mainnetLike = await preparePaywall({ ...options(), testnet: false })
    await mainnetLike.close()
    expect(mainnetLike.paywallConfig).toEqual({ testnet: false })
    const base = stubSeller('base')
    server.use(...base.handlers)
    const onBase = await preparePaywall({
      ...options(),
      vault: base.vault,
      facilitator: { url: base.facilitator.url },
    })
    await onBase.close()
    expect(onBase.paywallConfig).toEqual({ testnet: false })
  })
})
