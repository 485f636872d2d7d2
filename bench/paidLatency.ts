import { HTTPFacilitatorClient, x402ResourceServer } from '@x402/core/server'
import { ExactEvmScheme } from '@x402/evm/exact/server'
import { paymentMiddleware } from '@x402/express'
import { sweepEvents, usdcBalance } from '../harness/merchant.js'
import { buyerFetch } from '../harness/merchantApps.js'
import { readX402UsdcAsset, x402UsdcPrice } from '../src/index.js'
import { gasSponsoringExtensions } from '../src/plugins/gasSponsoring.js'
import type { BenchContext, Measured } from './context.js'
import {
  facilitatorUrlOf,
  merchantVaultClient,
  openPaywallShop,
  type Shop,
  startShop,
} from './seller.js'
import { percentile, roundMs } from './stats.js'

/** The paid-request p50 latency with the sweeper on, against plain x402 middleware. */
export type PaidRequestLatency = {
  /** Paid requests measured for each app (warm-up not counted). */
  requests: number
  plainP50Ms: number
  withSweeperP50Ms: number
  /** `withSweeperP50Ms / plainP50Ms`; the budget is 1.05. */
  ratio: number
  /** Deposits the sweeper made while the requests were measured: proof that sweeps ran. */
  sweepDeposits: number
}

/** Each sale of 1 USDC; the protocol's minimum deposit (10 USDC) is reached every 10 sales. */
const price = '1'

/**
 * Times paid requests to the same Express app behind plain x402 middleware (`@x402/express`'s
 * `paymentMiddleware`, declaring the gas sponsoring that createPaywall declares) and behind `createPaywall` with the sweeper on (every sale sweeps at once:
 * `debounceMs: 0`, the lowest threshold the protocol allows). What keeps it fair:
 * - the same buyer (x402's fetch wrapper), the same devnet facilitator settling on the same anvil,
 *   the same app and price, both apps in this process on loopback;
 * - warm-up requests for each app first (x402's lazy start-up, connection pools, JIT);
 * - requests one at a time, in pairs whose order is drawn at random, so that drift of the machine
 *   hits both alike, and the RPC load of a sweep, which runs after its sale's response, falls on
 *   either app's next request with the same odds;
 * - the time is the buyer's: from the first unpaid request to the paid response's body.
 *
 * @param ctx - The devnet (with its facilitator) and the sample count.
 * @returns Requests per app, both medians, their ratio and the deposits made meanwhile.
 * @example
 * const latency = await measurePaidRequestLatency(ctx)
 */
export async function measurePaidRequestLatency(
  ctx: BenchContext,
): Promise<Measured<PaidRequestLatency>> {
  const pairs = ctx.smoke ? 3 : 60
  const warmUp = ctx.smoke ? 1 : 5
  const { devnet } = ctx
  const events = sweepEvents()
  const shops: { plain: Shop; withSweeper: Shop } = {
    plain: await openPlainShop(ctx),
    withSweeper: await openPaywallShop(devnet, price, {
      minIdleThreshold: '10',
      reserve: await usdcBalance(devnet, devnet.accounts.merchant.address),
      debounceMs: 0,
      onIdleDeposit: events.onIdleDeposit,
      onNonFatalError: events.onNonFatalError,
    }),
  }
  try {
    const pay = buyerFetch(devnet)
    const timed = async (shop: Shop): Promise<number> => {
      const started = performance.now()
      const response = await pay(shop.paidUrl)
      await response.arrayBuffer()
      if (response.status !== 200) throw new Error(`a paid request answered ${response.status}`)
      return performance.now() - started
    }
    for (let run = 0; run < warmUp; run++) {
      ctx.progress(`paid-request latency: warm-up ${run + 1} of ${warmUp}`)
      await timed(shops.plain)
      await timed(shops.withSweeper)
    }
    const depositsBefore = events.deposits.length
    const random = seededRandom(11)
    const ms = { plain: [] as number[], withSweeper: [] as number[] }
    for (let pair = 0; pair < pairs; pair++) {
      if (pair % 10 === 0) ctx.progress(`paid-request latency: pair ${pair + 1} of ${pairs}`)
      const order =
        random() < 0.5 ? (['plain', 'withSweeper'] as const) : (['withSweeper', 'plain'] as const)
      for (const name of order) ms[name].push(await timed(shops[name]))
    }
    const sweepDeposits = events.deposits.length - depositsBefore
    if (events.problems.length > 0) {
      throw new Error(
        `the sweeper reported problems: ${events.problems.map((p) => `${p.phase}: ${p.error.message}`).join('; ')}`,
      )
    }
    const plainP50Ms = percentile(ms.plain, 50)
    const withSweeperP50Ms = percentile(ms.withSweeper, 50)
    return {
      value: {
        requests: pairs,
        plainP50Ms: roundMs(plainP50Ms),
        withSweeperP50Ms: roundMs(withSweeperP50Ms),
        ratio: Math.round((withSweeperP50Ms / plainP50Ms) * 1000) / 1000,
        sweepDeposits,
      },
    }
  } finally {
    await shops.plain.stop()
    await shops.withSweeper.stop()
  }
}

/** The same app behind x402's own middleware: a resource server with the facilitator and the exact EVM scheme. */
async function openPlainShop(ctx: BenchContext): Promise<Shop> {
  const { devnet } = ctx
  const vault = merchantVaultClient(devnet)
  const resourceServer = new x402ResourceServer(
    new HTTPFacilitatorClient({ url: facilitatorUrlOf(devnet) }),
  ).register(vault.network, new ExactEvmScheme())
  const asset = await readX402UsdcAsset(vault)
  const accepts = {
    scheme: 'exact',
    network: vault.network,
    payTo: devnet.accounts.merchant.address,
    // The devnet's USDC is not x402's default asset for the network: the price names it.
    price: x402UsdcPrice({ chain: devnet.chain, amount: price, asset }),
  }
  // The gas sponsoring that createPaywall declares on a Permit2 asset, declared here too: with it the
  // buyer's client checks its Permit2 allowance on chain before each payment (3-6 ms on the devnet),
  // a cost of the payment requirements, not of the sweeper that this row compares.
  const extensions = await gasSponsoringExtensions(asset)
  const middleware = paymentMiddleware(
    {
      'GET /paid': {
        accepts,
        description: 'A paid answer',
        mimeType: 'application/json',
        ...(extensions ? { extensions } : {}),
      },
    },
    resourceServer,
  )
  return startShop(middleware)
}

/** A small deterministic PRNG (mulberry32): the pair orders are random, and the same in every run. */
function seededRandom(seed: number): () => number {
  let state = seed
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
