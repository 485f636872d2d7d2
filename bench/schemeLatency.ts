import { keccak256, toHex } from 'viem'
import { receiptsFrom, sweepEvents, usdcBalance } from '../harness/merchant.js'
import { buyerClient } from '../harness/merchantApps.js'
import { formatUsdc, parseUsdc } from '../src/index.js'
import type { BenchContext, Measured } from './context.js'
import {
  latencyOf,
  type PaidRequestLatency,
  throwOnProblems,
  timedPayment,
  timeInterleavedPairs,
} from './paidLatency.js'
import { batchKinds } from './schemeGas.js'
import { latestBlock, openPaywallShop, openPlainShop, type Sells, type Shop } from './seller.js'

/** The paid-request latency ratio of the schemes beyond `exact` (whose row is `paidRequestLatency`). */
export type SchemeLatency = {
  /** A route priced at most 1 USDC whose handler charges 0.5 USDC (`chargeUsdc`). */
  upto: PaidRequestLatency & { chargeUsdc: string }
  /**
   * A route at 0.001 USDC; the paywall claims every 500 ms and settles every second while the pairs
   * run: `claims` and `settles` are the transactions its jobs sent meanwhile.
   */
  batchSettlement: PaidRequestLatency & { claims: number; settles: number }
}

/**
 * Times paid requests to the same Express app behind x402's own middleware and behind `createPaywall`
 * with the sweeper on, for `upto` and for `batch-settlement`, as `paidRequestLatency` does for `exact`
 * (interleaved pairs in a seeded random order, after a warm-up, the buyer's time from the unpaid
 * request to the paid body; its comments say why), with x402's stock client for each scheme:
 * - `upto`: at most 1 USDC, and both handlers charge 0.5 USDC (`paywall.charge` against x402's
 *   `setSettlementOverrides`); the sweeper sweeps after every sale (`debounceMs: 0`) and deposits every
 *   20 sales (the protocol's minimum deposit, 10 USDC);
 * - `batch-settlement`: 0.001 USDC a request, mostly vouchers (a deposit every ten requests, for each
 *   app's buyer: each has its own channel). x402's middleware keeps the vouchers in memory and runs no
 *   job; the paywall claims every 500 ms and settles every second while the pairs run, and its sweeper
 *   (10 USDC of the wallet already idle) deposits at the first settlement it hears of. So the paywall
 *   does more work beside its requests than the app it is compared with.
 *
 * @param ctx - A Base Sepolia devnet with its facilitator, whose buyer has approved Permit2.
 * @returns Each scheme's requests per app, medians, ratio and what ran meanwhile.
 * @example
 * const latency = await measureSchemeLatency(ctx)
 */
export async function measureSchemeLatency(ctx: BenchContext): Promise<Measured<SchemeLatency>> {
  const { devnet } = ctx
  const merchant = devnet.accounts.merchant.address
  const charge = parseUsdc('0.5')
  const uptoPay = buyerClient(devnet, { scheme: 'upto' }).pay
  const upto = await pairedShops(
    ctx,
    'upto latency',
    '1',
    { scheme: 'upto', charge },
    await usdcBalance(devnet, merchant),
    { plain: uptoPay, withSweeper: uptoPay },
  )

  const channelBuyer = (name: string) =>
    buyerClient(devnet, {
      scheme: 'batch-settlement',
      batchSettlement: { salt: keccak256(toHex(`x402-vault bench: ${name}`)) },
    }).pay
  const batch = await pairedShops(
    ctx,
    'batch-settlement latency',
    '0.001',
    {
      scheme: 'batch-settlement',
      batchSettlement: { claimIntervalMs: 500, settleIntervalMs: 1000 },
    },
    (await usdcBalance(devnet, merchant)) - parseUsdc('10'),
    {
      plain: channelBuyer('plain latency'),
      withSweeper: channelBuyer('paywall latency'),
    },
  )
  const { claims, settles } = batchKinds(
    (await receiptsFrom(devnet, devnet.accounts.facilitator.address, batch.blocks.first)).filter(
      (receipt) => receipt.blockNumber <= batch.blocks.last,
    ),
  )
  return {
    value: {
      upto: { ...upto.latency, chargeUsdc: formatUsdc(charge) },
      batchSettlement: {
        ...batch.latency,
        claims: claims.transactions,
        settles: settles.transactions,
      },
    },
  }
}

/**
 * One scheme's pairs: a plain shop and a paywall shop selling `GET /paid` with `sells`, each paid by its
 * own paying fetch; the paywall's sweeper keeps `reserve` and sweeps after every sale.
 */
async function pairedShops(
  ctx: BenchContext,
  what: string,
  price: string,
  sells: Sells,
  reserve: bigint,
  pay: { plain: typeof fetch; withSweeper: typeof fetch },
): Promise<{ latency: PaidRequestLatency; blocks: { first: bigint; last: bigint } }> {
  const { devnet } = ctx
  const events = sweepEvents()
  const shops: { plain: Shop; withSweeper: Shop } = {
    plain: await openPlainShop(devnet, price, sells),
    withSweeper: await openPaywallShop(
      devnet,
      price,
      {
        minIdleThreshold: '10',
        reserve,
        debounceMs: 0,
        onIdleDeposit: events.onIdleDeposit,
        onNonFatalError: events.onNonFatalError,
      },
      sells,
    ),
  }
  try {
    const times = await timeInterleavedPairs(ctx, what, {
      plain: () => timedPayment(pay.plain, shops.plain.paidUrl),
      withSweeper: () => timedPayment(pay.withSweeper, shops.withSweeper.paidUrl),
      afterWarmUp: async () => ({
        deposits: events.deposits.length,
        block: (await latestBlock(devnet)) + 1n,
      }),
    })
    throwOnProblems(events.problems)
    return {
      latency: {
        ...latencyOf(times),
        sweepDeposits: events.deposits.length - times.afterWarmUp.deposits,
      },
      // What the pairs saw, not what closing the shops sends.
      blocks: { first: times.afterWarmUp.block, last: await latestBlock(devnet) },
    }
  } finally {
    await shops.plain.stop()
    await shops.withSweeper.stop()
  }
}
