import { decodePaymentSignatureHeader } from '@x402/core/http'
import { formatUsdc, parseUsdc, VaultValidationError } from '../index.js'

/** What a paid request settles once its handler has charged, and how x402 is told. */
export type RequestCharge = {
  /** Base units settled after the handler answers. */
  settles: bigint
  /** x402's settlement overrides to set on the response (an `upto` payment); none on `exact`. */
  override?: { amount: string } | undefined
}

/**
 * What a handler's charge settles for the paid request whose x402 payment header is given. The payment
 * reached the handler, so x402 has verified that what it accepted is one of the route's requirements:
 * its `amount` is the route's price, the most an `upto` request may cost. An `upto` charge from 0 to that
 * maximum is settled as charged (0 settles nothing); above it, it is refused here, before anything is
 * set, so that the buyer is never asked for more than it authorised. An `exact` payment settles the
 * price whatever the charge.
 *
 * @param paymentHeader - The request's `PAYMENT-SIGNATURE` (or `X-PAYMENT`) header.
 * @param amount - The charge: USDC as a decimal string, or a bigint of base units.
 * @returns What will be settled, and the override to set.
 * @throws {VaultValidationError} `INVALID_AMOUNT` for a charge above the maximum, negative or
 *   malformed; `INVALID_ARGUMENT` for a request without a verified x402 payment.
 * @example
 * const { settles, override } = requestCharge(req.header('payment-signature'), '0.004')
 */
export function requestCharge(
  paymentHeader: string | undefined,
  amount: string | bigint,
): RequestCharge {
  const charge = chargeAmount(amount)
  const accepted = acceptedOf(paymentHeader)
  const maximum = accepted.amount
  if (accepted.scheme !== 'upto') return { settles: maximum }
  if (charge > maximum) {
    throw new VaultValidationError(
      `The charge of ${formatUsdc(charge)} USDC is above this request's maximum of ${formatUsdc(maximum)} USDC (the route's price), which is all the buyer authorised: nothing was charged for it. Charge at most ${formatUsdc(maximum)} USDC.`,
      {
        code: 'INVALID_AMOUNT',
        details: { field: 'amount', charge: charge.toString(), maximum: maximum.toString() },
      },
    )
  }
  return { settles: charge, override: { amount: charge.toString() } }
}

function chargeAmount(amount: string | bigint): bigint {
  if (typeof amount === 'bigint') {
    if (amount < 0n) {
      throw new VaultValidationError(`A charge cannot be negative (${amount} base units).`, {
        code: 'INVALID_AMOUNT',
        details: { field: 'amount' },
      })
    }
    return amount
  }
  if (typeof amount !== 'string') {
    throw new VaultValidationError(
      'A charge must be USDC as a decimal string (such as `"0.004"`) or a bigint of base units.',
      { code: 'INVALID_AMOUNT', details: { field: 'amount', received: typeof amount } },
    )
  }
  return parseUsdc(amount)
}

/** The scheme and amount the request's verified payment accepted. */
function acceptedOf(paymentHeader: string | undefined): { scheme: string; amount: bigint } {
  let accepted: { scheme?: unknown; amount?: unknown } | undefined
  try {
    if (paymentHeader) accepted = decodePaymentSignatureHeader(paymentHeader).accepted
  } catch {
    accepted = undefined
  }
  if (
    typeof accepted?.scheme !== 'string' ||
    typeof accepted.amount !== 'string' ||
    !/^\d+$/.test(accepted.amount)
  ) {
    throw new VaultValidationError(
      '`charge` works in the handler of a paid route, after the paywall middleware has verified the payment: this request carries no x402 payment.',
      { code: 'INVALID_ARGUMENT', details: { field: 'response' } },
    )
  }
  return { scheme: accepted.scheme, amount: BigInt(accepted.amount) }
}
