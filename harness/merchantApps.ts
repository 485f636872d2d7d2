/**
 * The merchant apps of the seller tests and the bench, Express on a loopback port and Hono through
 * `app.fetch`, both behind this package's paywall, and a real x402 buyer to pay them.
 */
import { createServer as createHttpServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { x402Client, x402HTTPClient } from '@x402/core/client'
import { decodePaymentResponseHeader } from '@x402/core/http'
import { toClientEvmSigner } from '@x402/evm'
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { UptoEvmScheme } from '@x402/evm/upto/client'
import { wrapFetchWithPayment } from '@x402/fetch'
import express from 'express'
import { Hono } from 'hono'
import { createPublicClient, type Hex, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import type { Devnet } from '../src/devnet/startDevnet.js'
import {
  type CreatePaywallOptions,
  createPaywall as createExpressPaywall,
  type Paywall,
  type PaywallScheme,
} from '../src/plugins/express.js'
import { createPaywall as createHonoPaywall } from '../src/plugins/hono.js'
import { keepConnectionsAlive } from './keepConnectionsAlive.js'

/**
 * A fetch that pays 402s as a buyer on the live chain would: x402's fetch wrapper and its exact EVM client
 * scheme, signing with `privateKey` (default: the devnet's buyer) and reading the chain, so that a buyer
 * who never approved Permit2 signs an EIP-2612 permit when the seller offers gas sponsoring. x402's spend
 * controls stay on: the buyer opts in to the vault's USDC (on Base Sepolia not one of x402's default
 * assets) with `allowedAssets`; or, with `spendControls: 'stock'`, keeps x402's defaults untouched, as a
 * buyer set up by x402's own docs does.
 */
export function buyerFetch(
  devnet: Devnet,
  baseFetch: typeof fetch = fetch,
  privateKey: Hex = devnet.accounts.buyer.privateKey,
  spendControls: 'opt-in' | 'stock' = 'opt-in',
) {
  return buyerClient(devnet, baseFetch, privateKey, undefined, spendControls).pay
}

/** The x402 schemes a stock buyer pays with: each with x402's own EVM client scheme. */
export type BuyerScheme = 'exact' | 'upto' | 'batch-settlement'

/**
 * {@link buyerFetch}'s parts: the x402 client (whose hooks `vault.attachToClient` takes), the HTTP client that
 * `wrapFetchWithPayment` drives (whose 402 hook tells each payment's URL), and the paying fetch.
 * `maxAmountPerPayment` (base units) raises x402's per-payment cap on the vault's USDC, as a buyer of
 * pricier APIs does (x402's default is $1 on the USDC it knows). With `spendControls: 'stock'` the
 * client keeps x402's defaults untouched. `scheme` picks x402's client scheme: `exact` (default),
 * `upto` (`UptoEvmScheme`) or `batch-settlement` (`BatchSettlementEvmScheme`, x402's defaults: its
 * channel state in memory, deposits sized by x402's deposit policy).
 */
export function buyerClient(
  devnet: Devnet,
  baseFetch: typeof fetch = fetch,
  privateKey: Hex = devnet.accounts.buyer.privateKey,
  maxAmountPerPayment?: bigint,
  spendControls: 'opt-in' | 'stock' = 'opt-in',
  scheme: BuyerScheme = 'exact',
) {
  const network = `eip155:${devnet.chainId}` as const
  const publicClient = createPublicClient({
    chain: devnet.viemChain,
    transport: http(devnet.rpcUrl),
  })
  const signer = toClientEvmSigner(privateKeyToAccount(privateKey), publicClient)
  const client = new x402Client().register(
    network,
    scheme === 'upto'
      ? new UptoEvmScheme(signer)
      : scheme === 'batch-settlement'
        ? new BatchSettlementEvmScheme(signer)
        : new ExactEvmScheme(signer),
  )
  if (spendControls === 'opt-in') {
    client.setSpendControls({
      allowedAssets: [
        {
          network,
          asset: devnet.addresses.usdc,
          ...(maxAmountPerPayment === undefined
            ? {}
            : { maxAmountPerPayment: maxAmountPerPayment.toString() }),
        },
      ],
    })
  }
  const httpClient = new x402HTTPClient(client)
  return { client, httpClient, pay: wrapFetchWithPayment(baseFetch, httpClient) }
}

/** The settlement in a paid response's `PAYMENT-RESPONSE` header. */
export function paymentResponseOf(response: Response) {
  const header = response.headers.get('PAYMENT-RESPONSE')
  if (!header) throw new Error(`no PAYMENT-RESPONSE header (status ${response.status})`)
  return decodePaymentResponseHeader(header)
}

/** Route handlers every merchant app serves behind the paywall. */
export type Handlers = {
  /**
   * Runs inside the paid handler before it answers, such as the buyer spending its USDC, or a usage-priced
   * handler reporting its charge: it gets the framework's response handle (Express's `res`, Hono's `c`).
   */
  beforePaidAnswer?: (response: unknown) => Promise<void> | void
}

/** A running merchant app: a fetch that reaches it and a way to stop it. */
export type MerchantApp = { fetch: typeof fetch; baseUrl: string; stop: () => Promise<void> }

/** How a test builds a merchant app with one framework: paywall, app and fetch. */
export type Framework = {
  name: 'express' | 'hono'
  createPaywall: (options: CreatePaywallOptions) => Promise<Paywall<unknown>>
  start: (middleware: unknown, handlers?: Handlers) => Promise<MerchantApp>
}

/**
 * The paid routes of the test apps: `GET /paid` answers 200 JSON, `GET /broken` answers 500, and
 * `GET /free` is not behind the paywall. Both paid routes sell with `scheme` when given (`exact`, the
 * paywall's default, when not).
 */
export const paidRoutes = (price: string, scheme?: PaywallScheme) => {
  const sells = scheme === undefined ? {} : { scheme }
  return {
    'GET /paid': { price, description: 'A paid answer', mimeType: 'application/json', ...sells },
    'GET /broken': {
      price,
      description: 'A handler that fails',
      mimeType: 'application/json',
      ...sells,
    },
  }
}

export const frameworks: Framework[] = [
  {
    name: 'express',
    createPaywall: createExpressPaywall as Framework['createPaywall'],
    async start(middleware, handlers = {}) {
      const app = express()
      app.use(middleware as express.RequestHandler)
      app.get('/paid', async (_req, res) => {
        await handlers.beforePaidAnswer?.(res)
        res.json({ paid: true })
      })
      app.get('/broken', (_req, res) => {
        res.status(500).json({ error: 'handler failed' })
      })
      app.get('/free', (_req, res) => {
        res.json({ free: true })
      })
      const server: Server = createHttpServer(app)
      keepConnectionsAlive(server)
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      const { port } = server.address() as AddressInfo
      return {
        fetch,
        baseUrl: `http://127.0.0.1:${port}`,
        stop: () =>
          new Promise<void>((resolve) => {
            server.closeAllConnections()
            server.close(() => resolve())
          }),
      }
    },
  },
  {
    name: 'hono',
    createPaywall: createHonoPaywall as Framework['createPaywall'],
    async start(middleware, handlers = {}) {
      const app = new Hono()
      app.use(middleware as Parameters<typeof app.use>[0])
      app.get('/paid', async (c) => {
        await handlers.beforePaidAnswer?.(c)
        return c.json({ paid: true })
      })
      app.get('/broken', (c) => c.json({ error: 'handler failed' }, 500))
      app.get('/free', (c) => c.json({ free: true }))
      // No server: requests go straight to the app.
      const appFetch = ((input: RequestInfo | URL, init?: RequestInit) =>
        app.fetch(new Request(input, init))) as typeof fetch
      return { fetch: appFetch, baseUrl: 'http://merchant.test', stop: async () => {} }
    },
  },
]
