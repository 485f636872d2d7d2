/**
 * The merchant apps of the seller tests and the bench, Express on a loopback port and Hono through
 * `app.fetch`, both behind this package's paywall, and a real x402 buyer to pay them.
 */
import { createServer as createHttpServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { x402Client, x402HTTPClient } from '@x402/core/client'
import { decodePaymentResponseHeader } from '@x402/core/http'
import { toClientEvmSigner } from '@x402/evm'
import {
  BatchSettlementEvmScheme,
  type BatchSettlementEvmSchemeOptions,
} from '@x402/evm/batch-settlement/client'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { UptoEvmScheme } from '@x402/evm/upto/client'
import { wrapFetchWithPayment } from '@x402/fetch'
import express from 'express'
import { Hono } from 'hono'
import { createPublicClient, type Hex, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import type { Devnet } from '../src/devnet/startDevnet.js'
import { keepIdleConnections } from '../src/mcp/http/keepIdleConnections.js'
import {
  type CreatePaywallOptions,
  createPaywall as createExpressPaywall,
  type Paywall,
  type PaywallScheme,
} from '../src/plugins/express.js'
import { createPaywall as createHonoPaywall } from '../src/plugins/hono.js'

/**
 * A fetch that pays 402s as a buyer on the live chain would, with x402's `exact` scheme: {@link buyerClient}'s
 * `pay`, signing with `privateKey` (default: the devnet's buyer).
 */
export function buyerFetch(
  devnet: Devnet,
  baseFetch: typeof fetch = fetch,
  privateKey: Hex = devnet.accounts.buyer.privateKey,
  spendControls: BuyerOptions['spendControls'] = 'opt-in',
) {
  return buyerClient(devnet, { fetch: baseFetch, privateKey, spendControls }).pay
}

/** The x402 schemes a stock buyer pays with: each with x402's own EVM client scheme. */
export type BuyerScheme = 'exact' | 'upto' | 'batch-settlement'

/** Who {@link buyerClient}'s buyer is and how it pays; every field has a default. */
export type BuyerOptions = {
  /** What reaches the merchant app; default the global fetch. */
  fetch?: typeof fetch
  /** The buyer's key; default the devnet's buyer. */
  privateKey?: Hex
  /**
   * Raises x402's per-payment cap on the vault's USDC (base units), as a buyer of pricier APIs does (x402's
   * default is $1 on the USDC it knows). Only with `spendControls: 'opt-in'`.
   */
  maxAmountPerPayment?: bigint
  /**
   * x402's spend controls stay on either way. `opt-in` (default): the buyer opts in to the vault's USDC with
   * `allowedAssets` (on Base Sepolia not one of x402's default assets; on Base, Circle's USDC, the entry
   * changes nothing unless it carries `maxAmountPerPayment`). `stock`: x402's defaults untouched, as a buyer
   * set up by x402's own docs has them.
   */
  spendControls?: 'opt-in' | 'stock'
} & (
  | {
      /** x402's client scheme: `exact` (default, `ExactEvmScheme`) or `upto` (`UptoEvmScheme`). */
      scheme?: 'exact' | 'upto'
    }
  | {
      /**
       * x402's `BatchSettlementEvmScheme`: its first request to a seller deposits into x402's escrow, the
       * next ones sign vouchers, and it tops the channel up when the deposit runs out.
       */
      scheme: 'batch-settlement'
      /**
       * x402's batch-settlement client options (default x402's: its channels in memory, deposits sized by
       * its deposit policy). The client keeps its channels in its own memory, so a new one with the same
       * key and `salt` would not know a channel an earlier one opened: give each buyer of a run its own
       * `salt`.
       */
      batchSettlement?: BatchSettlementEvmSchemeOptions
    }
)

/**
 * A stock x402 buyer, for every scheme the devnet sells: the x402 client (whose hooks
 * `vault.attachToClient` takes), the HTTP client that `wrapFetchWithPayment` drives (whose 402 hook tells
 * each payment's URL), and the paying fetch, x402's fetch wrapper. Its signer reads the chain, so that a
 * buyer who never approved Permit2 signs an EIP-2612 permit when the seller offers gas sponsoring. `upto`
 * and `batch-settlement` pay the vault's USDC through Permit2 on Base Sepolia: the buyer must have approved
 * Permit2 once (`approvePermit2Once` in harness/merchant.ts).
 *
 * @param devnet - The devnet.
 * @param options - The fetch it pays through, the key, the spend controls and the scheme.
 * @returns `{ client, httpClient, pay }`.
 * @example
 * const { pay } = buyerClient(devnet, { scheme: 'batch-settlement', batchSettlement: { salt } })
 * const response = await pay(`${baseUrl}/tick`)
 */
export function buyerClient(devnet: Devnet, options: BuyerOptions = {}) {
  const { privateKey = devnet.accounts.buyer.privateKey, maxAmountPerPayment } = options
  const network = `eip155:${devnet.chainId}` as const
  const publicClient = createPublicClient({
    chain: devnet.viemChain,
    transport: http(devnet.rpcUrl),
  })
  const signer = toClientEvmSigner(privateKeyToAccount(privateKey), publicClient)
  const client = new x402Client().register(
    network,
    options.scheme === 'upto'
      ? new UptoEvmScheme(signer)
      : options.scheme === 'batch-settlement'
        ? new BatchSettlementEvmScheme(signer, options.batchSettlement)
        : new ExactEvmScheme(signer),
  )
  if ((options.spendControls ?? 'opt-in') === 'opt-in') {
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
  return { client, httpClient, pay: wrapFetchWithPayment(options.fetch ?? fetch, httpClient) }
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
      // What docs/seller.md asks of a seller's server.
      keepIdleConnections(server)
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
