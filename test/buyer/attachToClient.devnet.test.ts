/**
 * The buyer side end to end on the devnet, on both chains: an agent whose USDC is in the vault pays a
 * real Express merchant (this package's paywall and sweeper, the devnet's HTTP facilitator) through x402's
 * fetch wrapper, and `vault.attachToClient` recalls what each payment lacks just before x402 signs it. On Base
 * the buyer pays with EIP-3009; on Base Sepolia through Permit2, having opted in to the vault's USDC in
 * x402's spend controls (`allowedAssets`) and approved Permit2 once (so that concurrent payments do not
 * share the token's permit nonce). The buyer's vault client talks to the chain through a proxy that
 * injects RPC faults. The policy, the aborts, faults and redeposit run on Base only: they do not depend
 * on how x402 moves the USDC.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { decodePaymentRequiredHeader } from '@x402/core/http'
import { Hono } from 'hono'
import { createPublicClient, createWalletClient, parseAbi } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { type CountingProxy, startCountingProxy } from '../../harness/countingProxy.js'
import { timeHookWaits, waitMs } from '../../harness/hookWaits.js'
import {
  approvePermit2Once,
  merchantVault,
  sweepEvents,
  usdcBalance,
} from '../../harness/merchant.js'
import {
  buyerClient,
  frameworks,
  paidRoutes,
  paymentResponseOf,
} from '../../harness/merchantApps.js'
import type { Devnet } from '../../src/devnet/startDevnet.js'
import {
  type AttachToClientOptions,
  type BuyerProblem,
  createVaultClient,
  findVaultError,
  type IdleDeposit,
  PaymentFundingError,
  PaymentOutcomeError,
  PaymentPolicyError,
  parseUsdc,
  type Recall,
  routerAbi,
  type VaultClient,
  vaultHttp,
} from '../../src/index.js'
import { createPaywall as createHonoPaywall } from '../../src/plugins/hono.js'
import { readAheadFreshMs } from '../../src/sdk/buyer/balanceReads.js'
import { answerGraceMs } from '../../src/sdk/buyer/purchaseGuard.js'
import { x402BatchSettlementAddress } from '../../src/sdk/shared.js'
import { type DevnetClients, useMerchantDevnet } from '../support/devnet.js'
import { expectVaultError } from '../support/expectVaultError.js'
import { startHttpFaultProxy } from '../support/httpFaultProxy.js'

const express = frameworks[0] as (typeof frameworks)[number]
/** x402's batch-settlement contract's deposit event, as published. */
const channelEvents = parseAbi([
  'event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 newBalance)',
])
const sum = (amounts: bigint[]) => amounts.reduce((total, amount) => total + amount, 0n)

/**
 * How far this process's clock runs ahead of the wall clock, in ms. Two tests must get past a
 * payment's expiry: `passTime` moves the clock there instead of waiting for it (10 s each). Everything
 * that judges an authorization's time in this process reads `Date.now()`: x402's signer (its
 * `validBefore` and Permit2 deadline), the devnet's facilitator (which verifies only those with 6 s
 * left), the seller and the buyer. The devnet's chain moves with it, and a devnet started later starts
 * at the moved time. Restored when the file ends (test/support/isolateFiles.ts).
 */
let clockAheadMs = 0
const wallClock = Date.now.bind(Date)
beforeAll(() => {
  vi.spyOn(Date, 'now').mockImplementation(() => wallClock() + clockAheadMs)
})

describe.each(['base', 'base-sepolia'] as const)('on %s', (chain) => {
  let devnet: Devnet
  let t: DevnetClients
  /** In front of the devnet's RPC, for the buyer's vault client: it injects faults. */
  let buyerRpc: CountingProxy
  let buyerVault: VaultClient
  useMerchantDevnet({ chain, facilitator: true }, async (m) => {
    ;({ devnet, t } = m)
    buyerRpc = await startCountingProxy(devnet.rpcUrl)
    const account = privateKeyToAccount(devnet.accounts.buyer.privateKey)
    const transport = () => vaultHttp(buyerRpc.url, { retryCount: 0 })
    buyerVault = createVaultClient({
      publicClient: createPublicClient({
        chain: devnet.viemChain,
        pollingInterval: 50,
        transport: transport(),
      }),
      walletClient: createWalletClient({
        account,
        chain: devnet.viemChain,
        pollingInterval: 50,
        transport: transport(),
      }),
      chain: devnet.chain,
      addresses: devnet.addresses,
    })
    // The agent keeps all of its USDC in the vault: 0 liquid.
    await buyerVault.ensureInitializedAndWait()
    await buyerVault.depositAndWait({ amount: await buyerLiquid() })
  })
  afterAll(() => buyerRpc?.close())

  const cleanups: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
    buyerRpc.setFault(undefined)
  })

  const buyer = () => devnet.accounts.buyer.address
  const buyerLiquid = () => usdcBalance(devnet, buyer())
  const buyerShares = () => t.readOnly.getShareBalance({ wallet: buyer() })
  const merchantBalance = () => usdcBalance(devnet, devnet.accounts.merchant.address)
  const nextBlock = async () => (await t.publicClient.getBlockNumber({ cacheTime: 0 })) + 1n
  /** The buyer's withdrawals since `fromBlock`, from the router's logs. */
  const withdrawalsSince = async (fromBlock: bigint) =>
    fromBlock > (await t.publicClient.getBlockNumber({ cacheTime: 0 }))
      ? []
      : t.publicClient.getContractEvents({
          address: devnet.addresses.router,
          abi: routerAbi,
          eventName: 'Withdrawn',
          args: { wallet: buyer() },
          fromBlock,
        })

  /**
   * An Express merchant selling `GET /paid` (and `GET /broken`, which fails) at `price`, and a buyer.
   * `facilitatorUrl` puts a fault proxy between the merchant and the devnet's facilitator;
   * `maxTimeoutSeconds` is how long each payment's authorization stays valid; `buyerFetch` is the fetch
   * under the buyer's x402 wrapper.
   */
  async function openShop(
    options: {
      price?: string
      sweep?: { minIdleThreshold: string | bigint; reserve: bigint }
      facilitatorUrl?: string
      /** The seller's RPC (default: the devnet's). */
      rpcUrl?: string
      maxTimeoutSeconds?: number
      /** How long the seller reads the chain for a settlement whose outcome is unknown. */
      settlementCheckMs?: number
      buyerFetch?: typeof fetch
    } = {},
  ) {
    const events = sweepEvents()
    const routes = Object.fromEntries(
      Object.entries(paidRoutes(options.price ?? '0.5')).map(([key, route]) => [
        key,
        { ...route, maxTimeoutSeconds: options.maxTimeoutSeconds },
      ]),
    )
    const paywall = await express.createPaywall({
      vault: merchantVault(devnet, options.rpcUrl ?? devnet.rpcUrl),
      payTo: devnet.accounts.merchant.address,
      facilitator: { url: options.facilitatorUrl ?? (devnet.facilitatorUrl as string) },
      routes,
      settlementCheckMs: options.settlementCheckMs,
      sweep: {
        minIdleThreshold: '1000000',
        debounceMs: 0,
        onIdleDeposit: events.onIdleDeposit,
        onNonFatalError: events.onNonFatalError,
        ...options.sweep,
      },
    })
    cleanups.push(() => paywall.close())
    const app = await express.start(paywall.middleware)
    cleanups.push(app.stop)
    const url = (path: string) => `${app.baseUrl}${path}`
    // A buyer of pricier APIs raises x402's $1 cap on the USDC, as a real one would.
    const cap = parseUsdc(options.price ?? '0.5')
    const buyer = buyerClient(devnet, { fetch: options.buyerFetch, maxAmountPerPayment: cap })
    /** Pays, and returns what the paying fetch threw instead of throwing it. */
    const attempt = (path: string) =>
      buyer.pay(url(path)).then(
        (response) => response,
        (error: unknown) => error as Error,
      )
    return { events, url, attempt, ...buyer }
  }

  /** Attaches the buyer's vault to an x402 client, recording what it reports. */
  function attach(
    client: Parameters<VaultClient['attachToClient']>[0],
    options: AttachToClientOptions = {},
  ) {
    const recalls: Recall[] = []
    const problems: BuyerProblem[] = []
    const attachment = buyerVault.attachToClient(client, {
      onRecall: (recall) => recalls.push(recall),
      onNonFatalError: (problem) => problems.push(problem),
      ...options,
    })
    cleanups.push(() => attachment.detach())
    return { attachment, recalls, problems }
  }

  it('0 liquid: one recall of exactly the price, the payment settles, the merchant sweeps it; every unit accounted for', async () => {
    const price = parseUsdc('0.5')
    const merchantStart = await merchantBalance()
    const shop = await openShop({
      sweep: { minIdleThreshold: '10', reserve: merchantStart - parseUsdc('10') },
    })
    const from = await nextBlock()
    const sharesBefore = await buyerShares()
    const positionBefore = await t.readOnly.getPosition({ wallet: buyer() })
    expect(await buyerLiquid()).toBe(0n)
    const { recalls, problems } = attach(shop.client)

    const paid = await shop.pay(shop.url('/paid'))
    expect(paid.status).toBe(200)
    expect(recalls).toHaveLength(1)
    const [recall] = recalls as [Recall]
    expect(recall).toMatchObject({
      requested: price,
      payments: [price],
      walletBalance: 0n,
      reason: 'payment-shortfall',
    })
    // Withdrawn by net amount: at least what was asked, never less.
    expect(recall.amount).toBeGreaterThanOrEqual(price)
    const [withdrawal, ...more] = await withdrawalsSince(from)
    expect(more).toEqual([])
    expect(withdrawal?.transactionHash).toBe(recall.txHash)
    expect(withdrawal?.args).toMatchObject({
      usdcReturned: recall.amount,
      dvUsdcBurned: recall.shares,
      feePaid: recall.fee,
    })
    // The buyer: liquid = recalled − paid; the position lost exactly the shares burned.
    expect(await buyerLiquid()).toBe(recall.amount - price)
    expect(await buyerShares()).toBe(sharesBefore - recall.shares)
    const positionAfter = await t.readOnly.getPosition({ wallet: buyer() })
    // The position's value fell by what the recall took out before its fee (and rose by yield since).
    expect(positionAfter.currentValue).toBeLessThan(positionBefore.currentValue as bigint)
    // The merchant: paid the price, and its sweeper deposits its idle USDC, this sale included.
    await shop.events.deposited()
    const deposit = shop.events.deposits[0] as IdleDeposit
    expect(deposit.idleAmount).toBe(parseUsdc('10') + price)
    expect(deposit.settlements).toMatchObject([{ amount: price, payer: buyer() }])
    expect(await merchantBalance()).toBe(merchantStart + price - deposit.idleAmount)
    expect(problems).toEqual([])
  })

  it('10 concurrent payments from 0 liquid: all paid, at most 2 recalls, none waits longer than two recalls and the gather between them, every unit accounted for', async () => {
    const price = parseUsdc('0.5')
    const shop = await openShop()
    // How long each payment waits before x402 signs.
    const {
      attached: { recalls, problems },
      waits,
    } = timeHookWaits(shop.client, () => attach(shop.client))
    // One recall alone: a payment on its own, from a wallet the last recall left with less than the
    // price. Three of them, and their median, so that one slow block does not set the yardstick.
    const alone: number[] = []
    for (let payment = 0; payment < 3; payment++) {
      waits.length = 0
      expect((await shop.pay(shop.url('/paid'))).status).toBe(200)
      alone.push(waitMs(waits[0] as [number, number]))
    }
    expect(recalls).toHaveLength(3)
    const aloneMs = alone.sort((a, b) => a - b)[1] as number
    // A recall may bring a unit over the price (rounding goes the buyer's way): the ten start from
    // what the three left, and the accounting below counts it.
    waits.length = 0
    recalls.length = 0
    const merchantStart = await merchantBalance()
    const from = await nextBlock()
    const sharesBefore = await buyerShares()
    const liquidBefore = await buyerLiquid()

    // How late this process ran its callbacks during the burst: on a busy machine a round starts, and
    // a payment resumes, that much after its time, whatever the rounds do.
    const loopDelay = monitorEventLoopDelay({ resolution: 5 })
    loopDelay.enable()
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => shop.pay(shop.url('/paid'))),
    ).finally(() => loopDelay.disable())
    expect(responses.map((response) => response.status)).toEqual(Array(10).fill(200))
    expect(recalls.length).toBeGreaterThanOrEqual(1)
    expect(recalls.length).toBeLessThanOrEqual(2)
    expect(waits).toHaveLength(10)
    // One recall's time: a payment's alone, or the slowest of the burst's own recalls when that is
    // longer (the burst's ten settlements share the devnet with its recalls and slow them down).
    const oneRecallMs = Math.max(aloneMs, ...recalls.map((recall) => recall.durationMs))
    const lateMs = loopDelay.max / 1e6
    const waited = waits.map(waitMs)
    // The longest a payment may wait: it arrives as a round starts, waits for that recall, for the
    // next round to gather (at most a quarter of a recall), and for its own recall.
    expect(
      Math.max(...waited),
      `waits ${waited.map(Math.round)} ms; alone ${alone.map(Math.round)} ms; recalls ${recalls.map((r) => r.durationMs)} ms; callbacks up to ${Math.round(lateMs)} ms late`,
    ).toBeLessThanOrEqual(2.25 * oneRecallMs + lateMs)
    expect(sum(recalls.flatMap((recall) => recall.payments))).toBe(10n * price)
    const withdrawals = await withdrawalsSince(from)
    expect(withdrawals.map((log) => log.transactionHash)).toEqual(recalls.map((r) => r.txHash))
    const recalled = sum(recalls.map((recall) => recall.amount))
    expect(liquidBefore + recalled).toBeGreaterThanOrEqual(10n * price)
    expect(await buyerLiquid()).toBe(liquidBefore + recalled - 10n * price)
    expect(await buyerShares()).toBe(sharesBefore - sum(recalls.map((recall) => recall.shares)))
    expect(await merchantBalance()).toBe(merchantStart + 10n * price)
    expect(problems).toEqual([])
  })

  /**
   * Brings the chain and this process's clock to `timestamp` (unix seconds), as waiting until then
   * would, without the wait: the clock moves ahead (see `clockAheadMs`), and one block is mined at the
   * timestamp, as a live chain's next block would come. The devnet's chain may lag the clock (its
   * genesis is in the past, and it keeps that offset until time is advanced): the block is then given
   * the timestamp, rather than blocks mined one after another until the chain catches up. From that
   * block on, the devnet runs as far ahead of the wall clock as `Date.now()` does.
   */
  async function passTime(timestamp: bigint) {
    const aheadMs = Number(timestamp) * 1000 - Date.now()
    if (aheadMs > 0) clockAheadMs += aheadMs
    const latest = await t.publicClient.getBlock({ blockTag: 'latest' })
    if (latest.timestamp >= timestamp) return
    await t.testClient.setNextBlockTimestamp({ timestamp })
    await t.testClient.mine({ blocks: 1 })
    expect((await t.publicClient.getBlock({ blockTag: 'latest' })).timestamp).toBe(timestamp)
  }

  it("a seller that cannot tell the settlement's outcome: the same purchase is refused while the earlier payment can still be settled (PAYMENT_OUTCOME_UNKNOWN), paid once that one expired, and refused when it was settled though its answer was lost (PAYMENT_ALREADY_SETTLED); charged once, one recall", async () => {
    const facilitator = await startHttpFaultProxy(devnet.facilitatorUrl as string)
    cleanups.push(() => facilitator.close())
    // The seller reads the chain to learn an unknown outcome; with its RPC down it cannot.
    const sellerRpc = await startHttpFaultProxy(devnet.rpcUrl)
    cleanups.push(() => sellerRpc.close())
    // Authorizations valid for 10 s, so that the test can wait for one to expire (x402's facilitator
    // verifies only those with 6 s left). The seller reads the chain once for an unknown outcome,
    // so that the authorization is still valid when the buyer tries again.
    const shop = await openShop({
      facilitatorUrl: facilitator.url,
      rpcUrl: sellerRpc.url,
      maxTimeoutSeconds: 10,
      settlementCheckMs: 0,
    })
    const price = parseUsdc('0.5')
    const merchant = devnet.accounts.merchant.address
    const merchantStart = await merchantBalance()
    const from = await nextBlock()
    const { attachment, recalls, problems } = attach(shop.client)

    // 1. The settlement never reaches the chain (the facilitator fails it), but the seller cannot say so.
    facilitator.setRule((path) =>
      path.endsWith('/settle') ? { status: 500, body: '{"error":"down"}' } : undefined,
    )
    const first = await shop.pay(shop.url('/paid'))
    // The paywall reads the chain, finds the authorization unused and still valid: pending, not taken.
    expect(first.status).toBe(402)
    expect(paymentResponseOf(first)).toMatchObject({
      success: false,
      errorReason: 'settlement_pending',
    })
    expect(recalls).toHaveLength(1)
    expect(await merchantBalance()).toBe(merchantStart)
    facilitator.setRule(undefined)

    // 2. The same purchase again: the earlier authorization is unused and valid, so the seller could
    // still settle it. Refused before signing; nothing recalled.
    const retried = await shop.attempt('/paid')
    expect(await merchantBalance()).toBe(merchantStart)
    expect(attachment.state().paymentsOutcomeUnknown).toBe(1)
    expect(retried).toBeInstanceOf(Error)
    expect((retried as Error).message).toMatch(/^Failed to create payment payload: /)
    const unknown = findVaultError(retried) as PaymentOutcomeError
    expect(unknown).toBeInstanceOf(PaymentOutcomeError)
    expect(unknown).toMatchObject({
      code: 'PAYMENT_OUTCOME_UNKNOWN',
      retryable: true,
      details: {
        purchase: { url: shop.url('/paid'), payTo: merchant, amount: price },
        earlierPayment: { method: chain === 'base' ? 'eip3009' : 'permit2', payer: buyer() },
      },
    })
    const { validBefore: expiresAt } = unknown.details.earlierPayment as { validBefore: bigint }
    expect(unknown.message).toContain(new Date(Number(expiresAt) * 1000).toISOString())
    expect(recalls).toHaveLength(1)

    // 3. Once the chain is past its expiry, no block can settle it: the purchase is paid afresh, from
    // the USDC the first recall brought. This time the facilitator settles, its answer is lost, and
    // the seller's RPC is down, so the seller cannot learn that it settled: pending, not 200.
    await passTime(expiresAt)
    facilitator.setRule((path) => (path.endsWith('/settle') ? { dropAnswer: true } : undefined))
    sellerRpc.setRule(() => ({ status: 503, body: 'unavailable' }))
    const third = await shop.pay(shop.url('/paid'))
    expect(third.status).toBe(402)
    expect(paymentResponseOf(third)).toMatchObject({ errorReason: 'settlement_pending' })
    expect(await merchantBalance()).toBe(merchantStart + price)
    facilitator.setRule(undefined)
    sellerRpc.setRule(undefined)

    // 4. The same purchase again: its payment was used on chain. Refused, and charged once.
    const settled = findVaultError(await shop.attempt('/paid'))
    expect(await merchantBalance()).toBe(merchantStart + price)
    expect(settled).toBeInstanceOf(PaymentOutcomeError)
    expect(settled).toMatchObject({ code: 'PAYMENT_ALREADY_SETTLED', retryable: false })
    expect(attachment.state().paymentsOutcomeUnknown).toBe(1)
    const [recall] = recalls as [Recall]
    expect(recalls).toHaveLength(1)
    expect((await withdrawalsSince(from)).map((log) => log.transactionHash)).toEqual([
      recall.txHash,
    ])
    expect(await buyerLiquid()).toBe(recall.amount - price)
    expect(problems).toEqual([])
  })

  /**
   * A Hono merchant (reached through `app.fetch`, no server) selling with `scheme`: `GET /metered` with
   * `upto` at a maximum of `maximum` USDC, its handler charging the `?charge=` base units it is asked,
   * or `GET /tick` with `batch-settlement` at `tick` USDC (its claim and settle jobs left to
   * `close()`); and a stock x402 buyer of that scheme, x402's own client scheme, opted in to the
   * vault's USDC.
   */
  async function openSchemeShop(
    scheme: 'upto' | 'batch-settlement',
    options: {
      maximum?: string
      tick?: string
      facilitatorUrl?: string
      maxTimeoutSeconds?: number
    } = {},
  ) {
    const maximum = options.maximum ?? '20'
    const paywall = await createHonoPaywall({
      vault: merchantVault(devnet, devnet.rpcUrl),
      payTo: devnet.accounts.merchant.address,
      facilitator: { url: options.facilitatorUrl ?? (devnet.facilitatorUrl as string) },
      routes:
        scheme === 'upto'
          ? {
              'GET /metered': {
                price: maximum,
                scheme: 'upto' as const,
                description: 'A metered answer',
                mimeType: 'application/json',
                maxTimeoutSeconds: options.maxTimeoutSeconds,
              },
            }
          : {
              'GET /tick': {
                price: options.tick ?? '0.001',
                scheme: 'batch-settlement' as const,
                description: 'One tick',
                mimeType: 'application/json',
              },
            },
      sweep: false,
      ...(scheme === 'batch-settlement'
        ? { batchSettlement: { claimIntervalMs: 3_600_000, settleIntervalMs: 3_600_000 } }
        : {}),
    })
    cleanups.push(() => paywall.close())
    const app = new Hono()
    app.use(paywall.middleware)
    app.get('/metered', (c) => {
      paywall.charge(c, BigInt(c.req.query('charge') as string))
      return c.json({ metered: true })
    })
    app.get('/tick', (c) => c.json({ tick: true }))
    const appFetch = ((input: RequestInfo | URL, init?: RequestInit) =>
      app.fetch(new Request(input, init))) as typeof fetch
    const buyer = buyerClient(devnet, {
      fetch: appFetch,
      maxAmountPerPayment: scheme === 'upto' ? parseUsdc(maximum) : undefined,
      scheme,
    })
    const url = (path: string) => `http://merchant.test${path}`
    const attempt = (path: string) =>
      buyer.pay(url(path)).then(
        (response) => response,
        (error: unknown) => error as Error,
      )
    return { paywall, url, attempt, ...buyer }
  }

  it('upto from 0 liquid: one recall of exactly the maximum; the seller charges part of it, and the rest goes back to the vault by the redeposit rule; every unit accounted for', async () => {
    await approvePermit2Once(devnet, devnet.accounts.buyer.privateKey, 'upto')
    const maximum = parseUsdc('20')
    const charge = parseUsdc('4.321')
    const shop = await openSchemeShop('upto', { maximum: '20' })
    const merchantStart = await merchantBalance()
    const from = await nextBlock()
    const sharesBefore = await buyerShares()
    expect(await buyerLiquid()).toBe(0n)
    let heard = (_deposit: IdleDeposit) => {}
    const redeposited = new Promise<IdleDeposit>((resolve) => {
      heard = resolve
    })
    const { recalls, problems, attachment } = attach(shop.client, {
      redeposit: { minIdleThreshold: '0', debounceMs: 20, onIdleDeposit: (made) => heard(made) },
    })

    const paid = await shop.pay(shop.url(`/metered?charge=${charge}`))
    expect(paid.status).toBe(200)
    expect(paymentResponseOf(paid)).toMatchObject({
      success: true,
      payer: buyer(),
      amount: charge.toString(),
    })
    // The recall covered what the payment may take, its maximum, not what it was charged.
    expect(recalls).toMatchObject([
      { requested: maximum, payments: [maximum], walletBalance: 0n, reason: 'payment-shortfall' },
    ])
    const [recall] = recalls as [Recall]
    expect(recall.amount).toBeGreaterThanOrEqual(maximum)
    expect(await merchantBalance()).toBe(merchantStart + charge)
    // What the charge left is swept back once no payment is in flight: above the vault's minimum.
    const deposit = await redeposited
    expect(deposit).toMatchObject({ idleAmount: recall.amount - charge, reserveFloor: 0n })
    expect(await buyerLiquid()).toBe(0n)
    expect(await buyerShares()).toBe(sharesBefore - recall.shares + deposit.sharesMinted)
    expect((await withdrawalsSince(from)).map((log) => log.transactionHash)).toEqual([
      recall.txHash,
    ])
    expect(attachment.state()).toMatchObject({ committed: 0n, paymentsInFlight: 0 })
    expect(problems).toEqual([])
  })

  it('batch-settlement from 0 liquid: a recall of exactly the channel deposit, none for the vouchers it funds, another when the channel needs a top-up; every unit accounted for', async () => {
    const tick = parseUsdc('0.001')
    const shop = await openSchemeShop('batch-settlement')
    const merchantStart = await merchantBalance()
    const from = await nextBlock()
    const sharesBefore = await buyerShares()
    expect(await buyerLiquid()).toBe(0n)
    const { recalls, problems } = attach(shop.client)

    const first = await shop.pay(shop.url('/tick'))
    expect(first.status).toBe(200)
    expect(paymentResponseOf(first).transaction).toMatch(/^0x[0-9a-f]{64}$/)
    // The deposit x402's client signed, recalled to the base unit, and now in the channel.
    expect(recalls).toHaveLength(1)
    const deposit = (recalls[0] as Recall).requested
    expect(recalls[0]).toMatchObject({ payments: [deposit], walletBalance: 0n })
    expect(deposit).toBeGreaterThan(tick)
    expect(deposit % tick).toBe(0n)
    expect(await buyerLiquid()).toBe((recalls[0] as Recall).amount - deposit)
    // The deposit covers this many requests; each after the first is a voucher: no recall.
    const covered = Number(deposit / tick)
    for (let request = 1; request < covered; request++) {
      const paid = await shop.pay(shop.url('/tick'))
      expect(paid.status).toBe(200)
      expect(paymentResponseOf(paid).transaction).toBe('')
    }
    expect(recalls).toHaveLength(1)
    // One more than the deposit covers: the channel needs a top-up, and it alone is recalled.
    const topUp = await shop.pay(shop.url('/tick'))
    expect(topUp.status).toBe(200)
    expect(paymentResponseOf(topUp).transaction).toMatch(/^0x[0-9a-f]{64}$/)
    expect(recalls).toHaveLength(2)
    const second = recalls[1] as Recall
    // The wallet's unit of rounding from the first recall counts: the second asks only the rest.
    const leftOver = (recalls[0] as Recall).amount - deposit
    const topUpDeposit = second.requested + leftOver
    expect(second).toMatchObject({ walletBalance: leftOver, payments: [topUpDeposit] })

    // The seller claims and settles what the requests were charged; the rest of the deposits stay in
    // the buyer's channel, refundable to it.
    await shop.paywall.close()
    const requests = BigInt(covered + 1)
    expect(await merchantBalance()).toBe(merchantStart + requests * tick)
    const recalled = sum(recalls.map((recall) => recall.amount))
    expect(await buyerLiquid()).toBe(recalled - deposit - topUpDeposit)
    expect(await buyerShares()).toBe(sharesBefore - sum(recalls.map((recall) => recall.shares)))
    expect((await withdrawalsSince(from)).map((log) => log.transactionHash)).toEqual(
      recalls.map((recall) => recall.txHash),
    )
    const deposited = await t.publicClient.getContractEvents({
      address: x402BatchSettlementAddress,
      abi: channelEvents,
      eventName: 'Deposited',
      fromBlock: from,
    })
    expect(deposited.map((log) => log.args.amount)).toEqual([deposit, topUpDeposit])
    expect(deposited.at(-1)?.args.newBalance).toBe(deposit + topUpDeposit)
    expect(problems).toEqual([])
  })

  it("upto, a seller that cannot tell the settlement's outcome: the same purchase is refused while the earlier payment's Permit2 nonce is unused and its deadline not past (PAYMENT_OUTCOME_UNKNOWN), paid once it passed, and refused once the nonce is used (PAYMENT_ALREADY_SETTLED); charged once, one recall", async () => {
    await approvePermit2Once(devnet, devnet.accounts.buyer.privateKey, 'upto')
    const facilitator = await startHttpFaultProxy(devnet.facilitatorUrl as string)
    cleanups.push(() => facilitator.close())
    // Authorizations valid for 10 s, so that the test can wait for one to expire.
    const shop = await openSchemeShop('upto', {
      maximum: '0.5',
      facilitatorUrl: facilitator.url,
      maxTimeoutSeconds: 10,
    })
    const maximum = parseUsdc('0.5')
    const charge = parseUsdc('0.3')
    const path = `/metered?charge=${charge}`
    const merchantStart = await merchantBalance()
    const from = await nextBlock()
    const { attachment, recalls, problems } = attach(shop.client)

    // 1. The settlement never reaches the chain (the facilitator fails it), and the seller answers
    // only that its facilitator failed (502, no settlement): the payment's outcome is unknown.
    facilitator.setRule((url) =>
      url.endsWith('/settle') ? { status: 500, body: '{"error":"down"}' } : undefined,
    )
    const first = await shop.pay(shop.url(path))
    expect(first.status).toBe(502)
    expect(first.headers.get('PAYMENT-RESPONSE')).toBeNull()
    expect(attachment.state().paymentsOutcomeUnknown).toBe(1)
    expect(recalls).toHaveLength(1)
    expect(await merchantBalance()).toBe(merchantStart)
    facilitator.setRule(undefined)

    // 2. The same purchase again: its Permit2 nonce is unused and its deadline ahead. Refused before
    // signing; nothing recalled.
    const unknown = findVaultError(await shop.attempt(path)) as PaymentOutcomeError
    expect(await merchantBalance()).toBe(merchantStart)
    expect(attachment.state().paymentsOutcomeUnknown).toBe(1)
    expect(unknown).toBeInstanceOf(PaymentOutcomeError)
    expect(unknown).toMatchObject({
      code: 'PAYMENT_OUTCOME_UNKNOWN',
      retryable: true,
      details: {
        purchase: {
          url: shop.url('/metered?…'),
          payTo: devnet.accounts.merchant.address,
          amount: maximum,
        },
        earlierPayment: { method: 'permit2', payer: buyer() },
      },
    })
    const { validBefore: expiresAt } = unknown.details.earlierPayment as { validBefore: bigint }
    expect(recalls).toHaveLength(1)

    // 3. Past its deadline no block can settle it: the purchase is paid afresh, from the USDC the
    // first recall brought. This time the facilitator settles and its answer is lost.
    await passTime(expiresAt)
    facilitator.setRule((url) => (url.endsWith('/settle') ? { dropAnswer: true } : undefined))
    const third = await shop.pay(shop.url(path))
    expect(third.status).not.toBe(200)
    expect(await merchantBalance()).toBe(merchantStart + charge)
    // The expired one forgotten, this one's outcome unknown.
    expect(attachment.state().paymentsOutcomeUnknown).toBe(1)
    facilitator.setRule(undefined)

    // 4. The same purchase again: its nonce is used on chain. Refused, and charged once.
    const settled = findVaultError(await shop.attempt(path))
    expect(settled).toBeInstanceOf(PaymentOutcomeError)
    expect(settled).toMatchObject({ code: 'PAYMENT_ALREADY_SETTLED', retryable: false })
    expect(await merchantBalance()).toBe(merchantStart + charge)
    const [recall] = recalls as [Recall]
    expect(recalls).toHaveLength(1)
    expect((await withdrawalsSince(from)).map((log) => log.transactionHash)).toEqual([
      recall.txHash,
    ])
    expect(await buyerLiquid()).toBe(recall.amount - charge)
    expect(problems).toEqual([])
  })

  if (chain !== 'base') return

  it('a paid request whose connection drops after the seller settled: the same purchase waits for that answer, then is refused (PAYMENT_ALREADY_SETTLED); charged once, one recall', async () => {
    let dropAnswers = false
    /** The network under the buyer's x402 fetch: the paid request reaches the seller; its answer may not. */
    const network: typeof fetch = async (input, init) => {
      const response = await fetch(input, init)
      const paid = new Request(input, init).headers.has('PAYMENT-SIGNATURE')
      if (!paid || !dropAnswers) return response
      await response.arrayBuffer()
      throw new TypeError('fetch failed', { cause: new Error('socket hang up') })
    }
    const shop = await openShop({ buyerFetch: network })
    const price = parseUsdc('0.5')
    const merchantStart = await merchantBalance()
    const from = await nextBlock()
    // With the HTTP client x402's fetch wrapper drives, which reports every answer it gets.
    const { recalls, problems } = attach(shop.client, { httpClient: shop.httpClient })
    dropAnswers = true
    const lost = await shop.attempt('/paid')
    expect(lost).toBeInstanceOf(TypeError)
    expect(await merchantBalance()).toBe(merchantStart + price)
    dropAnswers = false

    const started = performance.now()
    const refused = findVaultError(await shop.attempt('/paid'))
    const waited = performance.now() - started
    expect(await merchantBalance()).toBe(merchantStart + price)
    expect(refused).toMatchObject({ code: 'PAYMENT_ALREADY_SETTLED' })
    // It gave the earlier payment's answer its time: a concurrent payment hears its settlement at once.
    expect(waited).toBeGreaterThanOrEqual(answerGraceMs)
    expect(recalls).toHaveLength(1)
    expect((await withdrawalsSince(from)).length).toBe(1)
    expect(await buyerLiquid()).toBe((recalls[0]?.amount ?? 0n) - price)
    expect(problems).toEqual([])
  })

  it('a recall whose send answer is lost still counts against maxPerWindow: no 1.0 USDC through a 0.9 cap', async () => {
    const shop = await openShop()
    const from = await nextBlock()
    const { attachment, recalls, problems } = attach(shop.client, {
      maxPerWindow: '0.9',
      onOverCap: 'block',
      retry: { initialDelayMs: 50 },
    })
    // The RPC sends the withdrawal, and its answer is lost: the recall reads again and finds its USDC.
    buyerRpc.setFault({ kind: 'drop-answer' }, { methods: ['eth_sendRawTransaction'], times: 1 })
    expect((await shop.pay(shop.url('/paid'))).status).toBe(200)
    expect(problems).toMatchObject([
      { phase: 'withdraw', willRetry: true, error: { code: 'SEND_OUTCOME_UNKNOWN' } },
    ])
    const [withdrawal, ...more] = await withdrawalsSince(from)
    expect(more).toEqual([])
    expect(withdrawal?.args.usdcReturned).toBeGreaterThanOrEqual(parseUsdc('0.5'))

    // A second payment would take the recalls to 1.0 USDC: refused, nothing more withdrawn.
    const second = await shop.attempt('/paid')
    const recalled = sum(
      (await withdrawalsSince(from)).map((log) => log.args.usdcReturned as bigint),
    )
    expect(recalled, 'USDC recalled within a 0.9 USDC window').toBeLessThanOrEqual(parseUsdc('0.9'))
    expect(findVaultError(second)).toMatchObject({
      code: 'PAYMENT_OVER_CAP',
      details: { cap: 'maxPerWindow', recalledInWindow: parseUsdc('0.5') },
    })
    // The first was never confirmed to this process, so no onRecall; the window counts it all the same.
    expect(recalls).toEqual([])
    expect(attachment.state().recalledInWindow).toBe(parseUsdc('0.5'))
  })

  it('typed errors through @x402/fetch: findVaultError tells PaymentPolicyError and PaymentFundingError apart; onNonFatalError hears only of problems that did not stop a payment', async () => {
    const policy = await openShop()
    const blocked = attach(policy.client, { maxPerPayment: '0.25', onOverCap: 'block' })
    const overCap = await policy.attempt('/paid')
    // x402's fetch wrapper rethrows a plain Error, its message prefixed, with no cause…
    expect(overCap).toBeInstanceOf(Error)
    expect(overCap).not.toBeInstanceOf(PaymentPolicyError)
    expect((overCap as Error).cause).toBeUndefined()
    expect((overCap as Error).message).toMatch(/^Failed to create payment payload: .*maxPerPayment/)
    // …in which findVaultError finds the typed one, code, details and all.
    const policyError = findVaultError(overCap)
    expect(policyError).toBeInstanceOf(PaymentPolicyError)
    expect(policyError).toMatchObject({
      code: 'PAYMENT_OVER_CAP',
      details: { cap: 'maxPerPayment', amount: parseUsdc('0.5'), limit: parseUsdc('0.25') },
    })
    await blocked.attachment.detach()

    // 2 000 USDC: more than the wallet and its position together.
    const pricey = await openShop({ price: '2000' })
    const funding = attach(pricey.client)
    const short = await pricey.attempt('/paid')
    const fundingError = findVaultError(short)
    expect(fundingError).toBeInstanceOf(PaymentFundingError)
    expect(fundingError).toMatchObject({ code: 'BUYER_FUNDS_SHORT' })
    // The failed withdrawal that stopped it is its cause, not a non-fatal problem.
    expect(fundingError?.cause).toBeInstanceOf(Error)
    expect(blocked.problems).toEqual([])
    expect(funding.problems).toEqual([])
    await funding.attachment.detach()

    // A recall that fails while the wallet covers the payment anyway: the payment goes on, and the
    // failure is reported, each retry and the last.
    const { usdcReturned } = await buyerVault.withdrawAndWait({ amount: parseUsdc('0.6') })
    const shop = await openShop()
    const survived = attach(shop.client, {
      reserve: '0.5',
      retry: { maxAttempts: 2, initialDelayMs: 20 },
    })
    buyerRpc.setFault({ kind: 'status', status: 429 }, { methods: ['eth_sendRawTransaction'] })
    expect((await shop.pay(shop.url('/paid'))).status).toBe(200)
    expect(survived.problems).toMatchObject([
      { phase: 'withdraw', willRetry: true, error: { code: 'RPC_RATE_LIMITED' } },
      { phase: 'withdraw', willRetry: false, error: { code: 'RPC_RATE_LIMITED' } },
    ])
    expect(await buyerLiquid()).toBe(usdcReturned - parseUsdc('0.5'))
  })

  it('a liquid wallet: no recall, no withdrawal', async () => {
    const shop = await openShop()
    const { usdcReturned } = await buyerVault.withdrawAndWait({ amount: parseUsdc('2') })
    const from = await nextBlock()
    const { recalls } = attach(shop.client)
    const responses = await Promise.all(
      Array.from({ length: 3 }, () => shop.pay(shop.url('/paid'))),
    )
    expect(responses.map((response) => response.status)).toEqual([200, 200, 200])
    expect(recalls).toEqual([])
    expect(await withdrawalsSince(from)).toEqual([])
    expect(await buyerLiquid()).toBe(usdcReturned - parseUsdc('1.5'))
  })

  /**
   * The buyer's balance reads (`eth_call`s through its RPC proxy) that went out while each payment
   * waited in `attachToClient`'s hook: from a hook registered before attachToClient's to one after it.
   */
  function readsWhileWaiting(client: Parameters<VaultClient['attachToClient']>[0]) {
    const sent: number[] = []
    buyerRpc.setInterceptor((calls) => {
      if (calls.some((call) => call.method === 'eth_call')) sent.push(performance.now())
      return undefined
    })
    cleanups.push(async () => buyerRpc.setInterceptor(undefined))
    const { attached, waits } = timeHookWaits(client, () => attach(client))
    const perPayment = () =>
      waits.map(([from, to]) => sent.filter((at) => at >= from && at <= to).length)
    return { ...attached, perPayment }
  }

  it('a liquid wallet that pays in a loop waits for no balance read: one read sent ahead serves the next payments, and a payment it leaves short reads afresh', async () => {
    const shop = await openShop()
    const { usdcReturned } = await buyerVault.withdrawAndWait({ amount: parseUsdc('2') })
    const { recalls, problems, perPayment } = readsWhileWaiting(shop.client)
    const times: number[] = []
    for (let payment = 0; payment < 4; payment++) {
      expect((await shop.pay(shop.url('/paid'))).status).toBe(200)
      times.push(performance.now())
    }
    // 1: a fresh read. 2: a fresh read, and it comes soon after 1's outcome: a loop, so its own
    // outcome sends a read ahead. 3: uses that read. 4: the read ahead, sent when 2 settled, counts 2
    // and 3 as unspent (neither need show in it), which leaves less than the price: it reads afresh.
    expect(perPayment(), `payments ended at ${times.map(Math.round)} ms`).toEqual([1, 1, 0, 1])
    expect((times[3] as number) - (times[1] as number)).toBeLessThan(readAheadFreshMs)
    expect(recalls).toEqual([])
    expect(problems).toEqual([])
    expect(await buyerLiquid()).toBe(usdcReturned - parseUsdc('2'))
  })

  it('a write from the wallet between payments (a deposit by any vault client): the next payment does not trust the read sent ahead, and recalls', async () => {
    const shop = await openShop()
    // Enough for the vault's minimum deposit (10 USDC) after two payments.
    await buyerVault.withdrawAndWait({ amount: parseUsdc('12') })
    const { recalls, problems, perPayment } = readsWhileWaiting(shop.client)
    for (let payment = 0; payment < 2; payment++) {
      expect((await shop.pay(shop.url('/paid'))).status).toBe(200)
    }
    const loopEnded = performance.now()
    // The read ahead (sent when payment 2 settled) saw 11 USDC; a deposit of all of it follows.
    await buyerVault.depositAndWait({ amount: await buyerLiquid() })
    const from = await nextBlock()
    expect((await shop.pay(shop.url('/paid'))).status).toBe(200)
    // Still within the read's freshness: only the write made the payment read again.
    expect(performance.now() - loopEnded).toBeLessThan(readAheadFreshMs)
    expect(perPayment()[2]).toBeGreaterThan(0)
    expect(recalls).toHaveLength(1)
    expect(recalls[0]).toMatchObject({ requested: parseUsdc('0.5'), walletBalance: 0n })
    expect((await withdrawalsSince(from)).map((log) => log.transactionHash)).toEqual([
      recalls[0]?.txHash,
    ])
    expect(problems).toEqual([])
  })

  it('policy: a payee outside the allowlist pays from liquid funds without a recall; over maxPerPayment with block is refused before signing', async () => {
    const shop = await openShop()
    const { usdcReturned } = await buyerVault.withdrawAndWait({ amount: parseUsdc('1') })
    const from = await nextBlock()
    const other = privateKeyToAccount(devnet.accounts.deployer.privateKey).address
    const skipping = attach(shop.client, { allowedPayTo: [other] })
    expect((await shop.pay(shop.url('/paid'))).status).toBe(200)
    expect(skipping.recalls).toEqual([])
    await skipping.attachment.detach()

    // Origins: the request's own URL, as x402's HTTP client saw it, not what the 402 claims.
    const elsewhere = buyerClient(devnet, { maxAmountPerPayment: parseUsdc('1') })
    const offList = attach(elsewhere.client, {
      allowedOrigins: ['https://api.example.com'],
      httpClient: elsewhere.httpClient,
    })
    expect((await elsewhere.pay(shop.url('/paid'))).status).toBe(200)
    expect(offList.recalls).toEqual([])
    await offList.attachment.detach()
    const listed = buyerClient(devnet, { maxAmountPerPayment: parseUsdc('1') })
    const onList = attach(listed.client, {
      allowedOrigins: [new URL(shop.url('/')).origin],
      httpClient: listed.httpClient,
    })
    expect((await listed.pay(shop.url('/paid'))).status).toBe(200)
    // What the first withdrawal brought beyond its amount (rounding, the buyer's) is not recalled again.
    const left = usdcReturned - parseUsdc('1')
    expect(onList.recalls).toMatchObject([
      { requested: parseUsdc('0.5') - left, walletBalance: left },
    ])
    await onList.attachment.detach()

    const blocking = buyerClient(devnet)
    attach(blocking.client, { maxPerPayment: '0.25', onOverCap: 'block' })
    // Through x402's client the typed error comes out as it is…
    const unpaid = await fetch(shop.url('/paid'))
    const required = decodePaymentRequiredHeader(unpaid.headers.get('PAYMENT-REQUIRED') as string)
    const refused = await expectVaultError(
      blocking.client.createPaymentPayload(required),
      'PAYMENT_OVER_CAP',
    )
    expect(refused).toBeInstanceOf(PaymentPolicyError)
    expect(refused.details).toMatchObject({ cap: 'maxPerPayment', amount: parseUsdc('0.5') })
    // …and x402's fetch wrapper rethrows it with its message.
    await expect(blocking.pay(shop.url('/paid'))).rejects.toThrow(
      /above maxPerPayment \(0\.25 USDC\)/,
    )
    expect((await withdrawalsSince(from)).length).toBe(1)
    expect(await buyerLiquid()).toBe(left + (onList.recalls[0]?.amount ?? 0n) - parseUsdc('0.5'))
  })

  it('maxPerWindow holds across concurrent payments: the recalls stay within it, the rest are refused', async () => {
    const shop = await openShop()
    const from = await nextBlock()
    const { recalls } = attach(shop.client, { maxPerWindow: '1.5', onOverCap: 'block' })
    const outcomes = await Promise.allSettled(
      Array.from({ length: 5 }, () => shop.pay(shop.url('/paid'))),
    )
    const paid = outcomes.filter((o) => o.status === 'fulfilled' && o.value.status === 200)
    const refused = outcomes.filter((o) => o.status === 'rejected')
    expect(paid.length + refused.length).toBe(5)
    expect(paid.length).toBeGreaterThanOrEqual(2)
    for (const outcome of refused) {
      expect(String((outcome as PromiseRejectedResult).reason)).toMatch(
        /past maxPerWindow \(1\.5 USDC/,
      )
    }
    const recalled = sum(
      (await withdrawalsSince(from)).map((log) => log.args.usdcReturned as bigint),
    )
    expect(recalled).toBe(sum(recalls.map((recall) => recall.amount)))
    // What the recalls asked for stays within the window; each brought at least that.
    expect(sum(recalls.map((recall) => recall.requested))).toBeLessThanOrEqual(parseUsdc('1.5'))
    for (const recall of recalls) expect(recall.amount).toBeGreaterThanOrEqual(recall.requested)
    expect(await buyerLiquid()).toBe(recalled - BigInt(paid.length) * parseUsdc('0.5'))
  })

  it('a vault that cannot pay out, or funds short in total: aborted before signing with the typed error; nothing moves', async () => {
    const shop = await openShop({ price: '2000' })
    const from = await nextBlock()
    const merchantStart = await merchantBalance()
    const sharesBefore = await buyerShares()
    const { client } = shop
    const { problems } = attach(client)
    const required = async () => {
      const unpaid = await fetch(shop.url('/paid'))
      return decodePaymentRequiredHeader(unpaid.headers.get('PAYMENT-REQUIRED') as string)
    }
    // 2 000 USDC: more than the buyer's 1 000 in the vault and its empty wallet together.
    const short = await expectVaultError(
      client.createPaymentPayload(await required()),
      'BUYER_FUNDS_SHORT',
    )
    expect(short).toBeInstanceOf(PaymentFundingError)
    expect(short.details).toMatchObject({ amount: parseUsdc('2000'), walletBalance: 0n })

    // Both venues stop paying out: Aave's reserve paused, Morpho's withdrawals capped at 0.
    const aave = parseAbi(['function getConfiguration(address) view returns ((uint256 data))'])
    const { data } = await t.publicClient.readContract({
      address: devnet.addresses.aavePool,
      abi: aave,
      functionName: 'getConfiguration',
      args: [devnet.addresses.usdc],
    })
    await t.asDeployer(devnet.addresses.aavePool, 'function setConfiguration(uint256)', [
      data | (1n << 60n),
    ])
    await t.asDeployer(devnet.addresses.morphoVault, 'function setMaxWithdrawCap(uint256)', [0n])
    const cheap = await openShop()
    attach(cheap.client)
    const paused = await expectVaultError(
      cheap.client.createPaymentPayload(
        decodePaymentRequiredHeader(
          (await fetch(cheap.url('/paid'))).headers.get('PAYMENT-REQUIRED') as string,
        ),
      ),
      'VAULT_CANNOT_DELIVER',
    )
    expect(paused.details).toMatchObject({ amount: parseUsdc('0.5'), walletBalance: 0n })
    await expect(cheap.pay(cheap.url('/paid'))).rejects.toThrow(/aborted before signing/)
    // The failed withdrawal is each error's cause, not a problem survived: onNonFatalError hears of none.
    expect(short.cause).toMatchObject({ code: 'UNSERVICEABLE_AMOUNT' })
    expect(short.details).toMatchObject({ reason: 'UNSERVICEABLE_AMOUNT', step: 'withdraw' })
    expect(paused.cause).toMatchObject({ code: paused.details.reason })
    expect(problems).toEqual([])
    expect(await withdrawalsSince(from)).toEqual([])
    expect(await buyerShares()).toBe(sharesBefore)
    expect(await buyerLiquid()).toBe(0n)
    expect(await merchantBalance()).toBe(merchantStart)
  })

  it('RPC trouble while recalling: the send is retried from a fresh read; one withdrawal, no double', async () => {
    const shop = await openShop()
    const from = await nextBlock()
    const { recalls, problems } = attach(shop.client, { retry: { initialDelayMs: 50 } })
    buyerRpc.setFault(
      { kind: 'status', status: 503 },
      { methods: ['eth_sendRawTransaction'], times: 1 },
    )
    expect((await shop.pay(shop.url('/paid'))).status).toBe(200)
    expect(problems).toMatchObject([{ phase: 'withdraw', willRetry: true }])
    expect(recalls).toHaveLength(1)
    expect((await withdrawalsSince(from)).map((log) => log.transactionHash)).toEqual([
      recalls[0]?.txHash,
    ])
    expect(await buyerLiquid()).toBe((recalls[0]?.amount ?? 0n) - parseUsdc('0.5'))
  })

  it('a payment that fails after its recall leaves the USDC liquid; redeposit sweeps it back; detach() makes the hooks no-ops', async () => {
    const shop = await openShop({ price: '10' })
    const from = await nextBlock()
    const redeposits: IdleDeposit[] = []
    let redeposited = () => {}
    const done = new Promise<void>((resolve) => {
      redeposited = resolve
    })
    const { attachment, recalls } = attach(shop.client, {
      redeposit: {
        minIdleThreshold: '0',
        debounceMs: 20,
        onIdleDeposit: (deposit) => {
          redeposits.push(deposit)
          redeposited()
        },
      },
    })
    // The handler fails: x402 settles nothing, and the recalled 10 USDC stay in the wallet…
    expect((await shop.pay(shop.url('/broken'))).status).toBe(500)
    expect(recalls).toHaveLength(1)
    // …until the redeposit sweeps them back, once no payment is in flight.
    await done
    expect(redeposits[0]).toMatchObject({ idleAmount: recalls[0]?.amount, reserveFloor: 0n })
    expect(await buyerLiquid()).toBe(0n)
    expect(attachment.state()).toMatchObject({ committed: 0n, paymentsInFlight: 0 })

    await attachment.detach()
    const after = await nextBlock()
    // No recall now: x402 signs with an empty wallet and the facilitator refuses the payment.
    expect((await shop.pay(shop.url('/paid'))).status).toBe(402)
    expect(recalls).toHaveLength(1)
    expect(await withdrawalsSince(after)).toEqual([])
    expect((await withdrawalsSince(from)).length).toBe(1)
  })

  it("redeposit's former onRedeposit, deprecated, still hears of its idle deposit", async () => {
    const shop = await openShop({ price: '10' })
    let heard = (_deposit: IdleDeposit) => {}
    const deposit = new Promise<IdleDeposit>((resolve) => {
      heard = resolve
    })
    const { recalls } = attach(shop.client, {
      redeposit: { minIdleThreshold: '0', debounceMs: 20, onRedeposit: (made) => heard(made) },
    })
    expect((await shop.pay(shop.url('/broken'))).status).toBe(500)
    expect(await deposit).toMatchObject({ deposited: true, idleAmount: recalls[0]?.amount })
    expect(await buyerLiquid()).toBe(0n)
  })
})
