/**
 * A seller's first hour on the devnet's Base Sepolia, with a real x402 buyer and the devnet's facilitator:
 * a buyer with x402's default spend controls pays in Circle's test USDC (which the sweep leaves liquid and
 * the ledger lists under its own token), and each usual mistake gets a message that says what to do: the
 * facilitator down or hanging (502, the payment not taken, `onNonFatalError` phase `facilitator`), a
 * `payTo` the key cannot sweep for, a key without ETH, a month of yield shown without moving the clock
 * (after which payments still work). One devnet for the file; the facilitator faults go through a proxy.
 */
import { x402Client } from '@x402/core/client'
import { decodePaymentRequiredHeader } from '@x402/core/http'
import { createPermit2ApprovalTx, toClientEvmSigner } from '@x402/evm'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { wrapFetchWithPayment } from '@x402/fetch'
import { createPublicClient, createWalletClient, erc20Abi, http, isAddressEqual } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { merchantVault, sweepEvents, usdcBalance } from '../../harness/merchant.js'
import { buyerFetch, type Framework, frameworks, paidRoutes } from '../../harness/merchantApps.js'
import type { Devnet } from '../../src/devnet/startDevnet.js'
import { createVaultClient, parseUsdc } from '../../src/index.js'
import type { CreatePaywallOptions } from '../../src/plugins/core.js'
import { createPaywall } from '../../src/plugins/express.js'
import { type DevnetClients, useMerchantDevnet } from '../support/devnet.js'
import { expectVaultError } from '../support/expectVaultError.js'
import { type HttpFaultProxy, startHttpFaultProxy } from '../support/httpFaultProxy.js'

const express = frameworks.find((framework) => framework.name === 'express') as Framework

let devnet: Devnet
let t: DevnetClients
let proxyUrl: string
/** The devnet's facilitator behind a proxy that delays its answers. */
let facilitator: HttpFaultProxy
useMerchantDevnet({ chain: 'base-sepolia', facilitator: true }, async (m) => {
  ;({ devnet, t } = m)
  proxyUrl = m.proxy.url
  facilitator = await startHttpFaultProxy(devnet.facilitatorUrl as string)
})
afterAll(() => facilitator?.close())

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  facilitator.setRule(undefined)
})

/** A buyer set up as x402's docs show: default spend controls, nothing opted in. */
function stockBuyer(baseFetch: typeof fetch = fetch) {
  const network = `eip155:${devnet.chainId}` as const
  const publicClient = createPublicClient({
    chain: devnet.viemChain,
    transport: http(devnet.rpcUrl),
  })
  const account = privateKeyToAccount(devnet.accounts.buyer.privateKey)
  const client = new x402Client().register(
    network,
    new ExactEvmScheme(toClientEvmSigner(account, publicClient)),
  )
  return wrapFetchWithPayment(baseFetch, client)
}

async function openShop(options: Partial<CreatePaywallOptions> = {}, price = '0.5') {
  const events = sweepEvents()
  const paywall = await express.createPaywall({
    vault: merchantVault(devnet, proxyUrl),
    payTo: devnet.accounts.merchant.address,
    facilitator: { url: devnet.facilitatorUrl as string },
    routes: paidRoutes(price),
    sweep: {
      minIdleThreshold: '0',
      debounceMs: 0,
      onIdleDeposit: events.onIdleDeposit,
      onNonFatalError: events.onNonFatalError,
    },
    ...options,
  })
  cleanups.push(() => paywall.close())
  const app = await express.start(paywall.middleware)
  cleanups.push(app.stop)
  return { paywall, events, problems: events.problems, url: `${app.baseUrl}/paid` }
}

const circle = () => devnet.tokens.circleTestUsdc as `0x${string}`
const merchant = () => devnet.accounts.merchant.address

describe('a stock x402 buyer on base-sepolia', () => {
  it('pays in Circle’s test USDC, which stays liquid and shows in the ledger; an opted-in buyer pays the vault’s USDC, which is swept', async () => {
    const vaultStart = await usdcBalance(devnet, merchant())
    const fromBlock = await t.publicClient.getBlockNumber()
    const shop = await openShop({}, '0.5')
    const circleStart = await t.publicClient.readContract({
      address: circle(),
      abi: [
        {
          type: 'function',
          name: 'balanceOf',
          stateMutability: 'view',
          inputs: [{ name: 'a', type: 'address' }],
          outputs: [{ type: 'uint256' }],
        },
      ],
      functionName: 'balanceOf',
      args: [merchant()],
    })
    const paid = await stockBuyer()(shop.url)
    expect(paid.status).toBe(200)
    // No sweep: the route's settlement was in another asset; the vault's USDC did not move.
    await shop.paywall.sweeper.idle()
    expect(shop.events.deposits).toEqual([])
    expect(await usdcBalance(devnet, merchant())).toBe(vaultStart)
    const ledger = await t.readOnly.getLedger({ wallet: merchant(), fromBlock })
    const income = ledger.entries.filter((entry) => entry.kind === 'x402')
    expect(income).toHaveLength(1)
    expect(isAddressEqual(income[0]?.token as `0x${string}`, circle())).toBe(true)
    expect(income[0]).toMatchObject({ amount: parseUsdc('0.5'), x402Method: 'eip3009' })
    expect(income[0]?.balanceAfter).toBe(circleStart + parseUsdc('0.5'))

    // The opted-in buyer pays the vault's USDC (listed first), and the sweep deposits it.
    expect((await buyerFetch(devnet)(shop.url)).status).toBe(200)
    await shop.events.deposited()
    expect(shop.events.deposits.map((deposit) => deposit.idleAmount)).toEqual([
      vaultStart + parseUsdc('0.5'),
    ])
  })

  it('the 402 says how to opt in to the vault’s USDC and about the $1 cap; `acceptDefaultTestUsdc: false` turns the second asset off', async () => {
    const [both, vaultOnly] = await Promise.all([
      openShop({}, '2'),
      openShop({ acceptDefaultTestUsdc: false }),
    ])
    const unpaid = await fetch(both.url)
    expect(unpaid.status).toBe(402)
    const body = await unpaid.json()
    expect(body.message).toContain('allowedAssets')
    expect(body.message).toContain("x402's default cap of 1 USDC")
    expect(body.payment.alsoAccepted).toEqual([circle()])
    const accepts = decodePaymentRequiredHeader(
      unpaid.headers.get('PAYMENT-REQUIRED') as string,
    ).accepts
    expect(accepts.map((accept) => accept.asset.toLowerCase())).toEqual([
      devnet.addresses.usdc.toLowerCase(),
      circle().toLowerCase(),
    ])
    // Above the cap, the stock buyer refuses before signing anything.
    await expect(stockBuyer()(both.url)).rejects.toThrow(/spend|cap|max/i)

    const single = await fetch(vaultOnly.url)
    const header = decodePaymentRequiredHeader(single.headers.get('PAYMENT-REQUIRED') as string)
    expect(header.accepts).toHaveLength(1)
    expect((await single.json()).message).toContain('allowedAssets')
    await expect(stockBuyer()(vaultOnly.url)).rejects.toThrow(/rejected by spendControls/)
  })
})

describe('the facilitator, when it fails', () => {
  it('hanging: verify gives up at its timeout; the buyer gets 502 saying the payment was not taken; the seller hears of it', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    cleanups.push(async () => warn.mockRestore())
    const shop = await openShop({
      facilitator: { url: facilitator.url, timeoutMs: { verify: 300 } },
    })
    facilitator.setRule((path) => (path.endsWith('/verify') ? { delayMs: 5_000 } : undefined))
    const buyerStart = await usdcBalance(devnet, devnet.accounts.buyer.address)
    const started = performance.now()
    const answer = await buyerFetch(devnet)(shop.url)
    expect(performance.now() - started).toBeLessThan(4_000)
    expect(answer.status).toBe(502)
    expect((await answer.json()).error).toMatch(
      /^Facilitator verify request timed out after 300ms\. The payment was not taken/,
    )
    expect(await usdcBalance(devnet, devnet.accounts.buyer.address)).toBe(buyerStart)
    await vi.waitFor(() => expect(shop.problems).toHaveLength(1))
    expect(shop.problems[0]).toMatchObject({ phase: 'facilitator', willRetry: false })
    expect(shop.problems[0]?.error.code).toBe('FACILITATOR_TIMEOUT')
    expect(warn).toHaveBeenCalledWith(
      expect.stringMatching(
        /^x402-vault: The x402 facilitator failed to verify a payment \(Facilitator verify request timed out after 300ms\); the buyer was answered 502: /,
      ),
    )
  })

  it('answering 500 to verify: the buyer gets 502 saying the facilitator failed and the payment was not taken; the seller hears FACILITATOR_HTTP_ERROR, not "could not be reached"', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    cleanups.push(async () => warn.mockRestore())
    const shop = await openShop({ facilitator: { url: facilitator.url } })
    facilitator.setRule((path) =>
      path.endsWith('/verify') ? { status: 500, body: '{"error":"database down"}' } : undefined,
    )
    const buyerStart = await usdcBalance(devnet, devnet.accounts.buyer.address)
    const answer = await buyerFetch(devnet)(shop.url)
    expect(answer.status).toBe(502)
    expect(await answer.json()).toEqual({
      error:
        'The payment facilitator answered HTTP 500, its own failure. The payment was not taken: nothing was transferred. Try again later.',
    })
    expect(await usdcBalance(devnet, devnet.accounts.buyer.address)).toBe(buyerStart)
    await vi.waitFor(() => expect(shop.problems).toHaveLength(1))
    expect(shop.problems[0]).toMatchObject({
      phase: 'facilitator',
      willRetry: false,
      error: { code: 'FACILITATOR_HTTP_ERROR', details: { operation: 'verify' } },
    })
    // The seller's report has the facilitator's own words; the buyer's does not.
    expect(shop.problems[0]?.error.message).toBe(
      'The x402 facilitator failed to verify a payment (Facilitator verify failed (500): {"error":"database down"}); the buyer was answered 502: The payment facilitator answered HTTP 500, its own failure. The payment was not taken: nothing was transferred. Try again later.',
    )
    expect(shop.problems[0]?.error.message).not.toMatch(/could not be reached/)
    expect(warn).toHaveBeenCalledWith(`x402-vault: ${shop.problems[0]?.error.message}`)
  })

  it('down: the buyer gets 502 saying the payment was not taken, at once', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    cleanups.push(async () => warn.mockRestore())
    const proxy = await startHttpFaultProxy(devnet.facilitatorUrl as string)
    const shop = await openShop({ facilitator: { url: proxy.url } })
    await proxy.close() // nothing listens there any more: connection refused
    const answer = await buyerFetch(devnet)(shop.url)
    expect(answer.status).toBe(502)
    const { error } = await answer.json()
    expect(error).toBe(
      'The payment facilitator could not be reached. The payment was not taken: nothing was transferred. Try again later.',
    )
    await vi.waitFor(() => expect(shop.problems.map((p) => p.phase)).toEqual(['facilitator']))
    // The seller's report has the cause the buyer is not shown.
    expect(shop.problems[0]?.error.message).toContain('ECONNREFUSED')
  })
})

describe('a buyer without a Permit2 allowance', () => {
  /**
   * A new buyer set up as x402's README shows (a signer that cannot read the chain) plus the
   * `allowedAssets` line for the vault's USDC, holding some of it, with no Permit2 approval.
   */
  async function readmeBuyer() {
    const account = privateKeyToAccount(generatePrivateKey())
    const hash = await t.walletFor(t.buyer).writeContract({
      address: devnet.addresses.usdc,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [account.address, parseUsdc('5')],
    })
    await t.publicClient.waitForTransactionReceipt({ hash })
    const network = `eip155:${devnet.chainId}` as const
    const client = new x402Client().register(network, new ExactEvmScheme(account))
    client.setSpendControls({ allowedAssets: [{ network, asset: devnet.addresses.usdc }] })
    return { account, pay: wrapFetchWithPayment(fetch, client) }
  }

  it('gets 412 with a body that says what to do; the seller is told once per buyer; approving Permit2 once lets it pay', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    cleanups.push(async () => warn.mockRestore())
    const shop = await openShop({ acceptDefaultTestUsdc: false })
    const buyer = await readmeBuyer()
    const refused = await buyer.pay(shop.url)
    expect(refused.status).toBe(412)
    // x402's own header stays: it says why, for clients that read it.
    const header = refused.headers.get('PAYMENT-REQUIRED')
    expect(decodePaymentRequiredHeader(header as string).error).toBe('permit2_allowance_required')
    const body = await refused.json()
    expect(body).toEqual({
      error: 'permit2_allowance_required',
      message: expect.stringContaining(
        `The wallet ${buyer.account.address} has not approved Permit2 (0x000000000022D473030F116dDEE9F6B43aC78BA3) to spend the token at ${devnet.addresses.usdc}`,
      ),
      payment: {
        network: 'eip155:84532',
        asset: devnet.addresses.usdc,
        payer: buyer.account.address,
        payTo: merchant(),
        amount: '500000',
        permit2: '0x000000000022D473030F116dDEE9F6B43aC78BA3',
      },
    })
    expect(body.message).toContain('approve Permit2 once')
    expect(body.message).toContain('createPermit2ApprovalTx(asset)')
    expect(body.message).toContain('toClientEvmSigner(account, publicClient)')
    expect(body.message).toContain('nothing was transferred')

    await vi.waitFor(() => expect(shop.problems).toHaveLength(1))
    expect(shop.problems[0]).toMatchObject({
      phase: 'payment',
      willRetry: false,
      error: {
        code: 'PERMIT2_ALLOWANCE_REQUIRED',
        details: { payer: buyer.account.address, asset: devnet.addresses.usdc },
      },
    })
    expect(shop.problems[0]?.error.message).toMatch(
      new RegExp(`^A buyer, ${buyer.account.address}, could not pay: it has not approved Permit2`),
    )
    expect(warn).toHaveBeenCalledWith(`x402-vault: ${shop.problems[0]?.error.message}`)

    // The same buyer again: the same answer, and no second report; another buyer is reported.
    expect((await buyer.pay(shop.url)).status).toBe(412)
    const other = await readmeBuyer()
    expect((await other.pay(shop.url)).status).toBe(412)
    await vi.waitFor(() => expect(shop.problems).toHaveLength(2))
    expect(shop.problems.map((problem) => problem.error.details.payer)).toEqual([
      buyer.account.address,
      other.account.address,
    ])

    // Doing what the body says: one approval, then the payment goes through.
    await t.testClient.setBalance({ address: buyer.account.address, value: 10n ** 16n })
    const approval = await t
      .walletFor(buyer.account)
      .sendTransaction(createPermit2ApprovalTx(devnet.addresses.usdc))
    await t.publicClient.waitForTransactionReceipt({ hash: approval })
    expect((await buyer.pay(shop.url)).status).toBe(200)
    expect(shop.problems).toHaveLength(2)
  })
})

describe('start-up mistakes', () => {
  it('a payTo the key cannot sweep for: refused, saying what to change', async () => {
    const error = await expectVaultError(
      express.createPaywall({
        vault: merchantVault(devnet, proxyUrl),
        payTo: devnet.accounts.buyer.address,
        facilitator: { url: devnet.facilitatorUrl as string },
        routes: paidRoutes('0.5'),
        sweep: { minIdleThreshold: '0' },
      }),
      'NOT_AUTHORISED',
    )
    expect(error.message).toContain(`not payTo's`)
    expect(error.message).toContain(
      `x402-vault sweep --setup --wallet ${devnet.accounts.buyer.address} --operator ${merchant()}`,
    )
  })

  it('a key without ETH: registration fails naming the address to fund and roughly how much', async () => {
    const account = privateKeyToAccount(generatePrivateKey())
    const vault = createVaultClient({
      publicClient: t.publicClient,
      walletClient: createWalletClient({
        account,
        chain: devnet.viemChain,
        transport: http(devnet.rpcUrl),
      }),
      chain: 'base-sepolia',
      addresses: devnet.addresses,
    })
    const error = await expectVaultError(
      createPaywall({
        vault,
        payTo: account.address,
        facilitator: { url: devnet.facilitatorUrl as string },
        routes: paidRoutes('0.5'),
        sweep: { minIdleThreshold: '0' },
      }),
      'INSUFFICIENT_FUNDS_FOR_GAS',
    )
    expect(error.message).toContain(`Send ETH on base-sepolia to ${account.address}`)
    expect(error.message).toMatch(/230,000 gas/)
  })
})

describe('a month of yield on the devnet', () => {
  it('grows the position without moving the clock; an x402 payment still works afterwards', async () => {
    await t.vault.depositAndWait({ amount: parseUsdc('100') })
    const before = await t.readOnly.getPosition({ wallet: merchant() })
    const block = await t.publicClient.getBlock()
    await devnet.advanceYield(30 * 24 * 3600)
    const after = await t.readOnly.getPosition({ wallet: merchant() })
    const grown = (after.currentValue as bigint) - (before.currentValue as bigint)
    // About a month at the venues' 3.5–5 %: 0.25–0.45 USDC on 100.
    expect(grown).toBeGreaterThan(parseUsdc('0.25'))
    expect(grown).toBeLessThan(parseUsdc('0.5'))
    const now = await t.publicClient.getBlock()
    expect(now.timestamp - block.timestamp).toBeLessThan(60n)
    const shop = await openShop()
    expect((await buyerFetch(devnet)(shop.url)).status).toBe(200)
    expect((await stockBuyer()(shop.url)).status).toBe(200)
  })
})
