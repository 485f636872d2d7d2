/**
 * Batched micropayments (`scheme: 'batch-settlement'`) end to end on the devnet: x402's stock batch-settlement
 * buyer (its fetch wrapper and batch-settlement EVM client scheme, spend controls on; on Base Sepolia opted in to
 * the vault's USDC) pays a `createPaywall` route at 0.001 USDC; the first request deposits into x402's escrow,
 * the others sign vouchers that move nothing; the paywall runs x402's channel manager, which claims the vouchers
 * and settles them to the merchant through the devnet's facilitator, and the sweeper hears of the settlement
 * alone. Amounts are checked to the base unit on chain.
 */
import { decodePaymentRequiredHeader } from '@x402/core/http'
import { InMemoryChannelStorage } from '@x402/evm/batch-settlement/server'
import { Hono } from 'hono'
import { erc20Abi, type Hex } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterEach, describe, expect, it } from 'vitest'
import { escrowActivity, nextEscrowEvent } from '../../harness/batchSettlement.js'
import type { CountingProxy } from '../../harness/countingProxy.js'
import {
  approvePermit2Once,
  depositedIn,
  merchantVault,
  receiptsFrom,
  sweepEvents,
  usdcBalance,
} from '../../harness/merchant.js'
import { buyerClient, paymentResponseOf } from '../../harness/merchantApps.js'
import type { Devnet } from '../../src/devnet/startDevnet.js'
import { type AttachToResourceServerOptions, parseUsdc, type Sweeper } from '../../src/index.js'
import { createPaywall, createPostgresChannelStorage } from '../../src/plugins/hono.js'
import type { PaywallBatchSettlement } from '../../src/plugins/paywallOptions.js'
import { x402BatchSettlementAbi, x402BatchSettlementAddress } from '../../src/sdk/shared.js'
import { type DevnetClients, useMerchantDevnet } from '../support/devnet.js'
import { startPostgres } from '../support/postgres.js'

const chains = [{ chain: 'base-sepolia' }, { chain: 'base' }] as const

/** The route's price: 0.001 USDC. */
const price = 1_000n

type SweepOptions = Omit<AttachToResourceServerOptions, 'wallet'>

describe.each(chains)('batch-settlement routes on $chain', (setting) => {
  let devnet: Devnet
  let t: DevnetClients
  let proxy: CountingProxy
  useMerchantDevnet({ chain: setting.chain, facilitator: true }, (m) => {
    ;({ devnet, t, proxy } = m)
  })

  const cleanups: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })

  const network = () => `eip155:${devnet.chainId}`
  const merchant = () => devnet.accounts.merchant.address
  const buyer = () => devnet.accounts.buyer.address
  const facilitator = () => devnet.accounts.facilitator.address
  const merchantBalance = () => usdcBalance(devnet, merchant())
  const nextBlock = async () => (await t.publicClient.getBlockNumber({ cacheTime: 0 })) + 1n

  /** x402's stock batch-settlement buyer: spend controls on, on Base Sepolia opted in to the vault's USDC. */
  const batchBuyer = (appFetch: typeof fetch, privateKey?: Hex) =>
    buyerClient(devnet, {
      fetch: appFetch,
      privateKey,
      spendControls: setting.chain === 'base-sepolia' ? 'opt-in' : 'stock',
      scheme: 'batch-settlement',
    }).pay

  /** A Hono shop selling `GET /tick` at 0.001 USDC with batch-settlement, its sweeper's events recorded. */
  async function openShop(sweep: SweepOptions | false, batchSettlement: PaywallBatchSettlement) {
    const events = sweepEvents()
    const paywall = await createPaywall({
      vault: merchantVault(devnet, proxy.url),
      payTo: merchant(),
      facilitator: { url: devnet.facilitatorUrl as string },
      routes: {
        'GET /tick': {
          price: '0.001',
          scheme: 'batch-settlement',
          description: 'One tick',
          mimeType: 'application/json',
        },
      },
      sweep:
        sweep === false
          ? false
          : {
              ...sweep,
              onIdleDeposit: events.onIdleDeposit,
              onNonFatalError: events.onNonFatalError,
            },
      batchSettlement,
    })
    cleanups.push(() => paywall.close())
    const app = new Hono()
    app.use(paywall.middleware)
    app.get('/tick', (c) => c.json({ tick: true }))
    const appFetch = ((input: RequestInfo | URL, init?: RequestInit) =>
      app.fetch(new Request(input, init))) as typeof fetch
    return { paywall, events, appFetch, url: 'http://merchant.test/tick' }
  }

  const escrowEvents = (fromBlock: bigint) => escrowActivity(devnet, fromBlock)

  /** A new buyer with 1 USDC (and, on Base Sepolia, ETH for its one Permit2 approval, which it sends). */
  async function newBuyer(): Promise<Hex> {
    const key = generatePrivateKey()
    const address = privateKeyToAccount(key).address
    const hash = await t.walletFor(t.buyer).writeContract({
      address: devnet.addresses.usdc,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [address, parseUsdc('1')],
    })
    expect((await t.publicClient.waitForTransactionReceipt({ hash })).status).toBe('success')
    await t.testClient.setBalance({ address, value: 10n ** 18n })
    await approvePermit2Once(devnet, key)
    return key
  }

  it('a stock batch-settlement buyer pays 5 times at 0.001; the vouchers move nothing; close() claims and settles exactly 0.005 to payTo, and the sweeper is fed that settlement alone and deposits it', async () => {
    const requests = 5
    const start = await merchantBalance()
    const buyerStart = await usdcBalance(devnet, buyer())
    const firstBlock = await nextBlock()
    const reserve = start - parseUsdc('10')
    // The jobs' intervals are far off: only close() claims and settles here.
    const shop = await openShop(
      { minIdleThreshold: '10', reserve },
      { claimIntervalMs: 3_600_000, settleIntervalMs: 3_600_000 },
    )

    const unpaid = await shop.appFetch(shop.url)
    expect(unpaid.status).toBe(402)
    const required = decodePaymentRequiredHeader(unpaid.headers.get('PAYMENT-REQUIRED') as string)
    expect(required.accepts[0]).toMatchObject({
      scheme: 'batch-settlement',
      network: network(),
      asset: devnet.addresses.usdc,
      amount: price.toString(),
      payTo: merchant(),
    })
    expect(await unpaid.json()).toMatchObject({
      message: expect.stringMatching(/^Pay 0\.001 USDC .* with x402's batch-settlement scheme/),
      payment: { scheme: 'batch-settlement', amount: price.toString() },
    })

    const pay = batchBuyer(shop.appFetch)
    const settlements = []
    for (let request = 0; request < requests; request++) {
      const paid = await pay(shop.url)
      expect(paid.status).toBe(200)
      expect(await paid.json()).toEqual({ tick: true })
      settlements.push(paymentResponseOf(paid))
    }
    // The first request deposits into the escrow; the others are vouchers, with no transaction.
    expect(settlements.map((settled) => settled.success)).toEqual(Array(requests).fill(true))
    expect(settlements[0]?.transaction).toMatch(/^0x[0-9a-f]{64}$/)
    expect(settlements.slice(1).map((settled) => settled.transaction)).toEqual(
      Array(requests - 1).fill(''),
    )
    const deposit = 10n * price
    expect(buyerStart - (await usdcBalance(devnet, buyer()))).toBe(deposit)
    // Nothing is the merchant's yet, and the sweeper heard of nothing: a deposit is no income.
    await (shop.paywall.sweeper as Sweeper).idle()
    expect(await merchantBalance()).toBe(start)
    expect(shop.events.deposits).toEqual([])

    await shop.paywall.close()
    const charged = price * BigInt(requests)
    const { settled, claimed } = await escrowEvents(firstBlock)
    expect(claimed.map((log) => log.claimAmount)).toEqual([charged])
    expect(settled.map(({ txHash: _, ...entry }) => entry)).toEqual([
      {
        receiver: merchant(),
        token: devnet.addresses.usdc,
        sender: facilitator(),
        amount: charged,
      },
    ])
    // The sweeper was fed the settlement, with what the chain shows reached payTo, and deposited it.
    expect(shop.events.deposits).toHaveLength(1)
    expect(shop.events.deposits[0]).toMatchObject({
      deposited: true,
      idleAmount: parseUsdc('10') + charged,
      walletBalance: start + charged,
      settlements: [
        {
          txHash: settled[0]?.txHash,
          amount: charged,
          payer: undefined,
          scheme: 'batch-settlement',
        },
      ],
    })
    const merchantReceipts = await receiptsFrom(devnet, merchant(), firstBlock)
    expect(depositedIn(devnet, merchantReceipts, merchant())).toEqual([parseUsdc('10') + charged])
    expect(await merchantBalance()).toBe(reserve)
    // Every unit accounted for: the buyer's deposit less the charges waits in the escrow for the buyer.
    expect(buyerStart - (await usdcBalance(devnet, buyer()))).toBe(deposit)
    expect(shop.events.problems).toEqual([])

    // The merchant's ledger books the settle as one x402 row paying the one voucher claimed (the
    // channel's latest, covering the 5 requests), then the sweep; the buyer's books its channel deposit.
    const ledger = await t.readOnly.getLedger({ wallet: merchant(), fromBlock: firstBlock })
    expect(ledger.reconciled).toBe(true)
    const rows = (entries: typeof ledger.entries) =>
      entries.map((entry) => [
        entry.kind,
        entry.direction,
        entry.x402Scheme,
        entry.counterparty,
        entry.amount,
        entry.vouchers,
      ])
    expect(rows(ledger.entries)).toEqual([
      ['x402', 'in', 'batch-settlement', x402BatchSettlementAddress, charged, claimed.length],
      ['sweep', 'out', null, devnet.addresses.router, parseUsdc('10') + charged, null],
    ])
    expect(ledger.entries[0]?.txHash).toBe(settled[0]?.txHash)
    expect(ledger.totals).toMatchObject({ receivedX402: charged, channelDeposits: 0n })
    const buyerLedger = await t.readOnly.getLedger({ wallet: buyer(), fromBlock: firstBlock })
    expect(buyerLedger.reconciled).toBe(true)
    expect(rows(buyerLedger.entries)).toEqual([
      ['channel-deposit', 'out', null, expect.any(String), deposit, null],
    ])
    expect(buyerLedger.totals).toMatchObject({ channelDeposits: deposit, sentOther: 0n })
  })

  it('the jobs claim and settle on their intervals: the merchant receives exactly the charges, and each settlement, no voucher, reaches the sweeper', async () => {
    const requests = 4
    const charged = price * BigInt(requests)
    const start = await merchantBalance()
    const firstBlock = await nextBlock()
    // 10 USDC become idle once every charge has reached the wallet, not before: the one sweep reports
    // every settlement the sweeper was fed until then.
    const reserve = start + charged - parseUsdc('10')
    const shop = await openShop(
      { minIdleThreshold: '10', reserve, debounceMs: 0 },
      { claimIntervalMs: 200, settleIntervalMs: 300 },
    )
    const pay = batchBuyer(shop.appFetch)
    for (let request = 0; request < requests; request++) {
      expect((await pay(shop.url)).status).toBe(200)
    }
    await shop.events.deposited()
    await shop.paywall.close()

    const { settled } = await escrowEvents(firstBlock)
    expect(settled.reduce((sum, entry) => sum + entry.amount, 0n)).toBe(charged)
    // One settlement fed per settle transaction, with its amount, and nothing else.
    const fed = shop.events.deposits.flatMap((deposit) => deposit.settlements)
    expect(
      fed.map((settlement) => [settlement.txHash, settlement.amount, settlement.scheme]),
    ).toEqual(settled.map((entry) => [entry.txHash, entry.amount, 'batch-settlement']))
    expect(shop.events.deposits).toMatchObject([{ deposited: true, idleAmount: parseUsdc('10') }])
    expect(await merchantBalance()).toBe(reserve)
    expect(shop.events.problems).toEqual([])
  })

  it('a channel idle past refundIdleAfterMs is refunded to its buyer: it gets back exactly its deposit less what was claimed; the merchant’s wallet, books and sweeper see the settle alone, never the refund', async () => {
    const requests = 3
    const charged = price * BigInt(requests)
    const storage = new InMemoryChannelStorage()
    const start = await merchantBalance()
    const buyerStart = await usdcBalance(devnet, buyer())
    const firstBlock = await nextBlock()
    // A seller that never refunds claims and settles the charges at close().
    const reserve = start + charged - parseUsdc('10')
    const seller = await openShop(
      { minIdleThreshold: '10', reserve, debounceMs: 0 },
      { storage, refundIdleAfterMs: false, claimIntervalMs: 3_600_000 },
    )
    const pay = batchBuyer(seller.appFetch)
    for (let request = 0; request < requests; request++) {
      expect((await pay(seller.url)).status).toBe(200)
    }
    const deposit = buyerStart - (await usdcBalance(devnet, buyer()))
    expect(deposit).toBeGreaterThan(charged)
    await seller.paywall.close()
    expect(seller.events.deposits).toHaveLength(1)
    const [channel] = await storage.list()
    expect(channel?.totalClaimed).toBe(charged.toString())
    // x402's scheme writes a voucher's channel with the totalClaimed it read when it verified it: a
    // claim mined meanwhile is forgotten in the storage. Here the storage forgets the whole claim, and
    // x402's refund, which builds a claim from the stored state, would carry a row that claims nothing.
    await storage.updateChannel(channel?.channelId as string, (current) =>
      current ? { ...current, totalClaimed: '0' } : current,
    )

    // The seller restarts with idle refunds on; the channel has been idle since the last request.
    const refundFrom = await nextBlock()
    const refundSeen = nextEscrowEvent(devnet, 'Refunded', refundFrom)
    const restarted = await openShop(
      { minIdleThreshold: '10', reserve, debounceMs: 0 },
      { storage, refundIdleAfterMs: 1_000, claimIntervalMs: 100, settleIntervalMs: 150 },
    )
    const { txHash: refundTx, blockNumber: refundBlock } = await refundSeen
    await restarted.paywall.close()

    const escrow = await escrowActivity(devnet, firstBlock)
    expect(escrow.refunded).toEqual([
      {
        channelId: channel?.channelId,
        sender: facilitator(),
        amount: deposit - charged,
        txHash: refundTx,
      },
    ])
    // The buyer paid exactly the charges; nothing of its deposit is left in the escrow.
    expect(buyerStart - (await usdcBalance(devnet, buyer()))).toBe(charged)
    const [balance, totalClaimed] = await t.publicClient.readContract({
      address: x402BatchSettlementAddress,
      abi: x402BatchSettlementAbi,
      functionName: 'channels',
      args: [channel?.channelId as Hex],
    })
    expect([balance, totalClaimed]).toEqual([charged, charged])
    // One claim of the charges, before the restart, and no claim row since: none claimed nothing.
    expect(escrow.claimed.map((log) => log.claimAmount)).toEqual([charged])
    expect(escrow.claimRows).toBe(1)
    expect(await storage.list()).toEqual([])
    // The merchant received the settle alone, and its sweeper heard of nothing else.
    expect(escrow.settled.map((entry) => entry.amount)).toEqual([charged])
    expect(seller.events.deposits[0]?.settlements.map((settled) => settled.txHash)).toEqual([
      escrow.settled[0]?.txHash,
    ])
    expect(restarted.events.deposits).toEqual([])
    expect([...seller.events.problems, ...restarted.events.problems]).toEqual([])
    expect(await merchantBalance()).toBe(reserve)
    const books = await t.vault.getLedger({
      wallet: merchant(),
      fromBlock: refundFrom,
      toBlock: refundBlock,
    })
    expect(books.entries).toEqual([])
    // The buyer's books: its channel deposit out, the refund in, and the charges between them.
    const buyerBooks = await t.vault.getLedger({ wallet: buyer(), fromBlock: firstBlock })
    expect(buyerBooks.reconciled).toBe(true)
    expect(
      buyerBooks.entries.map((entry) => [entry.kind, entry.direction, entry.amount, entry.txHash]),
    ).toEqual([
      ['channel-deposit', 'out', deposit, expect.any(String)],
      ['channel-refund', 'in', deposit - charged, refundTx],
    ])
    expect(buyerBooks.totals).toMatchObject({
      channelDeposits: deposit,
      channelRefunds: deposit - charged,
    })
  })

  it('an idle channel whose deposit was all charged is claimed and left in place: it keeps no other idle channel from its refund, and no refund of nothing is tried', async () => {
    const spender = await newBuyer()
    const storage = new InMemoryChannelStorage()
    const start = await merchantBalance()
    const lightStart = await usdcBalance(devnet, buyer())
    const firstBlock = await nextBlock()
    // No sweep: nothing here reaches 10 idle USDC; the sweeper's problems are the paywall's.
    const shop = await openShop(
      { minIdleThreshold: '10', reserve: start + parseUsdc('10') },
      { storage, claimIntervalMs: 100, settleIntervalMs: 150, refundIdleAfterMs: 1_000 },
    )
    // The first buyer spends its whole deposit (x402's buyer deposits ten prices); its channel is stored first.
    const spend = batchBuyer(shop.appFetch, spender)
    for (let request = 0; request < 10; request++) {
      expect((await spend(shop.url)).status).toBe(200)
    }
    const refundSeen = nextEscrowEvent(devnet, 'Refunded', firstBlock)
    expect((await batchBuyer(shop.appFetch)(shop.url)).status).toBe(200)
    const deposit = lightStart - (await usdcBalance(devnet, buyer()))
    // The light buyer's refund, or the first problem the paywall reports.
    await Promise.race([refundSeen, shop.events.problem(() => true)])
    await shop.paywall.close()

    expect(shop.events.problems.map((problem) => problem.error.message)).toEqual([])
    const escrow = await escrowActivity(devnet, firstBlock)
    const channels = [...new Set(escrow.claimed.map((log) => log.channelId))]
    expect(channels).toHaveLength(2)
    const [spent, light] = channels as [Hex, Hex]
    expect(escrow.refunded).toMatchObject([{ channelId: light, amount: deposit - price }])
    expect(lightStart - (await usdcBalance(devnet, buyer()))).toBe(price)
    expect(escrow.settled.reduce((sum, entry) => sum + entry.amount, 0n)).toBe(11n * price)
    expect((await merchantBalance()) - start).toBe(11n * price)
    expect(escrow.claimRows).toBe(escrow.claimed.length)
    // The spent channel stays in the storage, all claimed: its buyer may top it up and come back.
    expect(
      (await storage.list()).map((channel) => [channel.channelId, channel.totalClaimed]),
    ).toEqual([[spent, (10n * price).toString()]])
  })

  it('two instances share one Postgres: concurrent buyers pay either, both claim jobs run, no voucher is claimed twice, and the merchant receives exactly the charges', async () => {
    const postgres = await startPostgres()
    cleanups.push(postgres.stop)
    const storages = [
      await createPostgresChannelStorage({ url: postgres.url }),
      await createPostgresChannelStorage({ url: postgres.url }),
    ]
    cleanups.push(async () => {
      for (const storage of storages) await storage.close()
    })
    const buyers = [devnet.accounts.buyer.privateKey, await newBuyer(), await newBuyer()]
    const requestsEach = 4
    const start = await merchantBalance()
    const firstBlock = await nextBlock()
    // Both instances claim every 100 ms and settle every 150: their jobs compete for the same channels.
    const shops = await Promise.all(
      storages.map((storage) =>
        openShop(false, { storage, claimIntervalMs: 100, settleIntervalMs: 150 }),
      ),
    )
    // A load balancer in front of the two: each call goes to the next instance.
    let next = 0
    const balanced = ((input: RequestInfo | URL, init?: RequestInit) =>
      (shops[next++ % shops.length] as (typeof shops)[number]).appFetch(
        input,
        init,
      )) as typeof fetch
    await Promise.all(
      buyers.map(async (key) => {
        const pay = batchBuyer(balanced, key)
        for (let request = 0; request < requestsEach; request++) {
          const paid = await pay(shops[0]?.url as string)
          expect(paid.status).toBe(200)
        }
      }),
    )
    await Promise.all(shops.map((shop) => shop.paywall.close()))

    const charged = price * BigInt(requestsEach * buyers.length)
    const { settled, claimed, claimRows } = await escrowEvents(firstBlock)
    expect(settled.reduce((sum, entry) => sum + entry.amount, 0n)).toBe(charged)
    expect((await merchantBalance()) - start).toBe(charged)
    // The ledger books one row per settle, and between them counts every voucher claimed, exactly.
    const ledger = await t.readOnly.getLedger({ wallet: merchant(), fromBlock: firstBlock })
    expect(ledger.reconciled).toBe(true)
    const settles = ledger.entries.filter((entry) => entry.x402Scheme === 'batch-settlement')
    expect(settles.map((entry) => [entry.txHash, entry.amount])).toEqual(
      settled.map((entry) => [entry.txHash, entry.amount]),
    )
    expect(settles.reduce((sum, entry) => sum + (entry.vouchers ?? 0), 0)).toBe(claimed.length)
    expect(ledger.totals.receivedX402).toBe(charged)
    // Each channel claimed exactly its buyer's charges, in rising totals.
    const byChannel = new Map<string, bigint[]>()
    for (const log of claimed) {
      byChannel.set(log.channelId, [...(byChannel.get(log.channelId) ?? []), log.newTotalClaimed])
    }
    expect(byChannel.size).toBe(buyers.length)
    for (const totals of byChannel.values()) {
      expect(totals.at(-1)).toBe(price * BigInt(requestsEach))
      expect(totals).toEqual([...new Set(totals)].sort((a, b) => (a < b ? -1 : 1)))
    }
    // No voucher claimed twice: every row of every claim transaction claimed something new.
    expect(claimRows).toBe(claimed.length)
  })
})
