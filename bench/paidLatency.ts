import { sweepEvents, usdcBalance } from '../harness/merchant.js'
import { buyerFetch } from '../harness/merchantApps.js'
import type { BenchContext, Measured } from './context.js'
import { openPaywallShop, openPlainShop, type Shop } from './seller.js'
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
  const { devnet } = ctx
  const events = sweepEvents()
  const shops: { plain: Shop; withSweeper: Shop } = {
    plain: await openPlainShop(devnet, price),
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
    const times = await timeInterleavedPairs(ctx, 'paid-request latency', {
      plain: () => timedPayment(pay, shops.plain.paidUrl),
      withSweeper: () => timedPayment(pay, shops.withSweeper.paidUrl),
      // The sweeps of the warm-up are not counted.
      afterWarmUp: () => events.deposits.length,
    })
    throwOnProblems(events.problems)
    return {
      value: { ...latencyOf(times), sweepDeposits: events.deposits.length - times.afterWarmUp },
    }
  } finally {
    await shops.plain.stop()
    await shops.withSweeper.stop()
  }
}

/** Two apps' paid-request times, measured in interleaved pairs. */
export type PairedTimes<mark> = {
  plain: number[]
  withSweeper: number[]
  /** What `afterWarmUp` returned once the warm-up was over. */
  afterWarmUp: mark
}

/**
 * Times the same paid request to two apps, as {@link measurePaidRequestLatency} describes: warm-up
 * requests for each first, then pairs one request at a time, each pair in an order drawn at random
 * (seeded: the same in every run), so that drift of the machine and the background work one app
 * causes after its response (a sweep, a claim) fall on either app's next request with the same odds.
 * A smoke run takes 3 pairs after 1 warm-up request each; a full run 60 after 5.
 *
 * @param ctx - The bench context (smoke or not, progress).
 * @param what - The row's name, for progress.
 * @param apps - One timed paid request to each app (ms); `afterWarmUp` runs once the warm-up is over,
 *   such as to count the sweeps made before the measurement.
 * @returns Each app's times, and what `afterWarmUp` returned.
 * @example
 * const times = await timeInterleavedPairs(ctx, 'upto latency', { plain, withSweeper, afterWarmUp })
 */
export async function timeInterleavedPairs<mark>(
  ctx: BenchContext,
  what: string,
  apps: {
    plain: () => Promise<number>
    withSweeper: () => Promise<number>
    afterWarmUp: () => mark | Promise<mark>
  },
): Promise<PairedTimes<mark>> {
  const pairs = ctx.smoke ? 3 : 60
  const warmUp = ctx.smoke ? 1 : 5
  for (let run = 0; run < warmUp; run++) {
    ctx.progress(`${what}: warm-up ${run + 1} of ${warmUp}`)
    await apps.plain()
    await apps.withSweeper()
  }
  const afterWarmUp = await apps.afterWarmUp()
  const random = seededRandom(11)
  const ms = { plain: [] as number[], withSweeper: [] as number[] }
  for (let pair = 0; pair < pairs; pair++) {
    if (pair % 10 === 0) ctx.progress(`${what}: pair ${pair + 1} of ${pairs}`)
    const order =
      random() < 0.5 ? (['plain', 'withSweeper'] as const) : (['withSweeper', 'plain'] as const)
    for (const name of order) ms[name].push(await apps[name]())
  }
  return { ...ms, afterWarmUp }
}

/**
 * The buyer's time for one paid request: from the first, unpaid request to the paid response's body.
 *
 * @param pay - A paying fetch (x402's fetch wrapper).
 * @param url - The paid route.
 * @returns Milliseconds.
 * @throws {Error} when the paid request is not answered 200.
 */
export async function timedPayment(pay: typeof fetch, url: string): Promise<number> {
  const started = performance.now()
  const response = await pay(url)
  await response.arrayBuffer()
  if (response.status !== 200) throw new Error(`a paid request answered ${response.status}`)
  return performance.now() - started
}

/**
 * Both medians of paired times and their ratio, rounded for the report.
 *
 * @param times - From {@link timeInterleavedPairs}.
 * @returns Requests per app, both medians and `ratio` (to 3 decimals).
 */
export function latencyOf(times: PairedTimes<unknown>): Omit<PaidRequestLatency, 'sweepDeposits'> {
  const plainP50Ms = percentile(times.plain, 50)
  const withSweeperP50Ms = percentile(times.withSweeper, 50)
  return {
    requests: times.plain.length,
    plainP50Ms: roundMs(plainP50Ms),
    withSweeperP50Ms: roundMs(withSweeperP50Ms),
    ratio: Math.round((withSweeperP50Ms / plainP50Ms) * 1000) / 1000,
  }
}

/**
 * Fails the row when the sweeper reported a problem: a latency measured beside failing sweeps says
 * nothing about working ones.
 *
 * @param problems - The sweeper's `onNonFatalError` reports.
 * @throws {Error} naming each problem.
 */
export function throwOnProblems(problems: readonly { phase: string; error: Error }[]): void {
  if (problems.length > 0) {
    throw new Error(
      `the sweeper reported problems: ${problems.map((p) => `${p.phase}: ${p.error.message}`).join('; ')}`,
    )
  }
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
