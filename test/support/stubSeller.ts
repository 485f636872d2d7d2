/**
 * A seller's surroundings without a devnet, for the fast plugin tests: a stubbed chain (the vault's USDC
 * and Permit2 as `createPaywall` and the settlement checks read them), an in-process facilitator, a vault
 * client over the stubbed RPC, and a buyer that signs real x402 payment headers with x402's own client
 * packages and a local viem account (signing needs no chain).
 *
 * All of it is msw handlers: a test file puts every seller's on one msw server (two servers in one
 * process would both intercept fetch): `useStubServer(...base.handlers, ...sepolia.handlers)`.
 */
import { x402Client, x402HTTPClient } from '@x402/core/client'
import type { PaymentRequired } from '@x402/core/types'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { UptoEvmScheme } from '@x402/evm/upto/client'
import { Hono } from 'hono'
import type { RequestHandler } from 'msw'
import { type SetupServer, setupServer } from 'msw/node'
import { createPublicClient, http, keccak256, toHex } from 'viem'
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts'
import { afterAll, afterEach, beforeAll } from 'vitest'
import {
  createVaultClient,
  type VaultChainName,
  type VaultClient,
  type VaultError,
  vaultChains,
} from '../../src/index.js'
import type { CreatePaywallOptions } from '../../src/plugins/core.js'
import { createPaywall as createHonoPaywall } from '../../src/plugins/hono.js'
import { permit2Stub, type StubChain, stubChain, usdcStub } from './stubChain.js'
import { type StubFacilitator, stubFacilitator } from './stubFacilitator.js'

/** Keys made from their names: the same accounts each run, holding nothing on any real chain. */
const merchantKey = keccak256(toHex('x402-vault stub merchant'))
const buyerKey = keccak256(toHex('x402-vault stub buyer'))

export type StubSeller = {
  chain: VaultChainName
  /** `eip155:<chain id>`. */
  network: `eip155:${number}`
  rpc: StubChain
  facilitator: StubFacilitator
  /** A read-only vault client over the stubbed RPC (`sweep: false` needs no wallet client). */
  vault: VaultClient
  merchant: PrivateKeyAccount
  buyer: PrivateKeyAccount
  /** The EIP-3009 authorisations (`payer:nonce`) and Permit2 nonces (`payer:decimal`) used on chain. */
  used: { eip3009: Set<string>; permit2: Set<string> }
  /** The msw handlers of the chain and the facilitator. */
  handlers: RequestHandler[]
  /** Puts the stubs back as they started (facilitator answers, used nonces); keeps the recordings. */
  reset: () => void
}

/**
 * A stubbed seller's chain and facilitator for `chain`.
 *
 * @param chain - `'base'` (Circle's USDC, EIP-3009) or `'base-sepolia'` (Aave's test USDC, Permit2).
 * @returns The stubs, a vault client over them, the merchant and the buyer.
 * @example
 * const seller = stubSeller('base')
 * useStubServer(...seller.handlers)
 * const { app } = await stubShop(seller)
 */
export function stubSeller(chain: VaultChainName): StubSeller {
  const { chainId, viemChain } = vaultChains[chain]
  const network = `eip155:${chainId}` as const
  const used = { eip3009: new Set<string>(), permit2: new Set<string>() }
  const rpc = stubChain({
    chainId,
    contracts: [usdcStub(chain, used.eip3009), permit2Stub(used.permit2)],
  })
  const facilitator = stubFacilitator({
    networks: [network],
    url: `http://facilitator-${chainId}.stub.test`,
  })
  // viem's default polling interval is 4 s; the settlement checks poll at it, and need not here.
  const publicClient = createPublicClient({
    chain: viemChain,
    transport: http(rpc.url, { retryCount: 0 }),
    pollingInterval: 50,
  })
  return {
    chain,
    network,
    rpc,
    facilitator,
    vault: createVaultClient({ publicClient, chain }),
    merchant: privateKeyToAccount(merchantKey),
    buyer: privateKeyToAccount(buyerKey),
    used,
    handlers: [...rpc.handlers, ...facilitator.handlers],
    reset: () => {
      facilitator.answer('verify', 'accept')
      facilitator.answer('settle', 'accept')
      used.eip3009.clear()
      used.permit2.clear()
    },
  }
}

/**
 * One msw server for a test file, listening from its first test to its last; a request no handler
 * answers is an error, so nothing reaches the network by mistake.
 *
 * @param handlers - The stubs' handlers.
 * @returns The server, to add handlers for one test (`server.use`).
 */
export function useStubServer(...handlers: RequestHandler[]): SetupServer {
  const server = setupServer(...handlers)
  beforeAll(() => server.listen({ onUnhandledRequest: 'error' }))
  afterEach(() => server.resetHandlers())
  afterAll(() => server.close())
  return server
}

/**
 * A buyer's x402 client for `seller`'s network: x402's exact and upto EVM client schemes signing with the
 * buyer's local account, spend controls on and opted in to the vault's USDC (on Base Sepolia not one of
 * x402's default assets), as a real buyer does.
 *
 * @returns x402's HTTP client: `encodePaymentSignatureHeader(await createPaymentPayload(required))`.
 */
export function stubBuyer(seller: StubSeller): x402HTTPClient {
  const { usdc } = vaultChains[seller.chain].addresses
  const client = new x402Client()
    .register(seller.network, new ExactEvmScheme(seller.buyer))
    .register(seller.network, new UptoEvmScheme(seller.buyer))
  client.setSpendControls({ allowedAssets: [{ network: seller.network, asset: usdc }] })
  return new x402HTTPClient(client)
}

/**
 * The `PAYMENT-SIGNATURE` header a buyer sends for a 402 answer: the payment required decoded from it,
 * one accepted requirement chosen by x402's client (or `choose`), signed.
 *
 * @returns The headers to send again, and the payment payload they carry.
 */
export async function paymentFor(
  buyer: x402HTTPClient,
  unpaid: Response,
  choose?: (required: PaymentRequired) => PaymentRequired,
) {
  const body = await unpaid
    .clone()
    .json()
    .catch(() => undefined)
  const required = buyer.getPaymentRequiredResponse((name) => unpaid.headers.get(name), body)
  const payload = await buyer.createPaymentPayload(choose ? choose(required) : required)
  return { headers: buyer.encodePaymentSignatureHeader(payload), payload, required }
}

/** The paid routes of the stub shops: `GET /paid` answers JSON, `GET /broken` answers 500. */
export const stubRoutes = (price = '0.5'): CreatePaywallOptions['routes'] => ({
  'GET /paid': { price, description: 'A paid answer', mimeType: 'application/json' },
  'GET /broken': { price, description: 'A handler that fails', mimeType: 'application/json' },
})

/**
 * A Hono merchant app behind `createPaywall` for a stubbed seller, without a server: `app.request()`
 * reaches it. `sweep: false` unless given: nothing runs in the background. Its handlers: `/paid` and
 * `/free` answer JSON, `/broken` answers 500, `/metered?charge=<base units>` charges that (an `upto`
 * route) and answers what will be settled, or 400 `{ refused: code }` when the charge is refused.
 *
 * @param seller - The stubs.
 * @param options - `createPaywall`'s options over the defaults (the seller's vault and facilitator,
 *   {@link stubRoutes}, `sweep: false`).
 * @returns The paywall and the app.
 */
export async function stubShop(seller: StubSeller, options: Partial<CreatePaywallOptions> = {}) {
  const paywall = await createHonoPaywall({
    vault: seller.vault,
    payTo: seller.merchant.address,
    facilitator: { url: seller.facilitator.url },
    routes: stubRoutes(),
    sweep: false,
    ...options,
  })
  const app = new Hono()
  app.use(paywall.middleware)
  app.get('/paid', (c) => c.json({ paid: true }))
  app.get('/broken', (c) => c.json({ error: 'handler failed' }, 500))
  app.get('/free', (c) => c.json({ free: true }))
  app.all('/api/*', (c) => c.json({ api: c.req.path }))
  app.get('/items/:id', (c) => c.json({ item: c.req.param('id') }))
  app.get('/metered', (c) => {
    try {
      const settles = paywall.charge(c, BigInt(c.req.query('charge') ?? '0'))
      return c.json({ settles: settles.toString() })
    } catch (error) {
      // A charge refused: the handler fails the request, so the payment is not settled.
      return c.json({ refused: (error as VaultError).code }, 400)
    }
  })
  return { paywall, app }
}
