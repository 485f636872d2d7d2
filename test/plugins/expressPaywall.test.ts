/**
 * The Express adapter where Hono's tests cannot show it, without a devnet (test/support/stubSeller.ts):
 * Express needs a server (on a loopback port), and its `paywall.charge(res, …)` finds the payment header
 * on Express's own request (`res.req`). The core behind it is the Hono tests'.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { decodePaymentResponseHeader } from '@x402/core/http'
import express from 'express'
import { http, passthrough } from 'msw'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Paywall } from '../../src/plugins/core.js'
import { createPaywall, type ExpressPaywallMiddleware } from '../../src/plugins/express.js'
import { paymentFor, stubBuyer, stubSeller, useStubServer } from '../support/stubSeller.js'

const seller = stubSeller('base')
const server = useStubServer(...seller.handlers)

let paywall: Paywall<ExpressPaywallMiddleware, undefined, express.Response>
let listening: Server
let baseUrl = ''
beforeAll(async () => {
  paywall = await createPaywall({
    vault: seller.vault,
    payTo: seller.merchant.address,
    facilitator: { url: seller.facilitator.url },
    routes: {
      'GET /metered': {
        price: '0.05',
        scheme: 'upto',
        description: 'Metered',
        mimeType: 'application/json',
      },
    },
    sweep: false,
  })
  const app = express()
  app.use(paywall.middleware)
  app.get('/metered', (req, res) => {
    const settles = paywall.charge(res, BigInt(String(req.query.charge)))
    res.json({ settles: settles.toString() })
  })
  listening = createServer(app)
  await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve))
  baseUrl = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`
  // The merchant's own port is reached for real; msw answers the chain and the facilitator.
  server.use(http.all(`${baseUrl}/*`, () => passthrough()))
})
afterAll(async () => {
  await paywall?.close()
  listening?.closeAllConnections()
  await new Promise((resolve) => listening?.close(resolve))
})

describe('an Express paywall', () => {
  it('answers the 402 the core builds, and settles what the handler charges', async () => {
    const unpaid = await fetch(`${baseUrl}/metered?charge=777`)
    expect(unpaid.status).toBe(402)
    expect(await unpaid.clone().json()).toMatchObject({
      error: 'payment_required',
      payment: { scheme: 'upto', amount: '50000', network: seller.network },
    })
    const { headers } = await paymentFor(stubBuyer(seller), unpaid)
    const paid = await fetch(`${baseUrl}/metered?charge=777`, { headers })
    expect(paid.status).toBe(200)
    expect(await paid.json()).toEqual({ settles: '777' })
    expect(
      decodePaymentResponseHeader(paid.headers.get('PAYMENT-RESPONSE') as string),
    ).toMatchObject({ success: true, amount: '777', payer: seller.buyer.address })
    expect(seller.facilitator.calls.at(-1)?.paymentRequirements).toMatchObject({
      scheme: 'upto',
      amount: '777',
    })
  })
})
