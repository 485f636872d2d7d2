/**
 * A settlement whose outcome the facilitator does not tell (or tells wrong) must not become a second
 * charge, nor count money that did not move. A hostile facilitator (test/support/hostileFacilitator.ts)
 * sits in front of the devnet's: it settles through it, or not, and then drops the connection, answers
 * without a transaction or with another payment's, names the wrong payer and amount, answers late, or
 * twice. For each: what the buyer got, what the seller was told (`onNonFatalError` and the log), and the
 * books: the buyer's and the merchant's balances, the sweep's deposit and the settlements it covers, and
 * `getLedger`'s x402 rows and totals count each real payment exactly once, and nothing else.
 *
 * On both chains, because the chain checks differ: on Base the buyer pays with EIP-3009 (the token's
 * `authorizationState` and `AuthorizationUsed`), on Base Sepolia through Permit2 (its nonce bitmap, and
 * x402's exact Permit2 proxy's calls). A real x402 buyer (`@x402/fetch`, spend controls on) pays an
 * Express merchant behind `createPaywall`.
 *
 * Each test's sweep deposits nothing on its own (the reserve is the merchant's whole balance); at its end,
 * 10 USDC sent straight to the merchant and one `sweeper.sweep()` make a deposit that covers every
 * settlement the sweeper recorded, so the test reads them all in one place.
 */
import { decodePaymentResponseHeader } from '@x402/core/http'
import { HTTPFacilitatorClient, x402ResourceServer } from '@x402/core/server'
import { type Hash, isAddressEqual } from 'viem'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import type { CountingProxy } from '../../harness/countingProxy.js'
import {
  type MerchantRpc,
  merchantVault,
  sweepEvents,
  transferToMerchant,
  usdcBalance,
} from '../../harness/merchant.js'
import { buyerFetch, frameworks, paidRoutes } from '../../harness/merchantApps.js'
import type { Devnet } from '../../src/devnet/startDevnet.js'
import { type IdleDeposit, parseUsdc, type SweeperProblem } from '../../src/index.js'
import type { CreatePaywallOptions } from '../../src/plugins/core.js'
import { createPaywall } from '../../src/plugins/express.js'
import { type DevnetClients, useMerchantDevnet } from '../support/devnet.js'
import {
  type HostileFacilitator,
  startHostileFacilitator,
  strangerAddress,
  transferEventMismatch,
} from '../support/hostileFacilitator.js'

const chains = [
  { chain: 'base', method: 'EIP-3009' },
  { chain: 'base-sepolia', method: 'Permit2' },
] as const

const price = parseUsdc('0.5')
const topUp = parseUsdc('10')
const express = frameworks.find((framework) => framework.name === 'express')
if (!express) throw new Error('no express framework')

describe.each(chains)('on $chain, where buyers pay through $method', (setting) => {
  let devnet: Devnet
  let t: DevnetClients
  let proxy: CountingProxy
  let rpc: MerchantRpc
  let hostile: HostileFacilitator
  useMerchantDevnet({ chain: setting.chain, facilitator: true }, async (m) => {
    ;({ devnet, t, proxy, rpc } = m)
    hostile = await startHostileFacilitator(devnet.facilitatorUrl as string)
  })
  afterAll(() => hostile?.close())

  const cleanups: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
    rpc.setRule(undefined)
    hostile.setScenario('faithful')
    await hostile.release()
  })

  const merchant = () => devnet.accounts.merchant.address
  const buyer = () => devnet.accounts.buyer.address

  /**
   * An Express merchant behind the paywall, its facilitator the hostile one; the sweep keeps the
   * merchant's whole balance as its reserve, so it deposits only when the test tops the wallet up.
   */
  async function openShop(options: Partial<CreatePaywallOptions> = {}) {
    const startBalance = await usdcBalance(devnet, merchant())
    const startBuyer = await usdcBalance(devnet, buyer())
    const fromBlock = (await t.publicClient.getBlockNumber({ cacheTime: 0 })) + 1n
    const events = sweepEvents()
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    cleanups.push(async () => warn.mockRestore())
    const paywall = await createPaywall({
      vault: merchantVault(devnet, proxy.url),
      payTo: merchant(),
      facilitator: { url: hostile.url },
      routes: paidRoutes('0.5'),
      sweep: {
        minIdleThreshold: '0',
        reserve: startBalance,
        debounceMs: 0,
        onIdleDeposit: events.onIdleDeposit,
        onNonFatalError: events.onNonFatalError,
      },
      ...options,
    })
    cleanups.push(() => paywall.close())
    const sweeper = paywall.sweeper
    if (!sweeper) throw new Error('the paywall has no sweeper')
    const app = await (express as NonNullable<typeof express>).start(paywall.middleware)
    cleanups.push(app.stop)
    const pay = buyerFetch(devnet, app.fetch)
    /** Pays `GET /paid` and returns the answer, its body and its decoded `PAYMENT-RESPONSE`. */
    const buy = async () => {
      const started = performance.now()
      const response = await pay(`${app.baseUrl}/paid`)
      const header = response.headers.get('PAYMENT-RESPONSE')
      return {
        status: response.status,
        body: (await response.json()) as Record<string, unknown>,
        settlement: header ? decodePaymentResponseHeader(header) : undefined,
        tookMs: performance.now() - started,
      }
    }
    /**
     * The books once everything has settled down: the buyer's and the merchant's balance changes (the
     * merchant's with what the sweep deposited), the deposit a 10 USDC top-up and one sweep make, the
     * settlements every deposit covered, and the ledger's x402 rows and total.
     */
    const books = async () => {
      await sweeper.idle()
      const buyerPaid = startBuyer - (await usdcBalance(devnet, buyer()))
      await transferToMerchant(devnet, topUp)
      const flush = await sweeper.sweep()
      expect(flush).toMatchObject({ deposited: true })
      const deposits = events.deposits as IdleDeposit[]
      const deposited = deposits.reduce((sum, deposit) => sum + deposit.idleAmount, 0n)
      const ledger = await t.readOnly.getLedger({ wallet: merchant(), fromBlock })
      const x402 = ledger.entries.filter(
        (entry) => entry.kind === 'x402' && isAddressEqual(entry.token, devnet.addresses.usdc),
      )
      return {
        buyerPaid,
        merchantReceived:
          (await usdcBalance(devnet, merchant())) + deposited - startBalance - topUp,
        sweptSales: deposited - topUp,
        sweepSettlements: deposits
          .flatMap((deposit) => deposit.settlements)
          .map(({ txHash, amount, payer }) => ({ txHash, amount, payer })),
        ledgerRows: x402.map(({ txHash, amount, counterparty }) => ({
          txHash,
          amount,
          payer: counterparty,
        })),
        ledgerX402: ledger.totals.receivedX402,
        reconciled: ledger.reconciled,
      }
    }
    /** What every book says when exactly `payments` (their transactions) were really paid. */
    const expectBooks = async (payments: readonly string[]) => {
      const total = price * BigInt(payments.length)
      const rows = payments.map((txHash) => ({
        txHash: txHash.toLowerCase(),
        amount: price,
        payer: buyer(),
      }))
      const b = await books()
      expect(b.buyerPaid).toBe(total)
      expect(b.merchantReceived).toBe(total)
      expect(b.sweptSales).toBe(total)
      expect(b.sweepSettlements.map((s) => ({ ...s, txHash: s.txHash.toLowerCase() }))).toEqual(
        rows,
      )
      expect(b.ledgerRows.map((row) => ({ ...row, txHash: row.txHash.toLowerCase() }))).toEqual(
        rows,
      )
      expect(b.ledgerX402).toBe(total)
      expect(b.reconciled).toBe(true)
    }
    const problems = () => events.problems as SweeperProblem[]
    const logged = () => warn.mock.calls.map(([line]) => String(line))
    return { sweeper, buy, events, problems, logged, expectBooks }
  }

  /** The real transactions the devnet's facilitator settled since `from` (an index into `hostile.settled`). */
  const settledSince = (from: number) => hostile.settled.slice(from) as Hash[]

  /** One problem, reported with this phase and code, and logged with the same words. */
  function expectOneProblem(
    shop: Awaited<ReturnType<typeof openShop>>,
    phase: SweeperProblem['phase'],
    code: string,
    words: RegExp,
  ) {
    expect(shop.problems()).toHaveLength(1)
    const [problem] = shop.problems()
    expect(problem).toMatchObject({ phase, willRetry: false, error: { code } })
    expect(problem?.error.message).toMatch(words)
    expect(shop.logged()).toContain(`x402-vault: ${problem?.error.message}`)
  }

  it('settles, then drops the connection: the chain shows it paid, so the buyer gets the resource and it counts once', async () => {
    const shop = await openShop()
    const from = hostile.settled.length
    hostile.setScenario('settle-then-drop')
    const answer = await shop.buy()
    const [paid] = settledSince(from)
    expect(answer.status).toBe(200)
    expect(answer.body).toEqual({ paid: true })
    expect(answer.settlement).toMatchObject({ success: true, transaction: paid, payer: buyer() })
    await shop.sweeper.idle()
    expectOneProblem(
      shop,
      'facilitator',
      'FACILITATOR_CONNECTION_LOST',
      new RegExp(
        `failed to settle a payment .*the buyer was answered 200: the chain shows the payment settled in ${paid}`,
      ),
    )
    await shop.expectBooks([paid as string])
  })

  it('settles, then answers success without a transaction: the chain names it', async () => {
    const shop = await openShop()
    const from = hostile.settled.length
    hostile.setScenario('success-without-transaction')
    const answer = await shop.buy()
    const [paid] = settledSince(from)
    expect(answer.status).toBe(200)
    expect(answer.settlement).toMatchObject({ success: true, transaction: paid })
    await shop.sweeper.idle()
    expectOneProblem(
      shop,
      'facilitator',
      'FACILITATOR_BAD_RESPONSE',
      /answered success without a transaction\); the buyer was answered 200: the chain shows the payment settled in 0x/,
    )
    await shop.expectBooks([paid as string])
  })

  it('answers success without a transaction and without settling: the buyer is told it is pending, not charged, not invited to pay again', async () => {
    const shop = await openShop({ settlementCheckMs: 300 })
    hostile.setScenario('claim-without-transaction')
    const answer = await shop.buy()
    expect(answer.status).toBe(402)
    // x402's settle-response shape, as the PAYMENT-RESPONSE header carries it.
    expect(answer.settlement).toEqual({
      success: false,
      errorReason: 'settlement_pending',
      payer: buyer(),
      transaction: '',
      network: `eip155:${devnet.chainId}`,
    })
    expect(answer.body).toMatchObject({
      error: 'settlement_pending',
      reason: 'settlement_pending',
      payment: {
        network: `eip155:${devnet.chainId}`,
        asset: devnet.addresses.usdc,
        payer: buyer(),
        payTo: merchant(),
        amount: price.toString(),
        validBefore: expect.stringMatching(/^\d+$/),
      },
    })
    const validBefore = new Date(
      Number((answer.body.payment as { validBefore: string }).validBefore) * 1000,
    )
    expect(answer.body.message).toContain(`Do not pay again before ${validBefore.toISOString()}`)
    expectOneProblem(
      shop,
      'facilitator',
      'SETTLEMENT_PENDING',
      /the x402 facilitator failed to settle it \(The payment facilitator answered success without a transaction\), and its authorization is still unused on chain after 300 ms\. The buyer 0x\w+ was answered 402 settlement_pending/,
    )
    expect(shop.problems()[0]?.error.details).toMatchObject({
      payer: buyer(),
      amount: price,
      facilitatorCode: 'FACILITATOR_BAD_RESPONSE',
    })
    await shop.expectBooks([])
  })

  it("answers success with another payment's transaction, without settling: the buyer got the resource unpaid, the seller is told, nothing counts twice", async () => {
    const shop = await openShop()
    const from = hostile.settled.length
    expect((await shop.buy()).status).toBe(200) // a real payment, faithfully settled
    const [first] = settledSince(from)
    hostile.setScenario('another-payments-transaction')
    const answer = await shop.buy()
    expect(answer.status).toBe(200)
    expect(answer.settlement).toMatchObject({ success: true, transaction: first })
    await shop.sweeper.idle()
    expectOneProblem(
      shop,
      'facilitator',
      'SETTLEMENT_CLAIM_MISMATCH',
      new RegExp(
        `answered that a payment settled in ${first}, but that transaction did not settle this payment, and its authorization is still unused on chain: so far the buyer 0x\\w+ got the resource without paying`,
      ),
    )
    expect(settledSince(from)).toEqual([first])
    await shop.expectBooks([first as string])
  })

  it("settles, but names another payment's transaction: the chain finds this one's, and each counts once", async () => {
    const shop = await openShop()
    const from = hostile.settled.length
    expect((await shop.buy()).status).toBe(200)
    hostile.setScenario('settle-and-name-another-transaction')
    const answer = await shop.buy()
    const [first, second] = settledSince(from)
    expect(answer.status).toBe(200)
    expect(answer.settlement).toMatchObject({ success: true, transaction: first })
    await shop.sweeper.idle()
    expectOneProblem(
      shop,
      'facilitator',
      'SETTLEMENT_CLAIM_MISMATCH',
      new RegExp(
        `settled in ${first}, but that transaction did not settle this payment: it settled in ${second}, which counts`,
      ),
    )
    await shop.expectBooks([first as string, second as string])
  })

  it('settles, but names another payer and ten times the amount: the sale counts as the chain shows', async () => {
    const shop = await openShop()
    const from = hostile.settled.length
    hostile.setScenario('wrong-payer-and-amount')
    const answer = await shop.buy()
    const [paid] = settledSince(from)
    expect(answer.status).toBe(200)
    // The buyer's header carries the facilitator's answer, as x402 sends it.
    expect(answer.settlement).toMatchObject({ transaction: paid, payer: strangerAddress })
    await shop.sweeper.idle()
    expectOneProblem(
      shop,
      'facilitator',
      'SETTLEMENT_CLAIM_MISMATCH',
      /it named the payer 0x000000000000000000000000000000000000dEaD and it named the amount 5000000 base units; the chain shows 0x\w+ paying 0\.5 USDC in that transaction, and the sale counts as the chain shows/,
    )
    await shop.expectBooks([paid as string])
  })

  // Answers after 40 s with x402-vault's default settle timeout of 30 s is, scaled down by 30, a
  // timeout of 1 s and an answer held until after the buyer was answered: the paywall gives up at its
  // timeout either way, and what follows depends only on the chain, not on the times.
  it('answers after its timeout (40 s against 30 s, scaled): the paywall gives up at the timeout, finds the payment on chain, the buyer gets the resource', async () => {
    const shop = await openShop({ facilitator: { url: hostile.url, timeoutMs: { settle: 1_000 } } })
    const from = hostile.settled.length
    hostile.setScenario('late-answer')
    const answer = await shop.buy()
    const [paid] = settledSince(from)
    expect(answer.status).toBe(200)
    expect(answer.settlement).toMatchObject({ success: true, transaction: paid })
    expect(answer.tookMs).toBeGreaterThanOrEqual(1_000)
    await hostile.release() // the late answer arrives; nobody listens any more
    await shop.sweeper.idle()
    expectOneProblem(
      shop,
      'facilitator',
      'FACILITATOR_TIMEOUT',
      /\(Facilitator settle request timed out after 1000ms\); the buyer was answered 200: the chain shows the payment settled in 0x/,
    )
    await shop.expectBooks([paid as string])
  })

  it('settles only after its timeout and the check: the buyer is told it is pending; when it lands, the seller hears, and it counts once', async () => {
    const shop = await openShop({
      facilitator: { url: hostile.url, timeoutMs: { settle: 1_000 } },
      settlementCheckMs: 300,
    })
    const from = hostile.settled.length
    hostile.setScenario('late-settlement')
    const answer = await shop.buy()
    expect(answer.status).toBe(402)
    expect(answer.body).toMatchObject({ error: 'settlement_pending' })
    expect(answer.tookMs).toBeGreaterThanOrEqual(1_300)
    expect(settledSince(from)).toEqual([])
    expect(shop.problems().map((p) => p.error.code)).toEqual(['SETTLEMENT_PENDING'])
    await hostile.release() // now it settles
    const [paid] = settledSince(from)
    await shop.events.problem((p) => p.error.code === 'LATE_SETTLEMENT')
    expect(shop.problems()[1]?.error.message).toMatch(
      new RegExp(
        `answered settlement_pending settled later, in ${paid}: the sale counts, but the buyer was not given the resource for it`,
      ),
    )
    await shop.expectBooks([paid as string])
  })

  it('answers twice on one connection: the payment counts once, and the next one is paid as usual', async () => {
    const shop = await openShop()
    const from = hostile.settled.length
    hostile.setScenario('answers-twice')
    const first = await shop.buy()
    hostile.setScenario('faithful')
    const second = await shop.buy()
    const paid = settledSince(from)
    expect([first.status, second.status]).toEqual([200, 200])
    expect([first.settlement?.transaction, second.settlement?.transaction]).toEqual(paid)
    await shop.sweeper.idle()
    expect(shop.problems()).toEqual([])
    await shop.expectBooks(paid)
  })

  it("answers settlement_pending, then success to x402's retry: one settlement, counted once, nothing to report", async () => {
    const shop = await openShop()
    const from = hostile.settled.length
    const requests = hostile.settleRequests
    hostile.setScenario('pending-then-success')
    const answer = await shop.buy()
    const paid = settledSince(from)
    expect(answer.status).toBe(200)
    expect(hostile.settleRequests - requests).toBe(2)
    expect(answer.settlement).toMatchObject({ success: true, transaction: paid[0] })
    await shop.sweeper.idle()
    expect(shop.problems()).toEqual([])
    await shop.expectBooks(paid)
  })

  it('settles, then refuses naming its transaction: the chain shows it paid, so the buyer gets the resource, the sale counts once, and the seller is told once', async () => {
    const shop = await openShop()
    const from = hostile.settled.length
    hostile.setScenario('settle-then-refuse')
    const answer = await shop.buy()
    const [paid] = settledSince(from)
    expect(answer.status).toBe(200)
    expect(answer.body).toEqual({ paid: true })
    expect(answer.settlement).toMatchObject({ success: true, transaction: paid, payer: buyer() })
    await shop.sweeper.idle()
    expectOneProblem(
      shop,
      'facilitator',
      'SETTLEMENT_CLAIM_MISMATCH',
      new RegExp(
        `answered that a payment failed \\(${transferEventMismatch}\\), but its transaction ${paid} settled it on chain: the buyer 0x\\w+ was answered 200, and the sale counts`,
      ),
    )
    await shop.expectBooks([paid as string])
  })

  it("refuses naming another payment's transaction, having settled nothing: the refusal stands, and only the real payment counts", async () => {
    const shop = await openShop()
    const from = hostile.settled.length
    expect((await shop.buy()).status).toBe(200) // a real payment, faithfully settled
    const [first] = settledSince(from)
    hostile.setScenario('refuse-naming-another-transaction')
    const answer = await shop.buy()
    expect(answer.status).toBe(402)
    expect(answer.body).toEqual({
      error: 'settlement_failed',
      reason: transferEventMismatch,
      message: `The payment could not be settled (${transferEventMismatch}).`,
    })
    expect(settledSince(from)).toEqual([first])
    await shop.sweeper.idle()
    expect(shop.problems()).toEqual([])
    await shop.expectBooks([first as string])
  })

  describe("with a resource server of the seller's own (x402's HTTP facilitator client)", () => {
    async function openOwnShop() {
      const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: hostile.url }))
      return openShop({ facilitator: undefined, resourceServer })
    }

    it('settles, then drops the connection: its settle-failure hook still asks the chain, and the sale counts once', async () => {
      const shop = await openOwnShop()
      const from = hostile.settled.length
      hostile.setScenario('settle-then-drop')
      const answer = await shop.buy()
      const [paid] = settledSince(from)
      expect(answer.status).toBe(200)
      expect(answer.settlement).toMatchObject({ success: true, transaction: paid })
      await shop.sweeper.idle()
      expectOneProblem(
        shop,
        'facilitator',
        'FACILITATOR_CONNECTION_LOST',
        new RegExp(`the buyer was answered 200: the chain shows the payment settled in ${paid}`),
      )
      await shop.expectBooks([paid as string])
    })

    it('settles, then answers success without a transaction: x402 answers 200 as it is, and the check after it finds the transaction', async () => {
      const shop = await openOwnShop()
      const from = hostile.settled.length
      hostile.setScenario('success-without-transaction')
      const answer = await shop.buy()
      const [paid] = settledSince(from)
      // x402 sends a success without a transaction on to the buyer: no hook of ours runs before it.
      expect(answer.status).toBe(200)
      expect(answer.settlement).toMatchObject({ success: true, transaction: '' })
      await shop.sweeper.idle()
      expectOneProblem(
        shop,
        'facilitator',
        'SETTLEMENT_CLAIM_MISMATCH',
        new RegExp(`but it named no transaction: it settled in ${paid}, which counts`),
      )
      await shop.expectBooks([paid as string])
    })
  })

  // The expiry is the same rule on either chain once the SDK reads it (its test covers both): here on
  // Base only, since it waits for the authorisation to expire (8 s) with blocks mined every second.
  if (setting.chain !== 'base') return

  it('never settles, and the authorization expires while the paywall checks: the buyer is told the payment was not taken', async () => {
    const shop = await openShop({
      facilitator: { url: hostile.url, timeoutMs: { settle: 1_000 } },
      settlementCheckMs: 30_000,
      routes: {
        'GET /paid': {
          price: '0.5',
          description: 'A paid answer',
          mimeType: 'application/json',
          // The least x402's facilitator accepts: it refuses a payment valid for less than 6 s more.
          maxTimeoutSeconds: 8,
        },
      },
    })
    // The buyer signs validBefore by the wall clock; the chain's clock trails it by every test before
    // this one, since anvil's revert to a snapshot also sets its clock back to the snapshot's block.
    // Brought level, as on a live chain, the chain's time passes validBefore 8 s after signing.
    await t.testClient.mine({ blocks: 1 })
    const head = await t.publicClient.getBlock({ blockTag: 'latest' })
    const behind = BigInt(Math.ceil(Date.now() / 1000)) - head.timestamp
    if (behind > 0n) await devnet.advanceTime(behind)
    // Blocks come every second, as on a live chain, so the chain's time passes the payment's validBefore.
    await t.testClient.setIntervalMining({ interval: 1 })
    cleanups.push(async () => {
      await t.testClient.setIntervalMining({ interval: 0 })
      await t.testClient.setAutomine(true)
    })
    hostile.setScenario('late-settlement') // holds the settlement: it is never sent
    const answer = await shop.buy()
    await t.testClient.setIntervalMining({ interval: 0 })
    await t.testClient.setAutomine(true)
    // On failure, what the seller was told says what the paywall saw.
    const told = JSON.stringify(shop.problems().map((problem) => problem.error.message))
    expect(answer.status, told).toBe(402)
    expect(answer.body, told).toEqual({
      error: 'settlement_failed',
      reason: 'authorization_expired',
      message: expect.stringMatching(
        /^The payment was not taken: its authorization expired unused at \S+, so nothing was transferred\. Pay again to get the resource\.$/,
      ),
    })
    expect(answer.settlement).toMatchObject({
      success: false,
      errorReason: 'authorization_expired',
      transaction: '',
      payer: buyer(),
    })
    expectOneProblem(
      shop,
      'facilitator',
      'FACILITATOR_TIMEOUT',
      /\(Facilitator settle request timed out after 1000ms\); the buyer was answered 402: The payment was not taken: its authorization expired unused/,
    )
    await shop.expectBooks([])
  })
})
