import { depositedIn, receiptsFrom, sweepEvents, usdcBalance } from '../harness/merchant.js'
import { buyerFetch, paymentResponseOf } from '../harness/merchantApps.js'
import { parseUsdc } from '../src/index.js'
import type { BenchContext, Measured } from './context.js'
import { latestBlock, openPaywallShop, withDeadline } from './seller.js'

/** 50 concurrent paid requests, then the accounting in base units. */
export type Burst = {
  /** Paid responses with a successful settlement. */
  settlements: number
  /** The merchant's deposit transactions mined after the burst. The budget is at most 3. */
  depositTxs: number
  /** The merchant's transactions mined reverted, and sweeps that gave up. */
  failedDeposits: number
  /** start + received − end − deposited, in USDC base units, as a decimal string. */
  unaccountedUnits: string
}

const price = '1'
const concurrent = 50

/**
 * Sends 50 paid requests at once to an Express app behind `createPaywall` (default debounce, the
 * lowest threshold the protocol allows, the whole starting balance as reserve so that only the
 * burst's revenue is idle), waits until the sweeper has deposited all it will, closes the paywall
 * and checks the merchant's transactions and balance on chain.
 *
 * @param ctx - The devnet (with its facilitator).
 * @returns Settlements, deposit transactions, failed deposits and the base units unaccounted for.
 * @example
 * const burst = await measureBurst(ctx)
 */
export async function measureBurst(ctx: BenchContext): Promise<Measured<Burst>> {
  const { devnet } = ctx
  const merchant = devnet.accounts.merchant.address
  const minIdle = parseUsdc('10')
  const start = await usdcBalance(devnet, merchant)
  const firstBlock = (await latestBlock(devnet)) + 1n
  const events = sweepEvents()
  const shop = await openPaywallShop(devnet, price, {
    minIdleThreshold: minIdle,
    reserve: start,
    onIdleDeposit: events.onIdleDeposit,
    onNonFatalError: events.onNonFatalError,
  })
  let received = 0n
  let settlements = 0
  try {
    ctx.progress(`burst: ${concurrent} concurrent paid requests`)
    const pay = buyerFetch(devnet)
    const responses = await Promise.all(Array.from({ length: concurrent }, () => pay(shop.paidUrl)))
    settlements = responses.filter(
      (response) => response.status === 200 && paymentResponseOf(response).success,
    ).length
    received = BigInt(settlements) * parseUsdc(price)
    const depositedSoFar = () => events.deposits.reduce((sum, d) => sum + d.idleAmount, 0n)
    ctx.progress('burst: waiting for the sweeper to deposit the revenue')
    // What stays undeposited is below the threshold: the rule sweeps everything above the reserve.
    await withDeadline(
      'the burst’s deposits',
      events.until(
        () => received - depositedSoFar() < minIdle || events.problems.some((p) => !p.willRetry),
      ),
      120_000,
    )
  } finally {
    await shop.stop()
  }
  const receipts = await receiptsFrom(devnet, merchant, firstBlock)
  const deposited = depositedIn(devnet, receipts, merchant)
  const end = await usdcBalance(devnet, merchant)
  const unaccounted = start + received - end - deposited.reduce((sum, amount) => sum + amount, 0n)
  const gaveUp = events.problems.filter(
    (problem) => !problem.willRetry && (problem.phase === 'deposit' || problem.phase === 'receipt'),
  ).length
  return {
    value: {
      settlements,
      depositTxs: deposited.length,
      failedDeposits: receipts.filter((receipt) => receipt.status !== 'success').length + gaveUp,
      unaccountedUnits: unaccounted.toString(),
    },
  }
}
