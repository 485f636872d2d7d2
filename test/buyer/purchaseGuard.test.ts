/**
 * The buyer's same-purchase guard and its errors, without a chain: what each answer of a paid request
 * tells of its payment (through x402's own client, as its fetch wrapper calls it), the authorization a
 * real x402 payment carries, and how `findVaultError` finds the vault's error in what x402's fetch
 * wrapper throws. The devnet tests (`attachToClient.devnet.test.ts`) run the guard against real sellers.
 */
import { x402Client, x402HTTPClient } from '@x402/core/client'
import { encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { UptoEvmScheme } from '@x402/evm/upto/client'
import { wrapFetchWithPayment } from '@x402/fetch'
import { createPublicClient, createWalletClient, http, numberToHex } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { base } from 'viem/chains'
import { describe, expect, it } from 'vitest'
import {
  createVaultClient,
  findVaultError,
  PaymentFundingError,
  PaymentPolicyError,
  VaultError,
  vaultChains,
} from '../../src/index.js'
import {
  paymentAuthorizationOf,
  signedAuthorizationOf,
} from '../../src/sdk/actions/paymentAuthorization.js'
import { rememberThrown } from '../../src/sdk/buyer/findVaultError.js'
import {
  type PaymentResponseHookContext,
  paymentOutcomeOf,
  purchaseOf,
} from '../../src/sdk/buyer/purchaseGuard.js'
import { x402ExactPermit2ProxyAddress, x402UptoPermit2ProxyAddress } from '../../src/sdk/chains.js'

const usdc = vaultChains.base.addresses.usdc
const payTo = '0x1111111111111111111111111111111111111111' as const
const account = privateKeyToAccount(generatePrivateKey())

/** A seller's 402 for `amount` base units of Base USDC, paid with EIP-3009 or through Permit2. */
function paymentRequired(amount = '500000', method: 'eip3009' | 'permit2' = 'eip3009') {
  return {
    x402Version: 2,
    resource: { url: 'https://api.example.com/report', description: '', mimeType: '' },
    accepts: [
      {
        scheme: 'exact',
        network: 'eip155:8453' as const,
        asset: usdc,
        amount,
        payTo,
        maxTimeoutSeconds: 300,
        extra: { name: 'USD Coin', version: '2', assetTransferMethod: method },
      },
    ],
  }
}

/** A real x402 client signing for Base with a fresh key (nothing is sent anywhere). */
const x402Buyer = () =>
  new x402Client().register('eip155:8453', new ExactEvmScheme(account)).setSpendControls({
    allowedAssets: [{ network: 'eip155:8453', asset: usdc, maxAmountPerPayment: '10000000000' }],
  })

describe('paymentOutcomeOf', () => {
  /** What onPaymentResponse is handed when x402's HTTP client reads an answer with these headers. */
  async function outcomeOf(status: number, headers: Record<string, string>) {
    const client = x402Buyer()
    let seen: PaymentResponseHookContext | undefined
    client.onPaymentResponse(async (context) => {
      seen = context
    })
    const paymentPayload = await client.createPaymentPayload(paymentRequired())
    await new x402HTTPClient(client).processPaymentResult(
      paymentPayload,
      (name) => headers[name] ?? null,
      status,
    )
    return paymentOutcomeOf(seen as PaymentResponseHookContext)
  }
  const settlement = (fields: object) =>
    encodePaymentResponseHeader({ transaction: '', network: 'eip155:8453', ...fields } as never)

  it('a settlement is settled; a new 402 asking for payment is refused', async () => {
    expect(await outcomeOf(200, { 'PAYMENT-RESPONSE': settlement({ success: true }) })).toBe(
      'settled',
    )
    const asked = encodePaymentRequiredHeader(paymentRequired() as never)
    expect(await outcomeOf(402, { 'PAYMENT-REQUIRED': asked })).toBe('refused')
  })

  it("unknown: the seller's settlement_pending 402, any other settlement failure, an answer that says nothing (5xx)", async () => {
    const pending = settlement({
      success: false,
      errorReason: 'settlement_pending',
      transaction: `0x${'ab'.repeat(32)}`,
    })
    expect(await outcomeOf(402, { 'PAYMENT-RESPONSE': pending })).toBe('unknown')
    const failed = settlement({ success: false, errorReason: 'fetch failed' })
    expect(await outcomeOf(402, { 'PAYMENT-RESPONSE': failed })).toBe('unknown')
    expect(await outcomeOf(500, {})).toBe('unknown')
    expect(await outcomeOf(502, { 'Content-Type': 'application/json' })).toBe('unknown')
  })
})

describe('paymentAuthorizationOf and purchaseOf', () => {
  it("reads the authorization of x402's EIP-3009 and Permit2 payments", async () => {
    const client = x402Buyer()
    const eip3009 = await client.createPaymentPayload(paymentRequired())
    const authorization = (eip3009.payload as { authorization: Record<string, string> })
      .authorization
    expect(paymentAuthorizationOf(eip3009)).toMatchObject({
      method: 'eip3009',
      asset: usdc,
      payer: account.address,
      nonce: authorization.nonce,
      validBefore: BigInt(authorization.validBefore as string),
    })
    const permit2 = await client.createPaymentPayload(paymentRequired('500000', 'permit2'))
    const permit = (permit2.payload as { permit2Authorization: Record<string, string> })
      .permit2Authorization
    // Permit2 accepts a transfer up to its deadline, inclusive.
    expect(paymentAuthorizationOf(permit2)).toMatchObject({
      method: 'permit2',
      asset: usdc,
      payer: account.address,
      nonce: numberToHex(BigInt(permit.nonce as string), { size: 32 }),
      validBefore: BigInt(permit.deadline as string) + 1n,
    })
    const accepted = eip3009.accepted
    expect(() => paymentAuthorizationOf({ accepted, payload: { signature: '0x' } })).toThrow(
      /neither an EIP-3009/,
    )
    expect(() =>
      paymentAuthorizationOf({ accepted, payload: { authorization: { from: 'nobody' } } }),
    ).toThrow(/not an address/)
  })

  it("reads the authorization of x402's upto payment (Permit2 to its upto proxy, up to the maximum) only when upto is asked for", async () => {
    const facilitator = '0x2222222222222222222222222222222222222222'
    const required = paymentRequired('50000', 'permit2')
    const accepts = required.accepts.map((accept) => ({
      ...accept,
      scheme: 'upto',
      extra: { ...accept.extra, facilitatorAddress: facilitator },
    }))
    const client = new x402Client()
      .register('eip155:8453', new UptoEvmScheme(account))
      .setSpendControls({ allowedAssets: [{ network: 'eip155:8453', asset: usdc }] })
    const upto = await client.createPaymentPayload({ ...required, accepts })
    const permit = (upto.payload as { permit2Authorization: Record<string, string> })
      .permit2Authorization
    expect(permit.spender).toBe(x402UptoPermit2ProxyAddress)
    expect(signedAuthorizationOf(upto, ['exact', 'upto'])).toEqual({
      method: 'permit2',
      network: 'eip155:8453',
      asset: usdc,
      payer: account.address,
      payTo,
      amount: 50_000n,
      nonce: numberToHex(BigInt(permit.nonce as string), { size: 32 }),
      validBefore: BigInt(permit.deadline as string) + 1n,
    })
    // The seller's side reads exact payments only: an upto one settles less than it authorizes.
    expect(() => paymentAuthorizationOf(upto)).toThrow(
      /^Not an x402 exact EVM payment: it is not an x402 `exact` payment/,
    )
    // An upto payment is Permit2's, to x402's upto proxy: not an EIP-3009 one, not to the exact proxy.
    const { accepted } = upto
    const eip3009 = {
      authorization: {
        from: account.address,
        to: payTo,
        value: '1',
        nonce: `0x${'00'.repeat(32)}`,
        validBefore: '1',
      },
    }
    expect(() => signedAuthorizationOf({ accepted, payload: eip3009 }, ['exact', 'upto'])).toThrow(
      /no `permit2Authorization`/,
    )
    const exactProxy = {
      permit2Authorization: { ...permit, spender: x402ExactPermit2ProxyAddress },
    }
    expect(() =>
      signedAuthorizationOf({ accepted, payload: exactProxy }, ['exact', 'upto']),
    ).toThrow(/is not x402's upto Permit2 proxy/)
  })

  it('a purchase is the URL (the request’s, else the 402’s; no fragment) and the requirements', () => {
    const vault = createVaultClient({
      publicClient: createPublicClient({ chain: base, transport: http('http://127.0.0.1:1') }),
      chain: 'base',
    })
    const payment = { amount: 500_000n, payTo }
    expect(purchaseOf(vault, payment, 'https://api.example.com/a', undefined)).toEqual({
      url: 'https://api.example.com/a',
      network: 'eip155:8453',
      asset: usdc,
      payTo,
      amount: 500_000n,
    })
    expect(
      purchaseOf(vault, payment, 'https://seller.example/a', 'https://API.example.com/b?q=1#top')
        ?.url,
    ).toBe('https://api.example.com/b?q=1')
    expect(purchaseOf(vault, payment, undefined, undefined)).toBeUndefined()
  })
})

describe('findVaultError', () => {
  it("finds the vault's error behind what @x402/fetch throws, and no other", async () => {
    const publicClient = createPublicClient({
      chain: base,
      transport: http('http://127.0.0.1:1'),
    })
    const walletClient = createWalletClient({
      account,
      chain: base,
      transport: http('http://127.0.0.1:1'),
    })
    const vault = createVaultClient({ publicClient, walletClient, chain: 'base' })
    const client = x402Buyer()
    const buyer = vault.attachToClient(client, { maxPerPayment: '0.25', onOverCap: 'block' })
    // A seller that asks 0.5 USDC for everything: the policy refuses it before any RPC call.
    const seller = (async () =>
      new Response('{}', {
        status: 402,
        headers: { 'PAYMENT-REQUIRED': encodePaymentRequiredHeader(paymentRequired() as never) },
      })) as typeof fetch
    const thrown = await wrapFetchWithPayment(
      seller,
      client,
    )('https://api.example.com/report').then(
      () => undefined,
      (error: unknown) => error,
    )
    expect(thrown).toBeInstanceOf(Error)
    expect(thrown).not.toBeInstanceOf(VaultError)
    expect((thrown as Error).cause).toBeUndefined()
    expect((thrown as Error).message).toMatch(
      /^Failed to create payment payload: Payment of 0\.5 USDC/,
    )
    const found = findVaultError(thrown)
    expect(found).toBeInstanceOf(PaymentPolicyError)
    expect(found).toMatchObject({ code: 'PAYMENT_OVER_CAP', details: { cap: 'maxPerPayment' } })
    await buyer.detach()

    // Itself, or in a cause chain; a copy from another version of the package, by its fields.
    const funding = new PaymentFundingError('Payment aborted.', { code: 'RECALL_FAILED' })
    expect(findVaultError(funding)).toBe(funding)
    expect(findVaultError(new Error('wrapped', { cause: funding }))).toBe(funding)
    const otherCopy = Object.assign(new Error('refused'), {
      code: 'PAYMENT_OVER_CAP',
      category: 'precondition',
      retryable: false,
      details: {},
    })
    expect(findVaultError(new Error('wrapped', { cause: otherCopy }))).toBe(otherCopy)
    // Anything else is not the vault's.
    expect(findVaultError(new TypeError('fetch failed'))).toBeUndefined()
    expect(findVaultError('Payment aborted.')).toBeUndefined()
    expect(findVaultError(new Error('Failed to create payment payload: something else'))).toBe(
      undefined,
    )
    // Only the latest errors are kept.
    for (let index = 0; index < 64; index++) {
      rememberThrown(new PaymentFundingError(`filler ${index}`, { code: 'RECALL_FAILED' }))
    }
    expect(findVaultError(new Error(`Failed to create payment payload: ${found?.message}`))).toBe(
      undefined,
    )
  })
})
