import type {
  HTTPResponseBody,
  SettlementFailedResponseBody,
  UnpaidResponseBody,
} from '@x402/core/server'
import type { Address } from 'viem'
import {
  formatUsdc,
  type VaultChainName,
  type VaultNetwork,
  vaultChains,
  type X402UsdcPrice,
} from '../index.js'
import type { PaywallScheme } from './paywallSchemes.js'
import {
  paymentAuthorizationInHeader,
  pendingPaymentBody,
  settlementPendingReason,
} from './paywallSettlements.js'

/** x402's client pays at most this much a payment by default (1 USDC in base units). */
const maxDefaultPayment = 1_000_000n

/** What a route's default 402 body without payment tells the buyer. */
export type UnpaidBodyParameters = {
  chain: VaultChainName
  network: VaultNetwork
  payTo: Address
  /** The route's prices: the vault's USDC first, then the stock buyer's asset where there is one. */
  prices: readonly [X402UsdcPrice, ...X402UsdcPrice[]]
  /** The route's schemes, in its order. */
  schemes: readonly [PaywallScheme, ...PaywallScheme[]]
}

/**
 * The default 402 body without payment: what to pay, on which network, in which assets, to whom, and
 * what a buyer with x402's default spend controls must change: allow the vault's USDC where it is not
 * x402's default asset, and raise the $1 cap for a price above it.
 *
 * @param parameters - The chain and network, `payTo`, the route's prices and schemes.
 * @returns The route's `unpaidResponseBody`: JSON `{ error: 'payment_required', message, payment }`.
 * @example
 * const body = unpaidBody({ chain: 'base', network: 'eip155:8453', payTo, prices: [price], schemes: ['exact'] })
 */
export function unpaidBody(parameters: UnpaidBodyParameters): UnpaidResponseBody {
  const { chain, network, payTo, prices, schemes } = parameters
  const [price, stock] = prices
  const [scheme] = schemes
  const amountUsdc = formatUsdc(BigInt(price.amount))
  const buyers: string[] = []
  if (stock) {
    buyers.push(
      `A buyer with x402's default spend controls pays in ${stock.asset} (x402's default test USDC); to pay in the vault's USDC at ${price.asset}, add it to the buyer's allowedAssets.`,
    )
  } else if (vaultChains[chain].x402DefaultUsdc) {
    buyers.push(
      `The USDC at ${price.asset} is not x402's default asset on ${network}: a buyer adds it to its allowedAssets.`,
    )
  }
  if (BigInt(price.amount) > maxDefaultPayment) {
    buyers.push(
      `The price is above x402's default cap of 1 USDC a payment: a buyer raises its cap to pay it.`,
    )
  }
  // An exact-only route reads as it always has; any other names its schemes.
  const upTo = scheme === 'upto' ? 'up to ' : ''
  const how =
    schemes.length === 1 && scheme === 'exact'
      ? 'with x402'
      : `with x402's ${schemes.join(' or ')} scheme${schemes.includes('upto') ? ' (upto settles only what the request used, never more)' : ''}`
  const body = {
    error: 'payment_required',
    message: [
      `Pay ${upTo}${amountUsdc} USDC (${price.amount} base units of the USDC at ${price.asset}) to ${payTo} on ${network} ${how}: see the PAYMENT-REQUIRED header.`,
      ...buyers,
    ].join(' '),
    payment: {
      scheme,
      ...(schemes.length > 1 ? { schemes } : {}),
      network,
      asset: price.asset,
      amount: price.amount,
      amountUsdc,
      payTo,
      ...(stock ? { alsoAccepted: [stock.asset] } : {}),
    },
  }
  return (): HTTPResponseBody => ({ contentType: 'application/json', body })
}

/**
 * The default 402 body when settlement fails: `{ error, reason, message }`; for a settlement still
 * pending, what the buyer must not do and until when, with the payment it concerns.
 */
export const settlementFailedBody: SettlementFailedResponseBody = (context, failure) => ({
  contentType: 'application/json',
  body:
    failure.errorReason === settlementPendingReason
      ? pendingPaymentBody(paymentAuthorizationInHeader(context.paymentHeader), failure)
      : {
          error: 'settlement_failed',
          reason: failure.errorReason,
          // x402 copies the reason code into `errorMessage` when the facilitator gave no words.
          message:
            failure.errorMessage && failure.errorMessage !== failure.errorReason
              ? failure.errorMessage
              : `The payment could not be settled (${failure.errorReason}).`,
        },
})
