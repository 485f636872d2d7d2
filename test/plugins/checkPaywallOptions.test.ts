/**
 * createPaywall's options, checked before anything goes over the network (the vault client's RPC here
 * is unreachable, and the check is synchronous): what a good set becomes, and which mistake is named
 * when there are several. Each mistake's error, code and field: test/plugins/paywallOptions.test.ts.
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
