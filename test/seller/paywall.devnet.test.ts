/**
 * The seller flow end to end on the devnet, on both chains, for Express and for Hono alike: a real buyer
 * (x402's fetch wrapper and exact EVM client scheme, spend controls on and opted in to the vault's USDC)
 * pays a real merchant app through the devnet's HTTP facilitator, and the sweeper deposits the merchant's
 * USDC above its reserve into the vault. On Base the buyer pays with EIP-3009 (the USDC's
 * `transferWithAuthorization`); on Base Sepolia, whose USDC has no EIP-3009, through Permit2 (x402's exact
 * Permit2 proxy), as on the live networks. The same table runs on both: paid and unpaid, the first payment
 * of a buyer who never sent a transaction, the sweep above the reserve, a burst of 50, a failed
 * settlement. The rest (the sweeper around the sale, facilitator faults, misconfiguration) is the same on
 * either chain and runs on Base Sepolia. The merchant's RPC traffic goes through a proxy that counts the
 * sweeps' reads and injects faults.
 */
import { decodePaymentRequiredHeader } from '@x402/core/http'
import {
  eip3009ABI,
  PERMIT2_ADDRESS,
  x402ExactPermit2ProxyABI,
  x402ExactPermit2ProxyAddress,
} from '@x402/evm'
import {
  createPublicClient,
  createWalletClient,
  decodeFunctionData,
  erc20Abi,
  type Hash,
  type Hex,
  http,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { CountingProxy } from '../../harness/countingProxy.js'
import {
  depositedIn,
  gate,
  isSweepRead,
  type MerchantRpc,
  merchantVault,
  receiptsFrom,
  sweepEvents,
  transferToMerchant,
  usdcBalance,
} from '../../harness/merchant.js'
import {
  buyerFetch,
  type Framework,
  frameworks,
  type Handlers,
  paidRoutes,
  paymentResponseOf,
} from '../../harness/merchantApps.js'
import { startFacilitatorServer } from '../../src/devnet/facilitator.js'
import type { Devnet } from '../../src/devnet/startDevnet.js'
import {
  type AttachToResourceServerOptions,
  createVaultClient,
  parseUsdc,
  usdcAbi,
} from '../../src/index.js'
import { type CreatePaywallOptions, preparePaywall } from '../../src/plugins/core.js'
import { type DevnetClients, useMerchantDevnet } from '../support/devnet.js'
import { expectVaultError } from '../support/expectVaultError.js'
import { type HttpFaultProxy, startHttpFaultProxy } from '../support/httpFaultProxy.js'
import { refusedUrl } from '../support/stubFacilitator.js'

type SweepOptions = Omit<AttachToResourceServerOptions, 'wallet'>

/** Each chain, how its buyers pay, and what the seller's payment requirement says of its USDC. */
const chains = [
  {
    chain: 'base',
    method: 'EIP-3009',
    network: 'eip155:8453',
    extra: { name: 'USD Coin', version: '2', assetTransferMethod: 'eip3009' },
  },
  {
    chain: 'base-sepolia',
    method: 'Permit2',
    network: 'eip155:84532',
    extra: { name: 'USDC', version: '1', assetTransferMethod: 'permit2' },
  },
] as const

/** Everything a settlement transaction may call: the token's EIP-3009 entry, the Permit2 proxy's two. */
const settlementAbi = [...eip3009ABI, ...x402ExactPermit2ProxyABI]

describe.each(chains)('on $chain, where buyers pay through $method', (setting) => {
  let devnet: Devnet
  let t: DevnetClients
  let proxy: CountingProxy
  let rpc: MerchantRpc
  /** The devnet's facilitator behind a proxy that slows or garbles its answers. */
  let facilitator: HttpFaultProxy
  useMerchantDevnet({ chain: setting.chain, facilitator: true }, async (m) => {
    ;({ devnet, t, proxy, rpc } = m)
    facilitator = await startHttpFaultProxy(devnet.facilitatorUrl as string)
  })
  afterAll(() => facilitator?.close())

  const cleanups: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
    rpc.setRule(undefined)
    facilitator.setRule(undefined)
  })

  /**
   * Where a settlement went and what it called: on Base the token's `transferWithAuthorization`; on Base
   * Sepolia the exact Permit2 proxy's `settle`, or `settleWithPermit` when the buyer's EIP-2612 permit for
   * Permit2 rides along (gas sponsoring). The facilitator sends it either way.
   */
  async function settlementCall(hash: string) {
    const tx = await t.publicClient.getTransaction({ hash: hash as Hash })
    const { functionName } = decodeFunctionData({ abi: settlementAbi, data: tx.input })
    return { from: tx.from, to: tx.to, functionName }
  }
  const settledBy = (functionName: 'settle' | 'settleWithPermit') =>
    setting.chain === 'base'
      ? {
          from: devnet.accounts.facilitator.address.toLowerCase(),
          to: devnet.addresses.usdc.toLowerCase(),
          functionName: 'transferWithAuthorization',
        }
      : {
          from: devnet.accounts.facilitator.address.toLowerCase(),
          to: x402ExactPermit2ProxyAddress.toLowerCase(),
          functionName,
        }
  const permit2Allowance = (owner: Hex) =>
    t.publicClient.readContract({
      address: devnet.addresses.usdc,
      abi: erc20Abi,
      functionName: 'allowance',
      args: [owner, PERMIT2_ADDRESS],
    })

  describe.each(frameworks)('a $name merchant', (framework: Framework) => {
    /** A merchant app with the paywall for `GET /paid` and `GET /broken` at `price`. */
    async function openShop(
      sweep: SweepOptions,
      options: {
        price?: string
        handlers?: Handlers
        paywall?: Partial<CreatePaywallOptions>
        /** The paying buyer's key; default the devnet's buyer. */
        buyer?: Hex
      } = {},
    ) {
      const events = sweepEvents()
      const paywall = await framework.createPaywall({
        vault: merchantVault(devnet, proxy.url),
        payTo: devnet.accounts.merchant.address,
        facilitator: { url: devnet.facilitatorUrl as string },
        routes: paidRoutes(options.price ?? '0.5'),
        sweep: {
          onIdleDeposit: events.onIdleDeposit,
          onNonFatalError: events.onNonFatalError,
          ...sweep,
        },
        ...options.paywall,
      })
      cleanups.push(() => paywall.close())
      const app = await framework.start(paywall.middleware, options.handlers)
      cleanups.push(app.stop)
      const url = (path: string) => `${app.baseUrl}${path}`
      return { paywall, app, events, url, pay: buyerFetch(devnet, app.fetch, options.buyer) }
    }

    const merchantBalance = () => usdcBalance(devnet, devnet.accounts.merchant.address)
    const shares = () => t.readOnly.getShareBalance({ wallet: devnet.accounts.merchant.address })

    it('answers 402 with what to pay, then 200 with PAYMENT-RESPONSE once paid; the merchant gets the price', async () => {
      const { network } = setting
      const stock = devnet.tokens.circleTestUsdc
      const shop = await openShop({ minIdleThreshold: '10', reserve: '1000000' })
      const unpaid = await shop.app.fetch(shop.url('/paid'))
      expect(unpaid.status).toBe(402)
      expect(await unpaid.json()).toEqual({
        error: 'payment_required',
        message: `Pay 0.5 USDC (500000 base units of the USDC at ${devnet.addresses.usdc}) to ${devnet.accounts.merchant.address} on ${network} with x402: see the PAYMENT-REQUIRED header.${
          stock
            ? ` A buyer with x402's default spend controls pays in ${stock} (x402's default test USDC); to pay in the vault's USDC at ${devnet.addresses.usdc}, add it to the buyer's allowedAssets.`
            : ''
        }`,
        payment: {
          scheme: 'exact',
          network,
          asset: devnet.addresses.usdc,
          amount: '500000',
          amountUsdc: '0.5',
          payTo: devnet.accounts.merchant.address,
          ...(stock ? { alsoAccepted: [stock] } : {}),
        },
      })
      // The requirement names the token's EIP-712 domain, read from the chain, and how it is paid; where
      // that is Permit2 the seller offers gas sponsoring, so that a buyer who never approved can pay.
      const required = decodePaymentRequiredHeader(unpaid.headers.get('PAYMENT-REQUIRED') as string)
      // On Base Sepolia, x402's default test USDC second, so that a stock buyer can pay (it stays liquid).
      expect(required.accepts).toEqual([
        expect.objectContaining({ network, asset: devnet.addresses.usdc, extra: setting.extra }),
        ...(stock
          ? [
              expect.objectContaining({
                network,
                asset: stock,
                extra: { name: 'USDC', version: '2', assetTransferMethod: 'eip3009' },
              }),
            ]
          : []),
      ])
      expect(Object.keys(required.extensions ?? {})).toEqual(
        setting.chain === 'base-sepolia' ? ['eip2612GasSponsoring'] : [],
      )

      const before = await merchantBalance()
      const paid = await shop.pay(shop.url('/paid'))
      expect(paid.status).toBe(200)
      expect(await paid.json()).toEqual({ paid: true })
      const settlement = paymentResponseOf(paid)
      expect(settlement).toMatchObject({ success: true, network })
      expect(settlement.transaction).toMatch(/^0x[0-9a-f]{64}$/)
      // The devnet's buyer approved Permit2 once (on Base Sepolia): a plain Permit2 settlement.
      expect(await settlementCall(settlement.transaction)).toEqual(settledBy('settle'))
      expect(await merchantBalance()).toBe(before + parseUsdc('0.5'))

      const free = await shop.app.fetch(shop.url('/free'))
      expect(free.status).toBe(200)
    })

    it('the first payment of a buyer who never sent a transaction: no transaction of its own, and the sweep counts it as income', async () => {
      const start = await merchantBalance()
      // A new buyer with 5 USDC and nothing else: no ETH for gas, no approval of any kind.
      const key = generatePrivateKey()
      const buyer = privateKeyToAccount(key)
      const funded = await t.walletFor(t.buyer).writeContract({
        address: devnet.addresses.usdc,
        abi: usdcAbi,
        functionName: 'transfer',
        args: [buyer.address, parseUsdc('5')],
      })
      await t.publicClient.waitForTransactionReceipt({ hash: funded })
      // 10 USDC is idle from the start (the protocol minimum): the sale's sweep deposits.
      const shop = await openShop(
        { minIdleThreshold: '10', reserve: start - parseUsdc('10'), debounceMs: 0 },
        { buyer: key },
      )
      const paid = await shop.pay(shop.url('/paid'))
      expect(paid.status).toBe(200)
      const settlement = paymentResponseOf(paid)
      expect(settlement.payer).toBe(buyer.address)
      // On Base Sepolia its EIP-2612 permit for Permit2 went with the payment, submitted by the facilitator.
      expect(await settlementCall(settlement.transaction)).toEqual(settledBy('settleWithPermit'))
      expect(await t.publicClient.getTransactionCount({ address: buyer.address })).toBe(0)
      expect(await t.publicClient.getBalance({ address: buyer.address })).toBe(0n)
      expect(await usdcBalance(devnet, buyer.address)).toBe(parseUsdc('4.5'))
      // The permit covered this payment only: Permit2 holds no allowance of its USDC afterwards.
      expect(await permit2Allowance(buyer.address)).toBe(0n)

      await shop.events.deposited()
      expect(shop.events.deposits[0]).toMatchObject({
        idleAmount: parseUsdc('10.5'),
        method: 'depositWithPermit',
        settlements: [
          {
            txHash: settlement.transaction,
            amount: parseUsdc('0.5'),
            payer: buyer.address,
            scheme: 'exact',
          },
        ],
      })
      expect(shop.events.problems).toEqual([])
    })

    it('sweeps everything above the reserve after a sale; onIdleDeposit says exactly what', async () => {
      const start = await merchantBalance()
      const firstBlock = (await t.publicClient.getBlockNumber({ cacheTime: 0 })) + 1n
      const reserve = start - parseUsdc('10')
      const shop = await openShop({ minIdleThreshold: '10', reserve })
      const paid = await shop.pay(shop.url('/paid'))
      expect(paid.status).toBe(200)
      const settlement = paymentResponseOf(paid)

      await shop.events.deposited()
      const [deposit] = shop.events.deposits
      expect(deposit).toEqual({
        deposited: true,
        idleAmount: parseUsdc('10.5'),
        reserveFloor: reserve,
        txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        wallet: devnet.accounts.merchant.address,
        walletBalance: start + parseUsdc('0.5'),
        minDeposit: parseUsdc('10'),
        sharesMinted: expect.any(BigInt),
        blockNumber: expect.any(BigInt),
        // The merchant has no allowance: a permit and the deposit in one transaction, the permit signed
        // in the token's own EIP-712 domain (version "1" for Base Sepolia's test USDC).
        method: 'depositWithPermit',
        settlements: [
          {
            txHash: settlement.transaction,
            amount: parseUsdc('0.5'),
            payer: devnet.accounts.buyer.address,
            scheme: 'exact',
          },
        ],
      })
      expect(await merchantBalance()).toBe(reserve)
      // One transaction from the merchant: the deposit, nothing before it.
      const receipts = await receiptsFrom(devnet, devnet.accounts.merchant.address, firstBlock)
      expect(receipts.map((receipt) => [receipt.transactionHash, receipt.status])).toEqual([
        [deposit?.txHash, 'success'],
      ])
      expect(depositedIn(devnet, receipts, devnet.accounts.merchant.address)).toEqual([
        parseUsdc('10.5'),
      ])
      expect(await shares()).toBeGreaterThan(0n)
      expect(shop.events.problems).toEqual([])
    })

    it('50 concurrent paid requests: all 200, swept in deposits of at least the threshold each, every base unit accounted for', async () => {
      const start = await merchantBalance()
      const firstBlock = (await t.publicClient.getBlockNumber({ cacheTime: 0 })) + 1n
      const shop = await openShop({ minIdleThreshold: '10', reserve: start }, { price: '1' })
      const responses = await Promise.all(
        Array.from({ length: 50 }, () => shop.pay(shop.url('/paid'))),
      )
      expect(responses.map((response) => response.status)).toEqual(Array(50).fill(200))
      const received = parseUsdc('50')
      // The rule leaves less than the threshold once the last sale is swept.
      const sumOf = (amounts: bigint[]) => amounts.reduce((sum, amount) => sum + amount, 0n)
      await shop.events.until(
        () => received - sumOf(shop.events.deposits.map((d) => d.idleAmount)) < parseUsdc('10'),
      )
      await shop.paywall.close()

      const receipts = await receiptsFrom(devnet, devnet.accounts.merchant.address, firstBlock)
      expect(receipts.every((receipt) => receipt.status === 'success')).toBe(true)
      const deposited = depositedIn(devnet, receipts, devnet.accounts.merchant.address)
      // How many deposits depends on how fast the devnet settles the 50: at most 3 is the bench's budget
      // for a quiet machine (docs/performance.md). The rule holds on any machine: the sweeper groups
      // the sales, and each deposit moves at least the threshold.
      expect(deposited.length).toBeGreaterThanOrEqual(1)
      for (const amount of deposited) expect(amount).toBeGreaterThanOrEqual(parseUsdc('10'))
      expect(deposited).toEqual(shop.events.deposits.map((d) => d.idleAmount))
      expect(start + received).toBe((await merchantBalance()) + sumOf(deposited))
      expect(shop.events.problems).toEqual([])
    })

    it('a settlement the facilitator fails: 402 with { error, reason, message }, and no sweep', async () => {
      const start = await merchantBalance()
      const buyer = privateKeyToAccount(devnet.accounts.buyer.privateKey)
      const shop = await openShop(
        { minIdleThreshold: '10', reserve: start, debounceMs: 0 },
        {
          handlers: {
            // Verified, then the buyer spends its USDC before the settlement: the transfer must fail.
            async beforePaidAnswer() {
              const balance = await usdcBalance(devnet, buyer.address)
              const hash = await t.walletFor(buyer).writeContract({
                address: devnet.addresses.usdc,
                abi: usdcAbi,
                functionName: 'transfer',
                args: [devnet.accounts.deployer.address, balance],
              })
              await t.publicClient.waitForTransactionReceipt({ hash })
            },
          },
        },
      )
      const readsBefore = rpc.sweepReads()
      const response = await shop.pay(shop.url('/paid'))
      expect(response.status).toBe(402)
      const body = (await response.json()) as Record<string, unknown>
      expect(Object.keys(body).sort()).toEqual(['error', 'message', 'reason'])
      expect(body.error).toBe('settlement_failed')
      expect(body.reason).toEqual(expect.any(String))
      expect(body.message).toEqual(expect.any(String))
      expect(await merchantBalance()).toBe(start)
      await shop.paywall.sweeper.idle()
      await shop.paywall.sweeper.sweep()
      expect(rpc.sweepReads() - readsBefore).toBe(1) // the manual sweep's only
      // The facilitator answered (a refusal, not a failure): nothing for the seller to hear of.
      expect(shop.events.problems).toEqual([])
    })

    // The rest is the sweeper around the sale, the same on either chain: on the test network only.
    if (setting.chain !== 'base-sepolia') return

    it('sweeps nothing below the threshold', async () => {
      const start = await merchantBalance()
      const shop = await openShop({ minIdleThreshold: '10', reserve: start, debounceMs: 0 })
      const readsBefore = rpc.sweepReads()
      expect((await shop.pay(shop.url('/paid'))).status).toBe(200)
      // The sale's sweep (once its settlement is checked on chain), then a manual one: both read the
      // balance and found 0.5 USDC idle.
      await shop.paywall.sweeper.idle()
      expect(await shop.paywall.sweeper.sweep()).toMatchObject({
        deposited: false,
        reason: 'below-threshold',
        idleAmount: parseUsdc('0.5'),
      })
      expect(rpc.sweepReads() - readsBefore).toBe(2)
      expect(shop.events.deposits).toEqual([])
      expect(await shares()).toBe(0n)
      expect(await merchantBalance()).toBe(start + parseUsdc('0.5'))
    })

    it('a facilitator that garbles its settlement answer: the chain shows nothing settled, so the buyer is told it is pending; no money moved, no sweep', async () => {
      const start = await merchantBalance()
      const buyerStart = await usdcBalance(devnet, devnet.accounts.buyer.address)
      const shop = await openShop(
        { minIdleThreshold: '0', reserve: start, debounceMs: 0 },
        { paywall: { facilitator: { url: facilitator.url }, settlementCheckMs: 200 } },
      )
      // Not forwarded: the facilitator never settles, and its answer is cut off mid-JSON.
      facilitator.setRule((path) =>
        path.endsWith('/settle') ? { status: 200, body: '{"success":tr' } : undefined,
      )
      const readsBefore = rpc.sweepReads()
      const response = await shop.pay(shop.url('/paid'))
      // Whether the garbled answer meant a settlement, only the chain can say: it shows the payment's
      // authorization unused, but still valid, so the buyer must not pay again before it expires.
      expect(response.status).toBe(402)
      expect(paymentResponseOf(response)).toMatchObject({
        success: false,
        errorReason: 'settlement_pending',
        transaction: '',
      })
      expect(await response.json()).toMatchObject({
        error: 'settlement_pending',
        message: expect.stringMatching(/^The payment may still settle/),
      })
      expect(await merchantBalance()).toBe(start)
      expect(await usdcBalance(devnet, devnet.accounts.buyer.address)).toBe(buyerStart)
      await shop.paywall.sweeper.idle()
      await shop.paywall.sweeper.sweep()
      expect(rpc.sweepReads() - readsBefore).toBe(1) // the manual sweep's only
      // The seller hears of it, with its own phase; the sweeper had nothing to do with it.
      expect(shop.events.problems).toMatchObject([
        {
          phase: 'facilitator',
          willRetry: false,
          error: {
            code: 'SETTLEMENT_PENDING',
            details: { facilitatorCode: 'FACILITATOR_BAD_RESPONSE' },
          },
        },
      ])
      expect(shop.events.problems[0]?.error.message).toMatch(
        /the x402 facilitator failed to settle it \(Facilitator settle returned invalid JSON: .*\), and its authorization is still unused on chain after 200 ms/,
      )
    })

    it('a slow facilitator: the paid response waits for the settlement, then the sweep deposits it', async () => {
      const start = await merchantBalance()
      const shop = await openShop(
        { minIdleThreshold: '0', reserve: start - parseUsdc('10'), debounceMs: 0 },
        { paywall: { facilitator: { url: facilitator.url } } },
      )
      facilitator.setRule((path) => (path.endsWith('/settle') ? { delayMs: 1_000 } : undefined))
      const started = performance.now()
      const paid = await shop.pay(shop.url('/paid'))
      expect(paid.status).toBe(200)
      expect(performance.now() - started).toBeGreaterThanOrEqual(1_000)
      expect(paymentResponseOf(paid).success).toBe(true)
      await shop.events.deposited()
      expect(shop.events.deposits.map((deposit) => deposit.idleAmount)).toEqual([parseUsdc('10.5')])
      expect(shop.events.problems).toEqual([])
    })

    it('a facilitator slower than its timeout: the paywall gives up at the timeout, sees the settlement land on chain while it checks, and the buyer gets the resource; the sale is swept', async () => {
      const start = await merchantBalance()
      // 10 USDC is idle from the start (the protocol minimum): any sweep would deposit.
      const reserve = start - parseUsdc('10')
      const shop = await openShop(
        { minIdleThreshold: '0', reserve, debounceMs: 0 },
        { paywall: { facilitator: { url: facilitator.url, timeoutMs: 1_000 } } },
      )
      // The settlement reaches the facilitator only after the paywall stopped waiting for it, and is
      // mined while the paywall watches the chain for it (up to 10 s, the default).
      facilitator.setRule((path) => (path.endsWith('/settle') ? { delayMs: 1_500 } : undefined))
      const started = performance.now()
      const late = await shop.pay(shop.url('/paid'))
      expect(performance.now() - started).toBeGreaterThanOrEqual(1_500)
      expect(late.status).toBe(200)
      const settlement = paymentResponseOf(late)
      expect(settlement).toMatchObject({ success: true, payer: devnet.accounts.buyer.address })
      expect(await settlementCall(settlement.transaction)).toEqual(settledBy('settle'))
      await shop.events.deposited()
      // The sale counts: the sweep deposits it, with its settlement.
      expect(shop.events.deposits).toMatchObject([
        {
          idleAmount: parseUsdc('10.5'),
          settlements: [{ txHash: settlement.transaction.toLowerCase(), amount: parseUsdc('0.5') }],
        },
      ])
      expect(shop.events.problems).toMatchObject([
        { phase: 'facilitator', error: { code: 'FACILITATOR_TIMEOUT' } },
      ])
      expect(shop.events.problems[0]?.error.message).toMatch(
        /\(Facilitator settle request timed out after 1000ms\); the buyer was answered 200: the chain shows the payment settled in 0x/,
      )
      expect(await merchantBalance()).toBe(reserve)
    })

    it('a handler that answers 500: no settlement, no sweep', async () => {
      const start = await merchantBalance()
      const buyerStart = await usdcBalance(devnet, devnet.accounts.buyer.address)
      const shop = await openShop({ minIdleThreshold: '0', reserve: '0', debounceMs: 0 })
      const readsBefore = rpc.sweepReads()
      const response = await shop.pay(shop.url('/broken'))
      expect(response.status).toBe(500)
      expect(await response.json()).toEqual({ error: 'handler failed' })
      expect(response.headers.get('PAYMENT-RESPONSE')).toBeNull()
      expect(await usdcBalance(devnet, devnet.accounts.buyer.address)).toBe(buyerStart)
      // Everything is idle with this reserve, yet nothing swept it: no settlement, no hook.
      await shop.paywall.sweeper.idle()
      await shop.paywall.close()
      expect(rpc.sweepReads() - readsBefore).toBe(0)
      expect(await merchantBalance()).toBe(start)
    })

    it('USDC sent straight to the merchant is swept by the timer', async () => {
      const start = await merchantBalance()
      const shop = await openShop({ minIdleThreshold: '10', reserve: start, sweepIntervalMs: 100 })
      await transferToMerchant(devnet, parseUsdc('20'))
      await shop.events.deposited()
      expect(shop.events.deposits[0]).toMatchObject({
        idleAmount: parseUsdc('20'),
        settlements: [],
      })
      expect(await merchantBalance()).toBe(start)
    })

    it('without a timer, USDC sent straight to the merchant is swept with the next sale', async () => {
      const start = await merchantBalance()
      const shop = await openShop({ minIdleThreshold: '10', reserve: start })
      await transferToMerchant(devnet, parseUsdc('20'))
      const paid = await shop.pay(shop.url('/paid'))
      await shop.events.deposited()
      expect(shop.events.deposits[0]).toMatchObject({
        idleAmount: parseUsdc('20.5'),
        settlements: [{ txHash: paymentResponseOf(paid).transaction }],
      })
    })

    it('sweeps never delay the response: paid responses return while the deposit is held back', async () => {
      const start = await merchantBalance()
      const held = gate()
      rpc.setRule(async (calls) => {
        if (calls.some((call) => call.method === 'eth_sendRawTransaction')) await held.opened
        return undefined
      })
      // 10 USDC (the protocol minimum) is idle already: the first sale's sweep deposits.
      const shop = await openShop({
        minIdleThreshold: '0',
        reserve: start - parseUsdc('10'),
        debounceMs: 0,
      })
      const from = rpc.calls.length
      const settlements: string[] = []
      const sell = async () => {
        const paid = await shop.pay(shop.url('/paid'))
        expect(paid.status).toBe(200)
        settlements.push(paymentResponseOf(paid).transaction)
      }
      await sell()
      // The first sale's sweep (once its settlement is checked on chain) sends its deposit, which
      // waits at the RPC: the next sales are answered all the same.
      await rpc.until(() => rpc.indexOf((c) => c.method === 'eth_sendRawTransaction', from) !== -1)
      await sell()
      await sell()
      // Every response is back; the sweep's deposit is still waiting at the RPC, not mined.
      expect(await shares()).toBe(0n)
      expect(shop.events.deposits).toEqual([])
      held.open()
      await shop.events.deposited()
      expect(shop.events.deposits[0]?.idleAmount).toBe(parseUsdc('10.5'))
      const depositBlock = (
        await t.publicClient.getTransactionReceipt({
          hash: shop.events.deposits[0]?.txHash as `0x${string}`,
        })
      ).blockNumber
      for (const hash of settlements) {
        const settled = await t.publicClient.getTransactionReceipt({ hash: hash as `0x${string}` })
        expect(settled.blockNumber).toBeLessThan(depositBlock)
      }
    })

    it('an RPC failure during a sweep is reported with its phase; the retry deposits the money', async () => {
      const start = await merchantBalance()
      let failures = 1
      rpc.setRule((calls) =>
        calls.some((call) => isSweepRead(call, devnet)) && failures-- > 0 ? 503 : undefined,
      )
      const shop = await openShop({
        minIdleThreshold: '0',
        reserve: start,
        retry: { initialDelayMs: 20 },
      })
      await transferToMerchant(devnet, parseUsdc('10'))
      expect((await shop.pay(shop.url('/paid'))).status).toBe(200)
      await shop.events.deposited()
      expect(shop.events.problems).toMatchObject([
        {
          phase: 'balance-read',
          willRetry: true,
          error: { code: 'RPC_HTTP_ERROR', retryable: true },
        },
      ])
      expect(shop.events.deposits[0]?.idleAmount).toBe(parseUsdc('10.5'))
    })

    it('close() waits for the sweep in flight, then sweeps no more; the routes stay paid', async () => {
      const start = await merchantBalance()
      const held = gate()
      rpc.setRule(async (calls) => {
        if (calls.some((call) => call.method === 'eth_sendRawTransaction')) await held.opened
        return undefined
      })
      const shop = await openShop({ minIdleThreshold: '0', reserve: start, debounceMs: 0 })
      await transferToMerchant(devnet, parseUsdc('10'))
      const from = rpc.calls.length
      expect((await shop.pay(shop.url('/paid'))).status).toBe(200)
      await rpc.until(() => rpc.indexOf((c) => c.method === 'eth_sendRawTransaction', from) !== -1)
      const order: string[] = []
      const closed = shop.paywall.close().then(() => order.push('closed'))
      held.open()
      await shop.events.deposited()
      order.push('deposited')
      await closed
      expect(order).toEqual(['deposited', 'closed'])

      const readsBefore = rpc.sweepReads()
      expect((await shop.pay(shop.url('/paid'))).status).toBe(200)
      await shop.paywall.sweeper.idle()
      expect(rpc.sweepReads() - readsBefore).toBe(0)
      expect(await merchantBalance()).toBe(start + parseUsdc('0.5'))
    })

    it('sweep: false, with a read-only vault client: paid requests settle, nothing is swept in-process', async () => {
      const start = await merchantBalance()
      const firstBlock = (await t.publicClient.getBlockNumber({ cacheTime: 0 })) + 1n
      // No wallet client: an instance swept by `x402-vault sweep --watch` holds no key that signs.
      const vault = createVaultClient({
        publicClient: merchantVault(devnet, proxy.url).publicClient,
        chain: devnet.chain,
        addresses: devnet.addresses,
      })
      const paywall = await framework.createPaywall({
        vault,
        payTo: devnet.accounts.merchant.address,
        facilitator: { url: devnet.facilitatorUrl as string },
        routes: paidRoutes('1'),
        sweep: false,
      })
      cleanups.push(() => paywall.close())
      expect(paywall.sweeper).toBeUndefined()
      const app = await framework.start(paywall.middleware)
      cleanups.push(app.stop)
      const pay = buyerFetch(devnet, app.fetch)
      const from = rpc.calls.length
      const responses = await Promise.all(
        Array.from({ length: 3 }, () => pay(`${app.baseUrl}/paid`)),
      )
      expect(responses.map((response) => response.status)).toEqual([200, 200, 200])
      await paywall.close()
      // Every sale is in the wallet: no sweep read, no send, no deposit; nor a check of the
      // settlements, which only an in-process sweeper needs: a sale costs the instance no RPC request.
      expect(await merchantBalance()).toBe(start + parseUsdc('3'))
      expect(rpc.calls.slice(from)).toEqual([])
      expect(await receiptsFrom(devnet, devnet.accounts.merchant.address, firstBlock)).toEqual([])
    })

    it('sends the facilitator its bearer token', async () => {
      const token = 'devnet-secret-token'
      const guarded = await startFacilitatorServer({
        rpcUrl: devnet.rpcUrl,
        chain: devnet.viemChain,
        account: privateKeyToAccount(devnet.accounts.deployer.privateKey),
        bearerToken: token,
      })
      cleanups.push(guarded.stop)
      const refused = framework.createPaywall({
        vault: merchantVault(devnet, proxy.url),
        payTo: devnet.accounts.merchant.address,
        facilitator: { url: guarded.url },
        routes: paidRoutes('0.5'),
        sweep: { minIdleThreshold: '10' },
      })
      const error = await expectVaultError(refused, 'FACILITATOR_UNREACHABLE')
      expect(error.message).toMatch(/401/)

      const start = await merchantBalance()
      const shop = await openShop(
        { minIdleThreshold: '10', reserve: start },
        { paywall: { facilitator: { url: guarded.url, bearerToken: token } } },
      )
      const paid = await shop.pay(shop.url('/paid'))
      expect(paid.status).toBe(200)
      expect(await merchantBalance()).toBe(start + parseUsdc('0.5'))
    })
  })

  if (setting.chain !== 'base-sepolia') return
  describe.each(frameworks)('a $name paywall that is misconfigured', (framework: Framework) => {
    const options = (): CreatePaywallOptions => ({
      vault: merchantVault(devnet, proxy.url),
      payTo: devnet.accounts.merchant.address,
      facilitator: { url: devnet.facilitatorUrl as string },
      routes: paidRoutes('0.5'),
      sweep: { minIdleThreshold: '10' },
    })

    it.each([
      [
        'a zero price',
        { routes: paidRoutes('0') },
        'INVALID_AMOUNT',
        /routes\["GET \/paid"\]\.price: amount must be greater than zero/,
      ],
      [
        'a malformed price',
        { routes: paidRoutes('0.0000001') },
        'INVALID_AMOUNT',
        /at most 6 decimals/,
      ],
      ['a bad payTo', { payTo: '0x1234' }, 'INVALID_ADDRESS', /Invalid address "0x1234"/],
      ['no routes', { routes: {} }, 'INVALID_ARGUMENT', /at least one paid route/],
      ['no facilitator', { facilitator: undefined }, 'INVALID_ARGUMENT', /facilitator\.url/],
      [
        'a facilitator URL from an unset variable',
        { facilitator: { url: undefined } },
        'INVALID_ARGUMENT',
        /it is undefined: is the variable that should hold it \(such as X402_FACILITATOR_URL\) set\?$/,
      ],
      [
        // A port nothing listens on: the connection is refused (port 9 would not do: fetch refuses
        // it as a bad port without connecting).
        'a facilitator that is down',
        async () => ({ facilitator: { url: `${await refusedUrl()}/x402?key=secret` } }),
        'FACILITATOR_UNREACHABLE',
        /could not be reached/,
      ],
    ] as const)(
      '%s: a rejected promise with a clear error, never process.exit',
      async (_name, override, code, message) => {
        const overrides = (
          typeof override === 'function' ? await override() : override
        ) as Partial<CreatePaywallOptions>
        const error = await expectVaultError(
          framework.createPaywall({ ...options(), ...overrides }),
          code,
        )
        expect(error.message).toMatch(message)
        expect(JSON.stringify(error)).not.toContain('secret')
        expect(String(error.cause ?? '')).not.toContain('secret')
      },
    )

    it('a facilitator that does not support the network: FACILITATOR_UNSUPPORTED', async () => {
      // A vault client for Base (eip155:8453) whose RPC is this Base Sepolia devnet: the facilitator
      // only settles eip155:84532.
      const baseVault = createVaultClient({
        publicClient: createPublicClient({ transport: http(devnet.rpcUrl) }),
        walletClient: createWalletClient({
          account: privateKeyToAccount(devnet.accounts.merchant.privateKey),
          transport: http(devnet.rpcUrl),
        }),
        chain: 'base',
        addresses: devnet.addresses,
      })
      const error = await expectVaultError(
        framework.createPaywall({ ...options(), vault: baseVault }),
        'FACILITATOR_UNSUPPORTED',
      )
      expect(error.message).toMatch(/eip155:8453/)
    })

    it('the browser paywall page options: appName, and testnet by chain unless given', async () => {
      const core = await preparePaywall({ ...options(), appName: 'Weather shop' })
      cleanups.push(core.close)
      expect(core.paywallConfig).toEqual({ appName: 'Weather shop', testnet: true })
      const mainnetLike = await preparePaywall({ ...options(), testnet: false })
      cleanups.push(mainnetLike.close)
      expect(mainnetLike.paywallConfig).toEqual({ testnet: false })
    })
  })
})
