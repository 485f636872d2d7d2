/**
 * createPaywall's options, checked before anything goes over the network (the vault client's RPC here
 * is unreachable, and the check is synchronous): what a good set becomes, and for each mistake the
 * error, its code and the field it names, in the order the checks run.
 */
import { x402ResourceServer } from '@x402/core/server'
import { createPublicClient, getAddress, http } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CountingProxy, startCountingProxy } from '../../harness/countingProxy.js'
import { createVaultClient, VaultError } from '../../src/index.js'
import { preparePaywall } from '../../src/plugins/core.js'
import { checkFacilitatorOptions } from '../../src/plugins/facilitatorOptions.js'
import {
  type CreatePaywallOptions,
  checkPaywallOptions,
  type PaywallRoute,
} from '../../src/plugins/paywallOptions.js'

// Nothing here reaches the network: the checks run before any request.
const vault = createVaultClient({
  publicClient: createPublicClient({ transport: http('http://127.0.0.1:9/') }),
  chain: 'base',
})
const payTo = '0x00000000000000000000000000000000000000aa'
const weather: PaywallRoute = {
  price: '0.01',
  description: 'Weather now',
  mimeType: 'application/json',
}
const options = (override: Partial<CreatePaywallOptions> = {}): CreatePaywallOptions => ({
  vault,
  payTo,
  facilitator: { url: 'https://facilitator.example/x402' },
  routes: { 'GET /weather': weather },
  sweep: { minIdleThreshold: '10' },
  ...override,
})

function refusal(call: () => unknown): VaultError {
  try {
    call()
  } catch (error) {
    expect(error).toBeInstanceOf(VaultError)
    return error as VaultError
  }
  throw new Error('expected a refusal')
}

describe('checkPaywallOptions', () => {
  it('gives payTo checksummed, each route with its schemes, every scheme once, and the defaults', () => {
    const checked = checkPaywallOptions(
      options({
        routes: {
          'GET /weather': weather,
          'GET /metered': { ...weather, scheme: ['upto', 'exact'] },
          'GET /forecast': { ...weather, price: 25_000n },
        },
      }),
    )
    expect(checked.vault).toBe(vault)
    expect(checked.payTo).toBe(getAddress(payTo))
    expect(checked.routes.map(({ key, schemes }) => [key, schemes])).toEqual([
      ['GET /weather', ['exact']],
      ['GET /metered', ['upto', 'exact']],
      ['GET /forecast', ['exact']],
    ])
    expect(checked.routes[1]?.route).toEqual({ ...weather, scheme: ['upto', 'exact'] })
    expect(checked.schemes).toEqual(['exact', 'upto'])
    expect(checked.settlementCheckMs).toBe(10_000)
    expect(checked.acceptDefaultTestUsdc).toBeUndefined()
    expect(checked.x402).toEqual({
      facilitator: { url: 'https://facilitator.example/x402' },
      timeouts: { verify: 10_000, settle: 30_000 },
    })
  })

  it('checks batchSettlement only for a batch-settlement route, and gives its defaults', () => {
    expect(checkPaywallOptions(options()).batchSettlement).toBeUndefined()
    // No batch-settlement route: its options are not read.
    expect(
      checkPaywallOptions(options({ batchSettlement: { claimIntervalMs: -1 } })).batchSettlement,
    ).toBeUndefined()
    const batch = checkPaywallOptions(
      options({
        routes: { 'GET /weather': { ...weather, scheme: ['batch-settlement', 'exact'] } },
        batchSettlement: { settleIntervalMs: 5_000, refundIdleAfterMs: false },
      }),
    )
    expect(batch.schemes).toEqual(['batch-settlement', 'exact'])
    expect(batch.batchSettlement).toEqual({
      storage: undefined,
      receiverAuthorizer: undefined,
      claimIntervalMs: 60_000,
      settleIntervalMs: 5_000,
      refundIdleAfterMs: false,
      closeTimeoutMs: 30_000,
    })
  })

  it('keeps the values given: settlementCheckMs (0 too) and acceptDefaultTestUsdc', () => {
    expect(checkPaywallOptions(options({ settlementCheckMs: 0 })).settlementCheckMs).toBe(0)
    expect(checkPaywallOptions(options({ settlementCheckMs: 2_500 })).settlementCheckMs).toBe(2_500)
    const declined = checkPaywallOptions(options({ acceptDefaultTestUsdc: false }))
    expect(declined.acceptDefaultTestUsdc).toBe(false)
  })

  it.each([
    [
      'no vault client',
      { vault: {} as CreatePaywallOptions['vault'] },
      'INVALID_ARGUMENT',
      'vault',
      /`vault` must be a vault client/,
    ],
    ['a bad payTo', { payTo: '0x1234' }, 'INVALID_ADDRESS', undefined, /Invalid address "0x1234"/],
    ['no routes', { routes: {} }, 'INVALID_ARGUMENT', 'routes', /at least one paid route/],
    [
      'a zero price',
      { routes: { 'GET /weather': { ...weather, price: '0' } } },
      'INVALID_AMOUNT',
      'routes["GET /weather"].price',
      /^routes\["GET \/weather"\]\.price: amount must be greater than zero/,
    ],
    [
      'a price finer than USDC',
      { routes: { 'GET /weather': { ...weather, price: '0.0000001' } } },
      'INVALID_AMOUNT',
      'routes["GET /weather"].price',
      /at most 6 decimals/,
    ],
    [
      'an unknown scheme',
      { routes: { 'GET /weather': { ...weather, scheme: 'stream' as 'exact' } } },
      'INVALID_ARGUMENT',
      'routes["GET /weather"].scheme',
      /must be 'exact', 'upto' or 'batch-settlement', or a list of them \(not "stream"\)/,
    ],
    [
      'a batch-settlement route with a resource server of the seller’s own',
      {
        routes: { 'GET /weather': { ...weather, scheme: 'batch-settlement' } },
        facilitator: undefined,
        resourceServer: new x402ResourceServer(),
      },
      'INVALID_ARGUMENT',
      'resourceServer',
      /^A `batch-settlement` route needs `facilitator` \(not `resourceServer`\)/,
    ],
    [
      'a batch-settlement storage that is not a ChannelStorage',
      {
        routes: { 'GET /weather': { ...weather, scheme: 'batch-settlement' } },
        batchSettlement: { storage: {} as never },
      },
      'INVALID_ARGUMENT',
      'batchSettlement.storage',
      /must be an x402 ChannelStorage \(get, list, updateChannel\)/,
    ],
    [
      'a batch-settlement claim interval of 0',
      {
        routes: { 'GET /weather': { ...weather, scheme: 'batch-settlement' } },
        batchSettlement: { claimIntervalMs: 0 },
      },
      'INVALID_ARGUMENT',
      'batchSettlement.claimIntervalMs',
      /^`batchSettlement\.claimIntervalMs` must be a positive whole number of ms \(0\)\.$/,
    ],
    [
      'a negative settlementCheckMs',
      { settlementCheckMs: -1 },
      'INVALID_ARGUMENT',
      'settlementCheckMs',
      /`settlementCheckMs` must be a whole number of ms, 0 or more \(-1\)/,
    ],
    [
      'an acceptDefaultTestUsdc that is not a boolean',
      { acceptDefaultTestUsdc: 'yes' as unknown as boolean },
      'INVALID_ARGUMENT',
      'acceptDefaultTestUsdc',
      /must be true or false/,
    ],
    [
      'no facilitator',
      { facilitator: undefined },
      'INVALID_ARGUMENT',
      'facilitator.url',
      /`facilitator\.url` must be the http\(s\) URL of an x402 facilitator \(or pass `resourceServer`\)\.$/,
    ],
    [
      'a description that is not a string',
      { routes: { 'GET /weather': { ...weather, description: 7 as unknown as string } } },
      'INVALID_ARGUMENT',
      'routes["GET /weather"].description',
      /^routes\["GET \/weather"\]\.description must be a string\.$/,
    ],
    [
      'no MIME type',
      { routes: { 'GET /weather': { ...weather, mimeType: undefined as unknown as string } } },
      'INVALID_ARGUMENT',
      'routes["GET /weather"].mimeType',
      /mimeType must be a string/,
    ],
  ] as const)('%s: a clear error naming the field', (_name, override, code, field, message) => {
    const error = refusal(() =>
      checkPaywallOptions(options(override as Partial<CreatePaywallOptions>)),
    )
    expect(error.code).toBe(code)
    expect(error.message).toMatch(message)
    if (field !== undefined) expect(error.details).toMatchObject({ field })
  })

  it('checks prices and schemes first, then the facilitator, then what the routes show the buyer', () => {
    const badRoute = { ...weather, description: 7 as unknown as string }
    // A bad description and a bad price on another route: the price is named.
    expect(
      refusal(() =>
        checkPaywallOptions(
          options({
            routes: { 'GET /a': badRoute, 'GET /b': { ...weather, price: '0' } },
          }),
        ),
      ).details,
    ).toMatchObject({ field: 'routes["GET /b"].price' })
    // A bad description and no facilitator: the facilitator is named.
    expect(
      refusal(() =>
        checkPaywallOptions(options({ routes: { 'GET /a': badRoute }, facilitator: undefined })),
      ).details,
    ).toMatchObject({ field: 'facilitator.url' })
  })
})

describe('checkFacilitatorOptions', () => {
  const url = 'https://facilitator.example/x402?key=secret'

  it('takes a resource server of the seller’s own as it is', () => {
    const resourceServer = new x402ResourceServer()
    expect(checkFacilitatorOptions({ resourceServer })).toEqual({ resourceServer })
  })

  it('sends a bearer token as x402 wants it: headers keyed by path', async () => {
    const checked = checkFacilitatorOptions({ facilitator: { url, bearerToken: 'tok3n' } })
    if (!('facilitator' in checked)) throw new Error('expected a facilitator')
    const headers = { Authorization: 'Bearer tok3n' }
    expect(await checked.facilitator.createAuthHeaders?.()).toEqual({
      verify: headers,
      settle: headers,
      supported: headers,
    })
  })

  it('keeps createAuthHeaders as given', () => {
    const createAuthHeaders = async () => ({ verify: {}, settle: {}, supported: {} })
    const checked = checkFacilitatorOptions({ facilitator: { url, createAuthHeaders } })
    expect(checked).toMatchObject({ facilitator: { url, createAuthHeaders } })
  })

  it('reads timeoutMs as one number for both calls, or either of { verify, settle }', () => {
    const timeouts = (timeoutMs: unknown) => {
      const checked = checkFacilitatorOptions({
        facilitator: { url, timeoutMs: timeoutMs as number },
      })
      return 'timeouts' in checked ? checked.timeouts : undefined
    }
    expect(timeouts(5_000)).toEqual({ verify: 5_000, settle: 5_000 })
    expect(timeouts({ settle: 60_000 })).toEqual({ verify: 10_000, settle: 60_000 })
    expect(timeouts({ verify: 1_000 })).toEqual({ verify: 1_000, settle: 30_000 })
  })

  it.each([
    [
      'both a resource server and a facilitator',
      { resourceServer: new x402ResourceServer(), facilitator: { url } },
      'facilitator',
      /Give either `facilitator` or `resourceServer`, not both/,
    ],
    [
      'a resource server that is not one',
      { resourceServer: { register: () => undefined } as unknown as x402ResourceServer },
      'resourceServer',
      /`resourceServer` must be an x402ResourceServer/,
    ],
    [
      'a URL from an unset variable',
      { facilitator: { url: undefined } },
      'facilitator.url',
      /it is undefined: is the variable that should hold it \(such as X402_FACILITATOR_URL\) set\?$/,
    ],
    [
      'a URL that is not http(s)',
      { facilitator: { url: 'ftp://facilitator.example/?key=secret' } },
      'facilitator.url',
      /must be the http\(s\) URL/,
    ],
    [
      'both kinds of credentials',
      {
        facilitator: {
          url,
          bearerToken: 'tok3n',
          createAuthHeaders: async () => ({ verify: {}, settle: {}, supported: {} }),
        },
      },
      'facilitator',
      /either `facilitator\.bearerToken` or `facilitator\.createAuthHeaders`, not both/,
    ],
    [
      'a bearer token with a space',
      { facilitator: { url, bearerToken: 'tok en' } },
      'facilitator.bearerToken',
      /non-empty token without spaces/,
    ],
    [
      'an empty bearer token',
      { facilitator: { url, bearerToken: '' } },
      'facilitator.bearerToken',
      /non-empty token without spaces/,
    ],
    [
      'a zero timeout',
      { facilitator: { url, timeoutMs: 0 } },
      'facilitator.timeoutMs',
      /positive whole number of ms, or \{ verify, settle \} of them \(verify: 0\)/,
    ],
    [
      'a fractional settle timeout',
      { facilitator: { url, timeoutMs: { settle: 1.5 } } },
      'facilitator.timeoutMs',
      /\(settle: 1\.5\)/,
    ],
  ] as const)(
    '%s: INVALID_ARGUMENT naming the field, never the URL',
    (_name, given, field, message) => {
      const error = refusal(() =>
        checkFacilitatorOptions(given as Parameters<typeof checkFacilitatorOptions>[0]),
      )
      expect(error.code).toBe('INVALID_ARGUMENT')
      expect(error.details).toMatchObject({ field })
      expect(error.message).toMatch(message)
      expect(JSON.stringify(error)).not.toContain('secret')
    },
  )
})

describe('preparePaywall', () => {
  // An RPC that answers every request HTTP 500 (its target is never reached), counting them.
  let rpc: CountingProxy
  beforeAll(async () => {
    rpc = await startCountingProxy('http://127.0.0.1:9/')
    rpc.setFault({ kind: 'status', status: 500 })
  })
  afterAll(() => rpc.close())
  const onRpc = (override: Partial<CreatePaywallOptions>) =>
    options({
      vault: createVaultClient({
        publicClient: createPublicClient({ transport: http(rpc.url, { retryCount: 0 }) }),
        chain: 'base',
      }),
      ...override,
    })

  it.each([
    ['acceptDefaultTestUsdc', { acceptDefaultTestUsdc: 'yes' as unknown as boolean }],
    ['facilitator.url', { facilitator: { url: undefined } }],
    ['facilitator.bearerToken', { facilitator: { url: 'https://f.example', bearerToken: 'a b' } }],
    ['facilitator.timeoutMs', { facilitator: { url: 'https://f.example', timeoutMs: -5 } }],
    [
      'routes["GET /weather"].mimeType',
      { routes: { 'GET /weather': { ...weather, mimeType: 1 as unknown as string } } },
    ],
  ] as const)('refuses a bad %s before it reads the chain', async (field, override) => {
    rpc.reset()
    const error = await preparePaywall(onRpc(override as Partial<CreatePaywallOptions>)).then(
      () => undefined,
      (rejection: unknown) => rejection,
    )
    expect(error).toBeInstanceOf(VaultError)
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field } })
    expect(rpc.requests).toBe(0)
  })

  it('reads the chain once the options pass: the failing RPC is then what it reports', async () => {
    rpc.reset()
    const error = await preparePaywall(onRpc({})).then(
      () => undefined,
      (rejection: unknown) => rejection,
    )
    expect(error).toBeInstanceOf(VaultError)
    expect((error as VaultError).category).toBe('rpc')
    expect(rpc.requests).toBeGreaterThan(0)
  })
})
