import { HTTPFacilitatorClient } from '@x402/core/http'
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

  it('listens on loopback only', () => {
    expect(new URL(url).hostname).toBe('127.0.0.1')
  })

  it('serves /supported for the devnet network to an authenticated x402 client', async () => {
    const client = new HTTPFacilitatorClient({
      url,
      createAuthHeaders: async () => ({ verify: auth, settle: auth, supported: auth }),
    })
    const supported = await client.getSupported()
    expect(supported.kinds).toEqual([
      expect.objectContaining({ x402Version: 2, scheme: 'exact', network: 'eip155:8453' }),
    ])
    expect(supported.signers['eip155:*']).toContain(devnet.accounts.facilitator.address)
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

    const huge = await post('/verify', JSON.stringify({ pad: 'x'.repeat(70_000) }))
    expect(huge.status).toBe(413)

    const wrongMethod = await fetch(`${url}/verify`, { headers: auth })
    expect(wrongMethod.status).toBe(405)
    expect(wrongMethod.headers.get('allow')).toBe('POST')

    const unknown = await fetch(`${url}/nope`, { headers: auth })
    expect(unknown.status).toBe(404)
  })
})
