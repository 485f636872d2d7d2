/**
 * A paid request through a Hono paywall, without a devnet (test/support/stubSeller.ts): the buyer's real
 * x402 payment header (x402's exact and upto client schemes, a local account), an in-process facilitator
 * that verifies and settles it or fails each way a facilitator can, and a stubbed chain for the reads the
 * paywall makes when a settlement's outcome is unknown. `sweep: false`: what the seller is told goes to
 * the log (`console.warn`).
 *
 * Left to the devnet tests (they need a chain that mines): a payment the chain shows used and settled
 * (found by its logs), a success claim checked against its receipt, and the sweep after a sale.
 */
import { decodePaymentResponseHeader } from '@x402/core/http'
import { HttpResponse, http, passthrough } from 'msw'
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest'
import { vaultChains } from '../../src/index.js'
import { refusedUrl, stubFacilitator } from '../support/stubFacilitator.js'
import {
  paymentFor,
  type StubSeller,
  stubBuyer,
  stubSeller,
  stubShop,
  useStubServer,
} from '../support/stubSeller.js'

const sellers = { base: stubSeller('base'), 'base-sepolia': stubSeller('base-sepolia') }
const server = useStubServer(...sellers.base.handlers, ...sellers['base-sepolia'].handlers)

let warn: MockInstance<typeof console.warn>
beforeEach(() => {
  warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
})
afterEach(() => {
  warn.mockRestore()
  for (const seller of Object.values(sellers)) seller.reset()
})

/** The lines the paywall logged for the seller. */
const logged = () => warn.mock.calls.map(([line]) => String(line))

/**
 * Opens a shop, pays `path` as the buyer would (the 402, then the signed payment header), and closes the
 * shop. The paid answer, its body, its decoded `PAYMENT-RESPONSE`, and the payment the buyer signed.
 */
async function buy(
  seller: StubSeller,
  path: string,
  options: Parameters<typeof stubShop>[1] = {},
  beforePaying?: () => void,
) {
  const { app, paywall } = await stubShop(seller, options)
  try {
    const unpaid = await app.request(path)
    expect(unpaid.status).toBe(402)
    const { headers, payload } = await paymentFor(stubBuyer(seller), unpaid)
    beforePaying?.()
    const from = { rpc: seller.rpc.requests.length, facilitator: seller.facilitator.calls.length }
    const answer = await app.request(path, { headers })
    const header = answer.headers.get('PAYMENT-RESPONSE')
    return {
      status: answer.status,
      body: (answer.headers.get('content-type')?.includes('json')
        ? await answer.json()
        : { text: await answer.text() }) as Record<string, unknown>,
      settlement: header ? decodePaymentResponseHeader(header) : undefined,
      payload,
      rpc: seller.rpc.requests.slice(from.rpc),
      facilitator: seller.facilitator.calls.slice(from.facilitator),
    }
  } finally {
    await paywall.close()
  }
}

const notTaken = 'The payment was not taken: nothing was transferred. Try again later.'

describe.each(['base', 'base-sepolia'] as const)('on %s', (chain) => {
  const seller = sellers[chain]
  const usdc = vaultChains[chain].addresses.usdc
  const buyer = () => seller.buyer.address

  it('a paid request: verified, settled after the handler, 200 with PAYMENT-RESPONSE; no RPC request', async () => {
    const sale = await buy(seller, '/paid')
    expect(sale.status).toBe(200)
    expect(sale.body).toEqual({ paid: true })
    expect(sale.settlement).toEqual({
      success: true,
      transaction: seller.facilitator.settled.at(-1),
      network: seller.network,
      payer: buyer(),
      amount: '500000',
    })
    // The facilitator got the payment the buyer signed, for the vault's USDC, to the merchant.
    expect(sale.facilitator.map((call) => call.path)).toEqual(['/verify', '/settle'])
    for (const call of sale.facilitator) {
      expect(call.paymentPayload).toEqual(JSON.parse(JSON.stringify(sale.payload)))
      expect(call.paymentRequirements).toMatchObject({
        scheme: 'exact',
        network: seller.network,
        asset: usdc,
        amount: '500000',
        payTo: seller.merchant.address,
      })
    }
    // Without the in-process sweeper a sale costs no RPC request: nothing checks the claim.
    expect(sale.rpc).toEqual([])
    expect(logged()).toEqual([])
  })

  /** An upto route charging what `?charge=` says, at most 0.05 USDC. */
  const meteredRoutes = {
    'GET /metered': {
      price: '0.05',
      scheme: 'upto' as const,
      description: 'Metered',
      mimeType: 'application/json',
    },
  }

  it('an upto route: the handler’s charge is what is settled, to the base unit', async () => {
    const sale = await buy(seller, '/metered?charge=12345', { routes: meteredRoutes })
    expect(sale.status).toBe(200)
    expect(sale.body).toEqual({ settles: '12345' })
    expect(sale.settlement).toMatchObject({ success: true, amount: '12345', payer: buyer() })
    const [verify, settle] = sale.facilitator
    expect(verify?.paymentRequirements).toMatchObject({ scheme: 'upto', amount: '50000' })
    expect(settle?.paymentRequirements).toMatchObject({ scheme: 'upto', amount: '12345' })
  })

  it('an upto charge above the maximum is refused: the handler fails the request, nothing is settled', async () => {
    const sale = await buy(seller, '/metered?charge=50001', { routes: meteredRoutes })
    expect(sale.status).toBe(400)
    expect(sale.body).toEqual({ refused: 'INVALID_AMOUNT' })
    expect(sale.settlement).toBeUndefined()
    expect(sale.facilitator.map((call) => call.path)).toEqual(['/verify'])
  })

  it('a handler that answers 500: its answer, no settlement', async () => {
    const sale = await buy(seller, '/broken')
    expect(sale.status).toBe(500)
    expect(sale.body).toEqual({ error: 'handler failed' })
    expect(sale.settlement).toBeUndefined()
    expect(sale.facilitator.map((call) => call.path)).toEqual(['/verify'])
  })

  it('a verification the facilitator refuses: 402 again, nothing settled, nothing logged', async () => {
    seller.facilitator.answer('verify', { refuse: 'invalid_exact_evm_insufficient_balance' })
    const sale = await buy(seller, '/paid')
    expect(sale.status).toBe(402)
    expect(sale.settlement).toBeUndefined()
    expect(sale.facilitator.map((call) => call.path)).toEqual(['/verify'])
    expect(logged()).toEqual([])
  })

  it.each([
    [
      'in x402’s words',
      undefined,
      'The payment could not be settled (invalid_exact_evm_transaction_failed).',
    ],
    [
      'in the facilitator’s own words: the buyer reads them',
      'The transfer reverted: the payer spent the USDC.',
      'The transfer reverted: the payer spent the USDC.',
    ],
  ] as const)(
    'a settlement the facilitator refuses, %s: 402 { error, reason, message }, and PAYMENT-RESPONSE says why',
    async (_words, given, message) => {
      seller.facilitator.answer('settle', {
        refuse: 'invalid_exact_evm_transaction_failed',
        ...(given === undefined ? {} : { message: given }),
      })
      const sale = await buy(seller, '/paid')
      expect(sale.status).toBe(402)
      expect(sale.body).toEqual({
        error: 'settlement_failed',
        reason: 'invalid_exact_evm_transaction_failed',
        message,
      })
      expect(sale.settlement).toMatchObject({
        success: false,
        errorReason: 'invalid_exact_evm_transaction_failed',
      })
      // A refusal is an answer, not a failure: no chain read, nothing for the seller to hear of.
      expect(sale.rpc).toEqual([])
      expect(logged()).toEqual([])
    },
  )

  describe('a verification that gets no usable answer: 502 saying the payment was not taken; the seller is told', () => {
    it.each([
      [
        'HTTP 500',
        { status: 500, body: '{"error":"database down"}' },
        'The payment facilitator answered HTTP 500, its own failure',
        'FACILITATOR_HTTP_ERROR',
        'Facilitator verify failed (500): {"error":"database down"}',
      ],
      [
        'a garbled answer',
        { status: 200, body: '{"isValid":tr' },
        'Facilitator verify returned invalid JSON: {"isValid":tr',
        'FACILITATOR_BAD_RESPONSE',
        'Facilitator verify returned invalid JSON: {"isValid":tr',
      ],
      [
        'no answer in time',
        'hang',
        'Facilitator verify request timed out after 100ms',
        'FACILITATOR_TIMEOUT',
        'Facilitator verify request timed out after 100ms',
      ],
      [
        // msw's network error is fetch's "Failed to fetch" without a socket's code (as in a browser or
        // a worker); a real socket's drop is worded as a lost connection (facilitatorClient.test.ts).
        'a failed connection',
        'drop',
        'The call to the payment facilitator failed before it answered',
        'FACILITATOR_CONNECTION_LOST',
        'Failed to fetch',
      ],
    ] as const)('%s', async (_name, answer, told, _code, cause) => {
      seller.facilitator.answer('verify', answer)
      const sale = await buy(seller, '/paid', {
        // A short timeout only where no answer is the case: an answer that came late on a busy
        // machine must not turn into a timeout.
        facilitator: {
          url: seller.facilitator.url,
          ...(answer === 'hang' ? { timeoutMs: { verify: 100 } } : {}),
        },
      })
      expect(sale.status).toBe(502)
      expect(sale.body).toEqual({ error: `${told}. ${notTaken}` })
      expect(sale.settlement).toBeUndefined()
      expect(sale.facilitator.map((call) => call.path)).toEqual(['/verify'])
      expect(logged()).toEqual([
        `x402-vault: The x402 facilitator failed to verify a payment (${cause}); the buyer was answered 502: ${told}. ${notTaken}`,
      ])
    })

    it('a facilitator that cannot be reached', async () => {
      // Its /supported answered at start; its /verify goes to the network: a real connection refused.
      const down = stubFacilitator({ networks: [seller.network], url: await refusedUrl() })
      server.use(
        ...down.handlers.slice(0, 1),
        http.post(`${down.url}/verify`, () => passthrough()),
      )
      const sale = await buy(seller, '/paid', { facilitator: { url: down.url } })
      expect(sale.status).toBe(502)
      expect(sale.body).toEqual({
        error: `The payment facilitator could not be reached. ${notTaken}`,
      })
      expect(logged()).toHaveLength(1)
      expect(logged()[0]).toMatch(
        /^x402-vault: The x402 facilitator failed to verify a payment \(.*ECONNREFUSED.*\); the buyer was answered 502: The payment facilitator could not be reached\./,
      )
    })
  })

  describe('a settlement whose outcome is unknown: the chain is asked once (settlementCheckMs: 0)', () => {
    const stateRead =
      chain === 'base'
        ? [
            'aggregate3',
            'getBlockNumber',
            'getCurrentBlockTimestamp',
            'getChainId',
            'authorizationState',
          ]
        : ['aggregate3', 'getBlockNumber', 'getCurrentBlockTimestamp', 'getChainId', 'nonceBitmap']

    it.each([
      [
        'HTTP 500',
        { status: 500, body: '{"error":"database down"}' },
        'FACILITATOR_HTTP_ERROR',
        'Facilitator settle failed (500): {"error":"database down"}',
      ],
      [
        'a garbled answer',
        { status: 200, body: '{"success":tr' },
        'FACILITATOR_BAD_RESPONSE',
        'Facilitator settle returned invalid JSON: {"success":tr',
      ],
      [
        'success without a transaction',
        { status: 200, body: '{"success":true,"transaction":"","network":"eip155:1"}' },
        'FACILITATOR_BAD_RESPONSE',
        'The payment facilitator answered success without a transaction',
      ],
      [
        'no answer in time',
        'hang',
        'FACILITATOR_TIMEOUT',
        'Facilitator settle request timed out after 100ms',
      ],
      ['a failed connection', 'drop', 'FACILITATOR_CONNECTION_LOST', 'Failed to fetch'],
    ] as const)(
      '%s, and the authorisation is unused: 402 settlement_pending, with what not to do and until when',
      async (_name, answer, code, cause) => {
        seller.facilitator.answer('settle', answer)
        const sale = await buy(seller, '/paid', {
          facilitator: {
            url: seller.facilitator.url,
            ...(answer === 'hang' ? { timeoutMs: { settle: 100 } } : {}),
          },
          settlementCheckMs: 0,
        })
        expect(sale.status).toBe(402)
        // Exactly what x402 puts on the header for a pending settlement.
        expect(sale.settlement).toEqual({
          success: false,
          errorReason: 'settlement_pending',
          payer: buyer(),
          transaction: '',
          network: seller.network,
        })
        // EIP-3009's validBefore; Permit2's deadline + 1 (the first second it can no longer settle).
        const signed = sale.payload.payload as {
          authorization?: { validBefore: string }
          permit2Authorization?: { deadline: string }
        }
        const validBefore = signed.authorization
          ? BigInt(signed.authorization.validBefore)
          : BigInt(signed.permit2Authorization?.deadline as string) + 1n
        const until = new Date(Number(validBefore) * 1000).toISOString()
        expect(sale.body).toEqual({
          error: 'settlement_pending',
          reason: 'settlement_pending',
          message: expect.stringMatching(
            new RegExp(
              `^The payment may still settle: .* Do not pay again before ${until}: .* Still unused at ${until}: nothing was transferred, and you may pay again\\.$`,
            ),
          ),
          payment: {
            network: seller.network,
            asset: usdc,
            payer: buyer(),
            payTo: seller.merchant.address,
            amount: '500000',
            validBefore: validBefore.toString(),
          },
        })
        // The check is one read: the head block, the chain id and the authorisation's state, in one
        // round trip. Then the payment is watched (the same read each polling interval) until close().
        expect(sale.rpc[0]).toEqual({ method: 'eth_call', calls: stateRead })
        expect(sale.rpc.filter((read) => read.calls.join() !== stateRead.join())).toEqual([])
        expect(logged()).toHaveLength(1)
        expect(logged()[0]).toContain(
          `x402-vault: A payment's settlement is pending: the x402 facilitator failed to settle it (${cause}), and its authorization is still unused on chain. The buyer ${buyer()} was answered 402 settlement_pending: the payment of 0.5 USDC may still settle until ${until}.`,
        )
        expect(code).toMatch(/^FACILITATOR_/)
      },
    )

    it('the authorisation expired unused: 402, the payment was not taken, pay again', async () => {
      seller.facilitator.answer('settle', { status: 500, body: '{"error":"database down"}' })
      const sale = await buy(
        seller,
        '/paid',
        { settlementCheckMs: 0 },
        // The chain's clock is past every authorisation signed now.
        () => {
          seller.rpc.block.timestamp += 3_600n
        },
      )
      seller.rpc.block.timestamp -= 3_600n
      expect(sale.status).toBe(402)
      expect(sale.body).toEqual({
        error: 'settlement_failed',
        reason: 'authorization_expired',
        message: expect.stringMatching(
          /^The payment was not taken: its authorization expired unused at .+, so nothing was transferred\. Pay again to get the resource\.$/,
        ),
      })
      expect(sale.settlement).toMatchObject({
        success: false,
        errorReason: 'authorization_expired',
      })
      expect(sale.rpc).toEqual([{ method: 'eth_call', calls: stateRead }])
      expect(logged()).toHaveLength(1)
      expect(logged()[0]).toMatch(
        /^x402-vault: The x402 facilitator failed to settle a payment \(Facilitator settle failed \(500\): .*\); the buyer was answered 402: The payment was not taken/,
      )
    })

    it('the chain cannot be read either: 402 settlement_pending, and the seller hears why', async () => {
      seller.facilitator.answer('settle', { status: 500, body: '{"error":"database down"}' })
      const sale = await buy(seller, '/paid', { settlementCheckMs: 0 }, () =>
        server.use(http.post(seller.rpc.url, () => HttpResponse.json({}, { status: 503 }))),
      )
      expect(sale.status).toBe(402)
      expect(sale.body).toMatchObject({ error: 'settlement_pending' })
      expect(logged()).toHaveLength(1)
      expect(logged()[0]).toMatch(/and the chain could not be read \(.+\)\./)
    })
  })

  it('a settlement the facilitator never reached: 502, the payment was not taken, no chain read', async () => {
    const down = stubFacilitator({ networks: [seller.network], url: await refusedUrl() })
    server.use(
      ...down.handlers.slice(0, 2),
      http.post(`${down.url}/settle`, () => passthrough()),
    )
    const sale = await buy(seller, '/paid', {
      facilitator: { url: down.url },
      settlementCheckMs: 0,
    })
    expect(sale.status).toBe(502)
    expect(sale.body).toEqual({
      error: `The payment facilitator could not be reached. ${notTaken}`,
    })
    expect(sale.rpc).toEqual([])
    expect(logged()).toHaveLength(1)
    expect(logged()[0]).toMatch(
      /^x402-vault: The x402 facilitator failed to settle a payment \(.*ECONNREFUSED.*\); the buyer was answered 502: /,
    )
  })

  it('a refusal naming a transaction the chain cannot show: the refusal stands, and the seller hears it was not checked', async () => {
    const transaction = `0x${'ab'.repeat(32)}` as const
    seller.facilitator.answer('settle', {
      refuse: 'invalid_exact_evm_transfer_event_mismatch',
      transaction,
    })
    const sale = await buy(seller, '/paid')
    expect(sale.status).toBe(402)
    expect(sale.body).toMatchObject({
      error: 'settlement_failed',
      reason: 'invalid_exact_evm_transfer_event_mismatch',
    })
    expect(logged()).toHaveLength(1)
    expect(logged()[0]).toMatch(
      new RegExp(
        `^x402-vault: The x402 facilitator refused a payment \\(invalid_exact_evm_transfer_event_mismatch\\) naming the transaction ${transaction}, and the chain could not be read to check it \\(.+\\): the buyer ${buyer()} was answered 402 as the facilitator said\\.$`,
      ),
    )
  })
})

describe('on base-sepolia, a buyer without a Permit2 allowance', () => {
  it('gets 412 with what to do; the seller is told once per buyer', async () => {
    const seller = sellers['base-sepolia']
    seller.facilitator.answer('verify', { refuse: 'permit2_allowance_required' })
    const { app, paywall } = await stubShop(seller)
    const pay = async () => {
      const { headers } = await paymentFor(stubBuyer(seller), await app.request('/paid'))
      return app.request('/paid', { headers })
    }
    const refused = await pay()
    const again = await pay()
    await paywall.close()
    expect(refused.status).toBe(412)
    expect(await refused.json()).toEqual({
      error: 'permit2_allowance_required',
      message: expect.stringContaining(
        `The wallet ${seller.buyer.address} has not approved Permit2 (0x000000000022D473030F116dDEE9F6B43aC78BA3) to spend the token at ${vaultChains['base-sepolia'].addresses.usdc}`,
      ),
      payment: {
        network: seller.network,
        asset: vaultChains['base-sepolia'].addresses.usdc,
        payer: seller.buyer.address,
        payTo: seller.merchant.address,
        amount: '500000',
        permit2: '0x000000000022D473030F116dDEE9F6B43aC78BA3',
      },
    })
    expect(again.status).toBe(412)
    expect(logged()).toHaveLength(1)
    expect(logged()[0]).toMatch(
      new RegExp(
        `^x402-vault: A buyer, ${seller.buyer.address}, could not pay: it has not approved Permit2`,
      ),
    )
  })
})

describe('a facilitator that wants a bearer token', () => {
  it('gets it on /supported, /verify and /settle', async () => {
    const seller = sellers.base
    const guarded = stubFacilitator({
      networks: [seller.network],
      bearerToken: 'stub-secret-token',
      url: 'http://guarded-facilitator.stub.test',
    })
    server.use(...guarded.handlers)
    const sale = await buy(seller, '/paid', {
      facilitator: { url: guarded.url, bearerToken: 'stub-secret-token' },
    })
    expect(sale.status).toBe(200)
    expect(guarded.calls.map((call) => [call.path, call.authorization])).toEqual([
      ['/supported', 'Bearer stub-secret-token'],
      ['/verify', 'Bearer stub-secret-token'],
      ['/settle', 'Bearer stub-secret-token'],
    ])
  })
})
