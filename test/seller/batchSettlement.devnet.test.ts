/**
 * Batched micropayments (`scheme: 'batch-settlement'`) end to end on the devnet: x402's stock batch-settlement
 * buyer (its fetch wrapper and batch-settlement EVM client scheme, spend controls on; on Base Sepolia opted in to
 * the vault's USDC) pays a `createPaywall` route at 0.001 USDC; the first request deposits into x402's escrow,
 * the others sign vouchers that move nothing; the paywall runs x402's channel manager, which claims the vouchers
 * and settles them to the merchant through the devnet's facilitator, and the sweeper hears of the settlement
 * alone. Amounts are checked to the base unit on chain.
 */
import { x402Client, x402HTTPClient } from '@x402/core/client'
import { decodePaymentRequiredHeader } from '@x402/core/http'
import { toClientEvmSigner } from '@x402/evm'
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client'
import { wrapFetchWithPayment } from '@x402/fetch'
import { Hono } from 'hono'
import {
  createPublicClient,
  type Hex,
  http,
  isAddressEqual,
  parseAbi,
  parseEventLogs,
  type TransactionReceipt,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterEach, describe, expect, it } from 'vitest'
import type { CountingProxy } from '../../harness/countingProxy.js'
import {
  depositedIn,
  merchantVault,
  receiptsFrom,
  sweepEvents,
  usdcBalance,
} from '../../harness/merchant.js'
import { paymentResponseOf } from '../../harness/merchantApps.js'
import type { Devnet } from '../../src/devnet/startDevnet.js'
import { type AttachToResourceServerOptions, parseUsdc } from '../../src/index.js'
import type { PaywallBatchSettlement } from '../../src/plugins/batchSettlement.js'
import { createPaywall } from '../../src/plugins/hono.js'
import { x402BatchSettlementAddress } from '../../src/sdk/shared.js'
import { type DevnetClients, useMerchantDevnet } from '../support/devnet.js'

const chains = [{ chain: 'base-sepolia' }, { chain: 'base' }] as const

/** The route's price: 0.001 USDC. */
const price = 1_000n

/** x402's batch-settlement contract as published: the events these tests read. */
const batchSettlementAbi = parseAbi([
  'struct ChannelConfig { address payer; address payerAuthorizer; address receiver; address receiverAuthorizer; address token; uint40 withdrawDelay; bytes32 salt; }',
  'event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 newBalance)',
  'event Claimed(bytes32 indexed channelId, address indexed sender, uint128 claimAmount, uint128 newTotalClaimed)',
  'event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount)',
])

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
  function batchBuyer(appFetch: typeof fetch, privateKey: Hex = devnet.accounts.buyer.privateKey) {
    const publicClient = createPublicClient({
      chain: devnet.viemChain,
      transport: http(devnet.rpcUrl),
    })
    const client = new x402Client().register(
      network() as `eip155:${number}`,
      new BatchSettlementEvmScheme(
        toClientEvmSigner(privateKeyToAccount(privateKey), publicClient),
      ),
    )
    if (setting.chain === 'base-sepolia') {
      client.setSpendControls({
        allowedAssets: [{ network: network() as `eip155:${number}`, asset: devnet.addresses.usdc }],
      })
    }
    return wrapFetchWithPayment(appFetch, new x402HTTPClient(client))
  }

  /** A Hono shop selling `GET /tick` at 0.001 USDC with batch-settlement, its sweeper's events recorded. */
  async function openShop(sweep: SweepOptions, batchSettlement: PaywallBatchSettlement) {
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
      sweep: {
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

  /** The batch-settlement contract's events in the facilitator's transactions since `fromBlock`. */
  async function escrowEvents(fromBlock: bigint) {
    const receipts = await receiptsFrom(devnet, facilitator(), fromBlock)
    const events = (receipt: TransactionReceipt) =>
      parseEventLogs({ abi: batchSettlementAbi, logs: receipt.logs }).filter((log) =>
        isAddressEqual(log.address, x402BatchSettlementAddress),
      )
    return {
      receipts,
      settled: receipts.flatMap((receipt) =>
        events(receipt)
          .filter((log) => log.eventName === 'Settled')
          .map((log) => ({ txHash: receipt.transactionHash, args: log.args })),
      ),
      claimed: receipts.flatMap((receipt) =>
        events(receipt).filter((log) => log.eventName === 'Claimed'),
      ),
    }
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
    await shop.paywall.sweeper.idle()
    expect(await merchantBalance()).toBe(start)
    expect(shop.events.deposits).toEqual([])

    await shop.paywall.close()
    const charged = price * BigInt(requests)
    const { settled, claimed } = await escrowEvents(firstBlock)
    expect(claimed.map((log) => log.args.claimAmount)).toEqual([charged])
    expect(settled.map((entry) => entry.args)).toEqual([
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
    expect(settled.reduce((sum, entry) => sum + entry.args.amount, 0n)).toBe(charged)
    // One settlement fed per settle transaction, with its amount, and nothing else.
    const fed = shop.events.deposits.flatMap((deposit) => deposit.settlements)
    expect(
      fed.map((settlement) => [settlement.txHash, settlement.amount, settlement.scheme]),
    ).toEqual(settled.map((entry) => [entry.txHash, entry.args.amount, 'batch-settlement']))
    expect(shop.events.deposits).toMatchObject([{ deposited: true, idleAmount: parseUsdc('10') }])
    expect(await merchantBalance()).toBe(reserve)
    expect(shop.events.problems).toEqual([])
  })
})
