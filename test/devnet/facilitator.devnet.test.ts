import { HTTPFacilitatorClient } from '@x402/core/http'
import { createPublicClient, http } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Devnet, startDevnet } from '../../src/devnet/startDevnet.js'

const token = 'devnet-test-token'

describe('the local facilitator over HTTP', () => {
  let devnet: Devnet
  let url: string

  beforeAll(async () => {
    devnet = await startDevnet({ chain: 'base', facilitator: { bearerToken: token } })
    url = devnet.facilitatorUrl as string
  })
  afterAll(() => devnet?.stop())

  const auth = { authorization: `Bearer ${token}` }
  const devnetNonce = (address: `0x${string}`) =>
    createPublicClient({ transport: http(devnet.rpcUrl) }).getTransactionCount({ address })

  it('listens on loopback only', () => {
    expect(new URL(url).hostname).toBe('127.0.0.1')
  })

  it('serves /supported for the devnet network to an authenticated x402 client', async () => {
    const client = new HTTPFacilitatorClient({
      url,
      createAuthHeaders: async () => ({ verify: auth, settle: auth, supported: auth }),
    })
    const supported = await client.getSupported()
    const facilitator = devnet.accounts.facilitator.address
    // x402's three EVM schemes; `upto` names the one account that may settle (its witness), and
    // `batch-settlement` the receiver authorizer that signs claims and refunds for a seller without one.
    expect(supported.kinds).toEqual([
      { x402Version: 2, scheme: 'exact', network: 'eip155:8453' },
      {
        x402Version: 2,
        scheme: 'upto',
        network: 'eip155:8453',
        extra: { facilitatorAddress: facilitator },
      },
      {
        x402Version: 2,
        scheme: 'batch-settlement',
        network: 'eip155:8453',
        extra: { receiverAuthorizer: facilitator },
      },
    ])
    expect(supported.signers).toEqual({ 'eip155:*': [facilitator] })
  })

  it('takes what x402’s batch-settlement channel manager sends: maxTimeoutSeconds 0, a claim of 200 vouchers', async () => {
    const client = new HTTPFacilitatorClient({
      url,
      createAuthHeaders: async () => ({ verify: auth, settle: auth, supported: auth }),
    })
    const network = 'eip155:8453'
    const facilitator = devnet.accounts.facilitator.address
    // The manager's requirements for its own operations, and a claim of twice its default batch (a seller's choice).
    const requirements = {
      scheme: 'batch-settlement',
      network,
      asset: devnet.addresses.usdc,
      amount: '0',
      payTo: devnet.accounts.merchant.address,
      maxTimeoutSeconds: 0,
      extra: {},
    } as const
    const claims = Array.from({ length: 200 }, (_, index) => ({
      voucher: {
        channel: {
          payer: devnet.accounts.buyer.address,
          payerAuthorizer: devnet.accounts.buyer.address,
          receiver: devnet.accounts.merchant.address,
          receiverAuthorizer: facilitator,
          token: devnet.addresses.usdc,
          withdrawDelay: 900,
          salt: `0x${index.toString(16).padStart(64, '0')}`,
        },
        maxClaimableAmount: '1000',
      },
      signature: `0x${'ab'.repeat(65)}`,
      totalClaimed: '1000',
    }))
    const payload = { x402Version: 2, accepted: requirements, payload: { type: 'claim', claims } }
    expect(JSON.stringify(payload).length).toBeGreaterThan(120_000)
    // Heard and run: the facilitator signs the batch as the channels' receiver authorizer, and the contract refuses
    // the claims (the channels hold nothing), so nothing is sent.
    const nonce = await devnetNonce(facilitator)
    expect(await client.settle(payload, requirements)).toMatchObject({
      success: false,
      errorReason: 'invalid_batch_settlement_evm_claim_simulation_failed',
    })
    expect(await devnetNonce(facilitator)).toBe(nonce)
  })

  it.each([
    ['no token', {}],
    ['a wrong token', { authorization: 'Bearer nope' }],
    ['a different scheme', { authorization: `Basic ${token}` }],
  ])('answers 401 to %s', async (_name, headers) => {
    const res = await fetch(`${url}/supported`, { headers })
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toBe('Bearer')
    expect(await res.json()).toEqual({
      error: 'unauthorized',
      message: 'A valid bearer token is required.',
    })
  })

  it('answers malformed requests with a clear 4xx', async () => {
    const post = (path: string, body: string, type = 'application/json') =>
      fetch(`${url}${path}`, { method: 'POST', headers: { ...auth, 'content-type': type }, body })

    const notJson = await post('/verify', '{nope')
    expect(notJson.status).toBe(400)
    expect(await notJson.json()).toEqual({
      error: 'invalid_request',
      message: 'Body is not valid JSON.',
    })

    const missing = await post('/settle', JSON.stringify({ x402Version: 2 }))
    expect(missing.status).toBe(400)
    const missingBody = (await missing.json()) as { error: string; message: string }
    expect(missingBody.error).toBe('invalid_request')
    expect(missingBody.message).toMatch(/^Invalid paymentPayload/)

    const wrongType = await post('/verify', '{}', 'text/plain')
    expect(wrongType.status).toBe(415)

    // Far over the 256 kB limit: the caller still hears 413, not a reset connection.
    const huge = await post('/verify', JSON.stringify({ pad: 'x'.repeat(1_000_000) }))
    expect(huge.status).toBe(413)

    const wrongMethod = await fetch(`${url}/verify`, { headers: auth })
    expect(wrongMethod.status).toBe(405)
    expect(wrongMethod.headers.get('allow')).toBe('POST')

    const unknown = await fetch(`${url}/nope`, { headers: auth })
    expect(unknown.status).toBe(404)
  })
})
