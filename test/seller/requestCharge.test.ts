/**
 * What a handler's `paywall.charge` settles, read from the request's verified x402 payment header: an
 * `upto` charge from 0 to the accepted maximum is settled as charged, one above it is refused before
 * anything is set, an `exact` payment settles its price, and a request without a payment is told so.
 */
import { encodePaymentSignatureHeader } from '@x402/core/http'
import type { PaymentPayload } from '@x402/core/types'
import { describe, expect, it } from 'vitest'
import { VaultValidationError } from '../../src/index.js'
import { requestCharge } from '../../src/plugins/requestCharge.js'

const header = (scheme: string, amount = '50000') =>
  encodePaymentSignatureHeader({
    x402Version: 2,
    accepted: {
      scheme,
      network: 'eip155:8453',
      asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      amount,
      payTo: '0x0000000000000000000000000000000000000001',
      maxTimeoutSeconds: 300,
      extra: {},
    },
    payload: {},
  } as PaymentPayload)

function refusal(call: () => unknown): VaultValidationError {
  try {
    call()
  } catch (error) {
    expect(error).toBeInstanceOf(VaultValidationError)
    return error as VaultValidationError
  }
  throw new Error('expected a refusal')
}

describe('requestCharge', () => {
  it('settles an upto charge as charged, from 0 to the maximum, in base units or decimal USDC', () => {
    expect(requestCharge(header('upto'), 12_345n)).toEqual({
      settles: 12_345n,
      override: { amount: '12345' },
    })
    expect(requestCharge(header('upto'), '0.05')).toEqual({
      settles: 50_000n,
      override: { amount: '50000' },
    })
    expect(requestCharge(header('upto'), 0n)).toEqual({ settles: 0n, override: { amount: '0' } })
    expect(requestCharge(header('upto'), '0')).toEqual({ settles: 0n, override: { amount: '0' } })
  })

  it('refuses a charge above the maximum, saying both, and sets nothing', () => {
    const error = refusal(() => requestCharge(header('upto'), 50_001n))
    expect(error.code).toBe('INVALID_AMOUNT')
    expect(error.details).toEqual({ field: 'amount', charge: '50001', maximum: '50000' })
    expect(error.message).toBe(
      "The charge of 0.050001 USDC is above this request's maximum of 0.05 USDC (the route's price), which is all the buyer authorised: nothing was charged for it. Charge at most 0.05 USDC.",
    )
  })

  it('refuses negative and malformed charges', () => {
    expect(refusal(() => requestCharge(header('upto'), -1n)).code).toBe('INVALID_AMOUNT')
    expect(refusal(() => requestCharge(header('upto'), '-0.01')).code).toBe('INVALID_AMOUNT')
    expect(refusal(() => requestCharge(header('upto'), '0.0000001')).code).toBe('INVALID_AMOUNT')
    expect(refusal(() => requestCharge(header('upto'), 5 as unknown as bigint)).code).toBe(
      'INVALID_AMOUNT',
    )
  })

  it('an exact payment settles its price whatever the charge, with no override', () => {
    expect(requestCharge(header('exact'), 1n)).toEqual({ settles: 50_000n })
  })

  it('a request without an x402 payment is told that charge works behind the paywall', () => {
    for (const missing of [undefined, '', 'not base64 json']) {
      const error = refusal(() => requestCharge(missing, 1n))
      expect(error.code).toBe('INVALID_ARGUMENT')
      expect(error.message).toMatch(/this request carries no x402 payment/)
    }
  })
})
