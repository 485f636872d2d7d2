/**
 * Usage-priced routes (`scheme: 'upto'`) end to end on the devnet, on both chains, for Express and for Hono
 * alike: x402's stock `upto` buyer (its fetch wrapper and upto EVM client scheme, spend controls on; on Base
 * Sepolia opted in to the vault's USDC) pays a `createPaywall` route whose price is a maximum, the handler
 * says what the request costs with `paywall.charge`, the devnet's facilitator settles exactly that through
 * x402's upto Permit2 proxy (Permit2 on both chains: on Base too, where `exact` pays by EIP-3009), and the
 * sweeper deposits it. Amounts are checked to the base unit on chain.
 */
import { createServer as createHttpServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { decodePaymentRequiredHeader } from '@x402/core/http'
import { SETTLEMENT_OVERRIDES_HEADER } from '@x402/core/server'
import { x402UptoPermit2ProxyAddress } from '@x402/evm'
import express from 'express'
import { Hono } from 'hono'
import type { Hash } from 'viem'
import { afterEach, describe, expect, it } from 'vitest'
import type { CountingProxy } from '../../harness/countingProxy.js'
import {
  approvePermit2Once,
  depositedIn,
  type MerchantRpc,
  merchantVault,
  receiptsFrom,
  sweepEvents,
  usdcBalance,
} from '../../harness/merchant.js'
import { buyerClient, paymentResponseOf } from '../../harness/merchantApps.js'
import type { Devnet } from '../../src/devnet/startDevnet.js'
import {
  type AttachToResourceServerOptions,
  parseUsdc,
  type Sweeper,
  VaultError,
} from '../../src/index.js'
import { createPaywall as createExpressPaywall } from '../../src/plugins/express.js'
import { createPaywall as createHonoPaywall } from '../../src/plugins/hono.js'
import { type DevnetClients, useMerchantDevnet } from '../support/devnet.js'
import { expectVaultError } from '../support/expectVaultError.js'

const chains = [{ chain: 'base' }, { chain: 'base-sepolia' }] as const

type SweepOptions = Omit<AttachToResourceServerOptions, 'wallet'>

/** The route's price: the most one request may cost, 0.05 USDC. */
const maximum = 50_000n

/** What the handler of `GET /metered?charge=<base units>` did with the charge. */
type Charged = { settles?: bigint; refused?: unknown }

describe.each(chains)('usage-priced routes (upto) on $chain', (setting) => {
  let devnet: Devnet
  let t: DevnetClients
  let proxy: CountingProxy
  let rpc: MerchantRpc
  useMerchantDevnet({ chain: setting.chain, facilitator: true }, async (m) => {
    ;({ devnet, t, proxy, rpc } = m)
    // x402's upto pays through Permit2 on both chains; its stock buyer approves Permit2 once, as x402's docs
    // say.
    await approvePermit2Once(devnet, undefined, 'upto')
  })

  const cleanups: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })

  const network = () => `eip155:${devnet.chainId}`
  const merchant = () => devnet.accounts.merchant.address
  const buyer = () => devnet.accounts.buyer.address
  const merchantBalance = () => usdcBalance(devnet, merchant())
  const buyerBalance = () => usdcBalance(devnet, buyer())

  /** x402's stock upto buyer: spend controls on, on Base Sepolia opted in to the vault's USDC. */
  const uptoBuyer = (appFetch: typeof fetch) =>
    buyerClient(devnet, {
      fetch: appFetch,
      spendControls: setting.chain === 'base-sepolia' ? 'opt-in' : 'stock',
      scheme: 'upto',
    }).pay

  const frameworks = [
    {
      name: 'express',
      /** An Express app on a loopback port; its `/metered` handler charges `?charge=` base units. */
      async open(sweep: SweepOptions, handler: HandlerRule = chargeAsked) {
        const events = sweepEvents()
        const paywall = await createExpressPaywall({
          ...paywallOptions(),
          sweep: {
            ...sweep,
            onIdleDeposit: events.onIdleDeposit,
            onNonFatalError: events.onNonFatalError,
          },
        })
        cleanups.push(() => paywall.close())
        const charged: Charged = {}
        const app = express()
        app.use(paywall.middleware)
        app.get('/metered', (req, res) => {
          handler(
            BigInt(String(req.query.charge)),
            (amount) => paywall.charge(res, amount),
            charged,
          )
          res.json({ answer: 42 })
        })
        // The refusal a handler lets through is the test's to see, not the log's.
        app.use(((_error, _req, res, _next) => {
          res.status(500).json({ error: 'handler failed' })
        }) as express.ErrorRequestHandler)
        const server: Server = createHttpServer(app)
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
        cleanups.push(
          () =>
            new Promise<void>((resolve) => {
              server.closeAllConnections()
              server.close(() => resolve())
            }),
        )
        const { port } = server.address() as AddressInfo
        return shop(`http://127.0.0.1:${port}`, fetch, paywall, events, charged)
      },
    },
    {
      name: 'hono',
      /** A Hono app reached through `app.fetch`; its `/metered` handler charges `?charge=` base units. */
      async open(sweep: SweepOptions, handler: HandlerRule = chargeAsked) {
        const events = sweepEvents()
        const paywall = await createHonoPaywall({
          ...paywallOptions(),
          sweep: {
            ...sweep,
            onIdleDeposit: events.onIdleDeposit,
            onNonFatalError: events.onNonFatalError,
          },
        })
        cleanups.push(() => paywall.close())
        const charged: Charged = {}
        const app = new Hono()
        app.use(paywall.middleware)
        app.get('/metered', (c) => {
          handler(
            BigInt(c.req.query('charge') as string),
            (amount) => paywall.charge(c, amount),
            charged,
          )
          return c.json({ answer: 42 })
        })
        app.onError((_error, c) => c.json({ error: 'handler failed' }, 500))
        const appFetch = ((input: RequestInfo | URL, init?: RequestInit) =>
          app.fetch(new Request(input, init))) as typeof fetch
        return shop('http://merchant.test', appFetch, paywall, events, charged)
      },
    },
  ] as const

  const paywallOptions = () => ({
    vault: merchantVault(devnet, proxy.url),
    payTo: merchant(),
    facilitator: { url: devnet.facilitatorUrl as string },
    routes: {
      'GET /metered': {
        price: '0.05',
        scheme: 'upto' as const,
        description: 'A metered answer',
        mimeType: 'application/json',
      },
    },
  })

  function shop(
    baseUrl: string,
    appFetch: typeof fetch,
    paywall: { sweeper: Sweeper; close(): Promise<void> },
    events: ReturnType<typeof sweepEvents>,
    charged: Charged,
  ) {
    return {
      paywall,
      events,
      charged,
      url: (charge: bigint) => `${baseUrl}/metered?charge=${charge}`,
      appFetch,
      pay: uptoBuyer(appFetch),
    }
  }

  describe.each(frameworks)('a $name merchant', (framework) => {
    it('offers the route as upto at its maximum; a stock upto buyer pays exactly what the handler charged, and the sweep deposits it', async () => {
      const charge = 12_345n
      const start = await merchantBalance()
      const buyerStart = await buyerBalance()
      const firstBlock = (await t.publicClient.getBlockNumber({ cacheTime: 0 })) + 1n
      const reserve = start - parseUsdc('10')
      const shop = await framework.open({ minIdleThreshold: '10', reserve })

      const unpaid = await shop.appFetch(shop.url(charge))
      expect(unpaid.status).toBe(402)
      const required = decodePaymentRequiredHeader(unpaid.headers.get('PAYMENT-REQUIRED') as string)
      // The vault's USDC first, at the maximum, paid through Permit2 on both chains.
      expect(required.accepts[0]).toMatchObject({
        scheme: 'upto',
        network: network(),
        asset: devnet.addresses.usdc,
        amount: maximum.toString(),
        payTo: merchant(),
        extra: expect.objectContaining({ assetTransferMethod: 'permit2' }),
      })
      expect(required.accepts.every((accept) => accept.scheme === 'upto')).toBe(true)
      expect(await unpaid.json()).toMatchObject({
        message: expect.stringMatching(/^Pay up to 0\.05 USDC .* with x402's upto scheme/),
        payment: { scheme: 'upto', amount: maximum.toString() },
      })

      const paid = await shop.pay(shop.url(charge))
      expect(paid.status).toBe(200)
      expect(await paid.json()).toEqual({ answer: 42 })
      expect(shop.charged).toEqual({ settles: charge })
      // The buyer is told what was charged; the handler's override stays with the middleware.
      const settlement = paymentResponseOf(paid)
      expect(settlement).toMatchObject({
        success: true,
        network: network(),
        payer: buyer(),
        amount: charge.toString(),
        transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      })
      expect(paid.headers.get(SETTLEMENT_OVERRIDES_HEADER)).toBeNull()
      const settleTx = await t.publicClient.getTransaction({ hash: settlement.transaction as Hash })
      expect(settleTx.to).toBe(x402UptoPermit2ProxyAddress.toLowerCase())
      expect(buyerStart - (await buyerBalance())).toBe(charge)

      // The sweeper is fed the charge, not the maximum, and deposits it with what lay idle.
      await shop.events.deposited()
      const [deposit] = shop.events.deposits
      expect(deposit).toMatchObject({
        deposited: true,
        idleAmount: parseUsdc('10') + charge,
        reserveFloor: reserve,
        walletBalance: start + charge,
        settlements: [
          { txHash: settlement.transaction, amount: charge, payer: buyer(), scheme: 'upto' },
        ],
      })
      const receipts = await receiptsFrom(devnet, merchant(), firstBlock)
      expect(depositedIn(devnet, receipts, merchant())).toEqual([parseUsdc('10') + charge])
      expect(await merchantBalance()).toBe(reserve)
      expect(shop.events.problems).toEqual([])

      // The ledger books the charge as an upto settlement with the maximum the buyer authorized (read
      // from the settle's calldata), then the sweep, and the books reconcile to the base unit.
      const ledger = await t.readOnly.getLedger({ wallet: merchant(), fromBlock: firstBlock })
      expect(ledger.reconciled).toBe(true)
      expect(
        ledger.entries.map((entry) => [
          entry.kind,
          entry.x402Scheme,
          entry.x402Method,
          entry.txHash,
          entry.counterparty,
          entry.amount,
          entry.authorizedAmount,
          entry.vouchers,
        ]),
      ).toEqual([
        ['x402', 'upto', 'permit2', settlement.transaction, buyer(), charge, maximum, null],
        [
          'sweep',
          null,
          null,
          expect.any(String),
          devnet.addresses.router,
          parseUsdc('10') + charge,
          null,
          null,
        ],
      ])
      expect(ledger.totals).toMatchObject({
        receivedX402: charge,
        deposited: parseUsdc('10') + charge,
      })
    })

    it('a charge of 0 settles nothing and sweeps nothing', async () => {
      const start = await merchantBalance()
      const buyerStart = await buyerBalance()
      const firstBlock = (await t.publicClient.getBlockNumber({ cacheTime: 0 })) + 1n
      // Ten USDC lie idle above the reserve: any sweep at all would deposit them.
      const shop = await framework.open({
        minIdleThreshold: '10',
        reserve: start - parseUsdc('10'),
        debounceMs: 0,
      })
      const readsBefore = rpc.sweepReads()

      const paid = await shop.pay(shop.url(0n))
      expect(paid.status).toBe(200)
      expect(await paid.json()).toEqual({ answer: 42 })
      expect(shop.charged).toEqual({ settles: 0n })
      expect(paymentResponseOf(paid)).toMatchObject({
        success: true,
        network: network(),
        payer: buyer(),
        amount: '0',
        transaction: '',
      })
      await shop.paywall.sweeper.idle()
      await shop.paywall.close()
      expect(await buyerBalance()).toBe(buyerStart)
      expect(await merchantBalance()).toBe(start)
      expect(shop.events.deposits).toEqual([])
      expect(shop.events.problems).toEqual([])
      expect(rpc.sweepReads() - readsBefore).toBe(0)
      expect(await receiptsFrom(devnet, merchant(), firstBlock)).toEqual([])
    })

    it('a charge above the maximum is refused at the call (INVALID_AMOUNT); the buyer pays the maximum the handler then charges, never more', async () => {
      const buyerStart = await buyerBalance()
      const merchantStart = await merchantBalance()
      const shop = await framework.open(
        { minIdleThreshold: '10', reserve: merchantStart },
        (asked, charge, charged) => {
          try {
            charge(asked)
          } catch (error) {
            charged.refused = error
            charged.settles = charge(maximum)
          }
        },
      )
      const paid = await shop.pay(shop.url(maximum + 1n))
      expect(paid.status).toBe(200)
      const refused = shop.charged.refused
      expect(refused).toBeInstanceOf(VaultError)
      expect(refused).toMatchObject({
        name: 'VaultValidationError',
        code: 'INVALID_AMOUNT',
        details: { field: 'amount', charge: '50001', maximum: '50000' },
        message: expect.stringContaining("above this request's maximum of 0.05 USDC"),
      })
      expect(shop.charged.settles).toBe(maximum)
      expect(paymentResponseOf(paid)).toMatchObject({ success: true, amount: maximum.toString() })
      expect(buyerStart - (await buyerBalance())).toBe(maximum)
      expect((await merchantBalance()) - merchantStart).toBe(maximum)
    })

    it('a handler that lets the refusal through fails the request, and nothing is settled', async () => {
      const buyerStart = await buyerBalance()
      const shop = await framework.open(
        { minIdleThreshold: '10', reserve: '0' },
        (asked, charge) => {
          charge(asked)
        },
      )
      const failed = await shop.pay(shop.url(maximum * 2n))
      expect(failed.status).toBe(500)
      expect(await failed.json()).toEqual({ error: 'handler failed' })
      expect(failed.headers.get('PAYMENT-RESPONSE')).toBeNull()
      await shop.paywall.close()
      expect(await buyerBalance()).toBe(buyerStart)
    })
  })

  it('a route offering upto and exact lists both, upto first; a scheme createPaywall does not sell is refused at start', async () => {
    const paywall = await createHonoPaywall({
      ...paywallOptions(),
      routes: {
        'GET /metered': {
          price: '0.05',
          scheme: ['upto', 'exact'],
          description: 'A metered answer',
          mimeType: 'application/json',
        },
      },
      sweep: false,
    })
    cleanups.push(() => paywall.close())
    const app = new Hono()
    app.use(paywall.middleware)
    const unpaid = await app.fetch(new Request('http://merchant.test/metered'))
    expect(unpaid.status).toBe(402)
    const required = decodePaymentRequiredHeader(unpaid.headers.get('PAYMENT-REQUIRED') as string)
    const schemes = required.accepts.map((accept) => accept.scheme)
    const perScheme = setting.chain === 'base-sepolia' ? 2 : 1
    expect(schemes).toEqual([...Array(perScheme).fill('upto'), ...Array(perScheme).fill('exact')])

    const error = await expectVaultError(
      createHonoPaywall({
        ...paywallOptions(),
        routes: {
          'GET /metered': {
            price: '0.05',
            scheme: 'auth-capture' as 'upto',
            description: 'A metered answer',
            mimeType: 'application/json',
          },
        },
        sweep: false,
      }),
      'INVALID_ARGUMENT',
    )
    expect(error.message).toBe(
      `routes["GET /metered"].scheme must be 'exact', 'upto' or 'batch-settlement', or a list of them (not "auth-capture").`,
    )
  })
})

/** What a test's handler does with the charge asked in the URL. */
type HandlerRule = (asked: bigint, charge: (amount: bigint) => bigint, charged: Charged) => void

/** The handler charges what the URL asks. */
const chargeAsked: HandlerRule = (asked, charge, charged) => {
  charged.settles = charge(asked)
}
