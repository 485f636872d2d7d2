import { timeHookWaits, waitMs } from '../harness/hookWaits.js'
import { usdcBalance } from '../harness/merchant.js'
import { buyerClient } from '../harness/merchantApps.js'
import { parseUsdc, type Recall } from '../src/index.js'
import type { BenchContext, Measured } from './context.js'
import { merchantVaultClient, openPaywallShop, type Shop } from './seller.js'
import { percentile, roundMs } from './stats.js'

/** The buyer side (`vault.attachToClient`): what a recall costs a payment, and how bursts share recalls. */
export type BuyerBench = {
  /** Paid requests per recall case (warm-up not counted). */
  requests: number
  /** Pairs of liquid-wallet requests, one with `attachToClient` and one without (warm-up not counted). */
  liquidPairs: number
  /** A liquid wallet: p50 of paid requests without `attachToClient`, and with it (no recall happens). */
  liquidPlainP50Ms: number
  liquidAttachedP50Ms: number
  /** `liquidAttachedP50Ms / liquidPlainP50Ms`; the budget is 1.05. */
  liquidRatio: number
  /** An empty wallet, one payment at a time: p50 of paid requests that each wait for a recall. */
  recallPaymentP50Ms: number
  /** What the recall adds to a payment: `recallPaymentP50Ms − liquidAttachedP50Ms`. */
  recallAddsMs: number
  /** 10 concurrent payments from an empty wallet: the withdrawals they made. The budget is 2. */
  recallsPerBurst: number
  /** An empty wallet, one payment at a time: p50 of how long a payment waited before x402 signed it. */
  recallWaitP50Ms: number
  /**
   * The longest such wait among the 10 concurrent payments, against one recall's time: the longer of
   * `recallWaitP50Ms` and the burst's slowest recall (its `durationMs`), as test/buyer/attachToClient.devnet.test.ts checks, which
   * asks ≤ 2. The burst's second recall runs beside the first one's settlements and takes longer.
   */
  burstSlowestWaitVsOneRecall: number
  /** …and against `recallWaitP50Ms` alone. */
  burstSlowestWaitVsAlone: number
}

const price = '0.1'

/**
 * Registers the devnet's buyer with the vault and pays the same Express merchant (the paywall, its
 * sweeper off) through x402's fetch wrapper, as a buyer with its USDC in the vault:
 * - liquid wallet: paid requests one at a time, alternating a client with `attachToClient` and one without
 *   (both with the same buyer key), which shows what the hook costs when no recall is needed;
 * - empty wallet (all of its USDC deposited): one payment at a time, each recalling its price;
 * - empty wallet: a burst of 10 payments at once, counting the withdrawals.
 *
 * @param ctx - A Base Sepolia devnet with its facilitator, whose buyer approved Permit2 once.
 * @returns The medians, what a recall adds, the recalls per burst.
 * @example
 * const buyer = await measureBuyer(ctx)
 */
export async function measureBuyer(ctx: BenchContext): Promise<Measured<BuyerBench>> {
  const { devnet } = ctx
  const requests = ctx.smoke ? 3 : 30
  // Two identical clients measured this way came out 0.976-1.025 over 150 pairs: a 5 % budget needs
  // a sample this large.
  const liquidPairs = ctx.smoke ? 3 : 100
  const warmUp = ctx.smoke ? 1 : 3
  const vault = merchantVaultClient(devnet, devnet.accounts.buyer.privateKey)
  const buyer = devnet.accounts.buyer.address
  await vault.ensureInitializedAndWait()
  const shop: Shop = await openPaywallShop(devnet, price, { minIdleThreshold: '1000000' })
  const cap = parseUsdc(price)
  const plain = buyerClient(devnet, { maxAmountPerPayment: cap })
  const attached = buyerClient(devnet, { maxAmountPerPayment: cap })
  const recalls: Recall[] = []
  // How long each payment waits before x402 signs it.
  const { attached: attachment, waits } = timeHookWaits(attached.client, () =>
    vault.attachToClient(attached.client, { onRecall: (recall) => recalls.push(recall) }),
  )
  const timed = async (pay: typeof fetch): Promise<number> => {
    const started = performance.now()
    const response = await pay(shop.paidUrl)
    await response.arrayBuffer()
    if (response.status !== 200) throw new Error(`a paid request answered ${response.status}`)
    return performance.now() - started
  }
  try {
    ctx.progress('buyer: a liquid wallet, with and without attachToClient')
    for (let run = 0; run < warmUp; run++) {
      await timed(plain.pay)
      await timed(attached.pay)
    }
    const ms = { plain: [] as number[], attached: [] as number[], recalled: [] as number[] }
    for (let pair = 0; pair < liquidPairs; pair++) {
      // Alternating order, so that drift hits both alike.
      const order =
        pair % 2 === 0 ? (['plain', 'attached'] as const) : (['attached', 'plain'] as const)
      for (const name of order)
        ms[name].push(await timed(name === 'plain' ? plain.pay : attached.pay))
    }
    if (recalls.length > 0) throw new Error('a liquid wallet recalled')

    ctx.progress('buyer: an empty wallet, one payment at a time')
    await vault.depositAndWait({ amount: await usdcBalance(devnet, buyer) })
    waits.length = 0
    for (let run = 0; run < requests; run++) ms.recalled.push(await timed(attached.pay))
    const recallWaitP50Ms = percentile(waits.map(waitMs), 50)
    if (recalls.length !== requests)
      throw new Error(`${recalls.length} recalls for ${requests} payments`)

    ctx.progress('buyer: an empty wallet, 10 payments at once')
    const before = recalls.length
    waits.length = 0
    await Promise.all(Array.from({ length: 10 }, () => timed(attached.pay)))
    const burstRecalls = recalls.slice(before)
    const oneRecallMs = Math.max(
      recallWaitP50Ms,
      ...burstRecalls.map((recall) => recall.durationMs),
    )
    const slowestWaitMs = Math.max(...waits.map(waitMs))
    const liquidPlainP50Ms = percentile(ms.plain, 50)
    const liquidAttachedP50Ms = percentile(ms.attached, 50)
    const recallPaymentP50Ms = percentile(ms.recalled, 50)
    return {
      value: {
        requests,
        liquidPairs,
        liquidPlainP50Ms: roundMs(liquidPlainP50Ms),
        liquidAttachedP50Ms: roundMs(liquidAttachedP50Ms),
        liquidRatio: Math.round((liquidAttachedP50Ms / liquidPlainP50Ms) * 1000) / 1000,
        recallPaymentP50Ms: roundMs(recallPaymentP50Ms),
        recallAddsMs: roundMs(recallPaymentP50Ms - liquidAttachedP50Ms),
        recallsPerBurst: burstRecalls.length,
        recallWaitP50Ms: roundMs(recallWaitP50Ms),
        burstSlowestWaitVsOneRecall: Math.round((slowestWaitMs / oneRecallMs) * 100) / 100,
        burstSlowestWaitVsAlone: Math.round((slowestWaitMs / recallWaitP50Ms) * 100) / 100,
      },
    }
  } finally {
    await attachment.detach()
    await shop.stop()
  }
}
