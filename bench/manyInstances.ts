/**
 * Many web instances of one merchant, in the two shapes a seller can run them: four
 * merchant processes with the in-process sweeper off and one `x402-vault sweep --watch` beside them,
 * against the same four each sweeping in-process after its own sales. For each: the deposits, the
 * failed or conflicting sends, and the merchant side's RPC requests per settlement. Then the delay
 * from a settlement to its deposit under `--watch`, with its default polling.
 */

import { writeAddressesFile } from '../harness/addressesFile.js'
import { type CountingProxy, startCountingProxy } from '../harness/countingProxy.js'
import { depositedIn, receiptsFrom, usdcBalance } from '../harness/merchant.js'
import { buyerFetch } from '../harness/merchantApps.js'
import { type MerchantProcess, spawnMerchant } from '../harness/spawnMerchant.js'
import { startWatcher, type WatchEventLine, type Watcher } from '../harness/watcher.js'
import { formatUsdc, parseUsdc } from '../src/index.js'
import type { BenchContext } from './context.js'
import { latestBlock, openShopWithoutSweeper, withDeadline } from './seller.js'
import { percentile } from './stats.js'

/** One shape's run. */
export type InstancesShape = {
  instances: number
  settlements: number
  /** Deposit transactions mined. */
  deposits: number
  /** Sends that reverted, collided (nonce taken, already known, the USDC already deposited) or gave up. */
  failedOrConflictingSends: number
  /** The merchant side's RPC requests (the instances and any sweeper) from the first sale to the last deposit. */
  rpcRequests: number
  rpcPerSettlement: number
  /** start + received − end − deposited, in base units, as a decimal string. */
  unaccountedUnits: string
}

export type ManyInstances = {
  /** `sweep: false` on every instance, one `x402-vault sweep --watch` (default --poll 2 s, --debounce 1000 ms). */
  watch: InstancesShape & {
    /** From a paid response (its settlement mined) to the deposit's event, one sale at a time. */
    settlementToDepositMs: { samples: number; p50: number; max: number }
  }
  /** Each instance sweeping in-process after its own sales (debounce 0: every sale sweeps). */
  inProcess: InstancesShape
}

const instances = 4
/** Each sale of the merchant processes pays 1 USDC (harness/merchantProcess.ts). */
const price = parseUsdc('1')
const minIdle = parseUsdc('10')
const collisionCodes = ['TRANSACTION_ALREADY_KNOWN', 'NONCE_CONFLICT', 'INSUFFICIENT_USDC']

/**
 * Runs both shapes, then the settlement-to-deposit delay. Not in a smoke run: it spawns eight merchant
 * processes and a sweeper, and test/seller/manyInstances.devnet.test.ts runs the same shapes in
 * `npm test`.
 *
 * @param ctx - The devnet (with its facilitator).
 * @returns Both shapes' figures; `null` in a smoke run.
 * @example
 * const many = await measureManyInstances(ctx)
 */
export async function measureManyInstances(ctx: BenchContext): Promise<ManyInstances | null> {
  if (ctx.smoke) return null
  const sales = 100
  const proxy = await startCountingProxy(ctx.devnet.rpcUrl)
  try {
    ctx.progress(`many instances: ${instances} instances with sweep: false and one --watch`)
    const watch = await runShape(ctx, proxy, sales, 'watch')
    ctx.progress(`many instances: ${instances} instances sweeping in-process`)
    const inProcess = await runShape(ctx, proxy, sales, 'in-process')
    return { watch, inProcess } as ManyInstances
  } finally {
    await proxy.close()
  }
}

async function runShape(
  ctx: BenchContext,
  proxy: CountingProxy,
  sales: number,
  shape: 'watch' | 'in-process',
): Promise<
  InstancesShape & { settlementToDepositMs?: ManyInstances['watch']['settlementToDepositMs'] }
> {
  const { devnet } = ctx
  const merchant = devnet.accounts.merchant.address
  const start = await usdcBalance(devnet, merchant)
  const firstBlock = (await latestBlock(devnet)) + 1n
  const shops: MerchantProcess[] = []
  let watcher: Watcher | undefined
  const sweeperProblems: { phase: string; code: string; willRetry: boolean }[] = []
  try {
    for (let i = 0; i < instances; i++) {
      shops.push(spawnMerchant(devnet, proxy.url, start, shape === 'watch' ? { sweep: false } : {}))
    }
    const urls = await Promise.all(
      shops.map(async (shop) => `http://127.0.0.1:${(await shop.next('ready')).port}/paid`),
    )
    if (shape === 'watch') {
      watcher = startWatcher(
        {
          MERCHANT_PRIVATE_KEY: devnet.accounts.merchant.privateKey,
          BASE_SEPOLIA_RPC_URL: proxy.url,
        },
        [
          ...['--addresses', await writeAddressesFile(devnet), '--reserve', formatUsdc(start)],
          ...['--min-idle', formatUsdc(minIdle)],
        ],
      )
      await watcher.next((line) => line.event === 'sweep')
    }
    proxy.reset()
    const pay = buyerFetch(devnet)
    const responses = await Promise.all(
      Array.from({ length: sales }, (_, i) => pay(urls[i % instances] as string)),
    )
    const settlements = responses.filter((response) => response.status === 200).length
    const received = BigInt(settlements) * price
    // Done when what is left above the reserve is below the threshold: each pass notes the deposits
    // seen before it reads the balance, so a deposit landing in between is not waited for in vain.
    await withDeadline(
      'the last deposits',
      (async () => {
        for (;;) {
          const seen = shops.map((shop) => shop.events.length)
          if ((await usdcBalance(devnet, merchant)) - start < minIdle) return
          await (watcher
            ? watcher.next(isDeposit)
            : Promise.race(shops.map((shop, i) => shop.next('deposit', seen[i]))))
        }
      })(),
      120_000,
    )
    const rpcRequests = proxy.requests
    const settlementToDepositMs = watcher ? await depositDelays(ctx, watcher) : undefined

    for (const shop of shops) {
      for (const event of shop.events.filter((e) => e.type === 'problem')) {
        sweeperProblems.push({
          phase: String(event.phase),
          code: String(event.code),
          willRetry: event.willRetry === true,
        })
      }
    }
    for (const line of watcher?.events.filter((e) => e.event === 'problem') ?? []) {
      sweeperProblems.push({
        phase: String(line.phase),
        code: String(line.code),
        willRetry: line.willRetry === true,
      })
    }
    if (watcher) {
      watcher.child.kill('SIGTERM')
      await watcher.exited
    }
    await Promise.all(shops.map((shop) => shop.close()))
    const receipts = await receiptsFrom(devnet, merchant, firstBlock)
    const deposited = depositedIn(devnet, receipts, merchant)
    const extra = settlementToDepositMs ? settlementToDepositMs.received : 0n
    const end = await usdcBalance(devnet, merchant)
    const failed =
      receipts.filter((receipt) => receipt.status !== 'success').length +
      sweeperProblems.filter(
        (problem) =>
          (problem.phase === 'deposit' || problem.phase === 'receipt') &&
          (collisionCodes.includes(problem.code) || !problem.willRetry),
      ).length
    return {
      instances,
      settlements,
      deposits: deposited.length - (settlementToDepositMs?.samples ?? 0),
      failedOrConflictingSends: failed,
      rpcRequests,
      rpcPerSettlement: Math.round((rpcRequests / Math.max(1, settlements)) * 100) / 100,
      unaccountedUnits: (start + received + extra - end - sumOf(deposited)).toString(),
      ...(settlementToDepositMs
        ? {
            settlementToDepositMs: {
              samples: settlementToDepositMs.samples,
              p50: percentile(settlementToDepositMs.delays, 50),
              max: Math.max(...settlementToDepositMs.delays),
            },
          }
        : {}),
    }
  } finally {
    watcher?.child.kill('SIGKILL')
    for (const shop of shops) shop.kill()
  }
}

/**
 * One sale at a time of 10 USDC (the threshold) through a paywall with `sweep: false`, each waited
 * for until the watcher's deposit of it: the time from the paid response to the deposit's event.
 */
async function depositDelays(ctx: BenchContext, watcher: Watcher) {
  const { devnet } = ctx
  const samples = 5
  const salePrice = '10'
  const shop = await openShopWithoutSweeper(devnet, salePrice)
  const pay = buyerFetch(devnet)
  const delays: number[] = []
  try {
    ctx.progress(`many instances: settlement → deposit under --watch, ${samples} sales`)
    for (let i = 0; i < samples; i++) {
      const mark = watcher.events.length
      const response = await pay(shop.paidUrl)
      const paidAt = Date.now()
      if (response.status !== 200) throw new Error(`a paid request answered ${response.status}`)
      const deposit = await withDeadline(
        'the watcher’s deposit',
        watcher.next((line) => isDeposit(line) && watcher.events.indexOf(line) >= mark),
        60_000,
      )
      delays.push(Date.parse(deposit.time) - paidAt)
    }
  } finally {
    await shop.stop()
  }
  return { samples, delays, received: BigInt(samples) * parseUsdc(salePrice) }
}

const isDeposit = (line: WatchEventLine) => line.event === 'deposit'
const sumOf = (values: bigint[]) => values.reduce((sum, value) => sum + value, 0n)
