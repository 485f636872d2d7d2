import fc from 'fast-check'
import { maxUint256 } from 'viem'
import { describe, expect, it } from 'vitest'
import { formatUsdc, parseUsdc, VaultValidationError, x402UsdcPrice } from '../../src/index.js'
import { x402UsdcAssets } from '../../src/sdk/seller/x402UsdcPrice.js'
import {
  decimal,
  hugeNumberText,
  json,
  jsonNumber,
  longText,
  oddNumberText,
  tinyNumberText,
  unicodeDigits,
} from '../support/arbitraries.js'

// Any input at all into the two money parsers at the package's edge: either an exact amount that
// round-trips, or a VaultValidationError, never any other throw.

const grammar = /^(0|[1-9][0-9]*)(?:\.([0-9]{1,6}))?$/

/** The base units a decimal string means, by the documented grammar; undefined when outside it. */
function baseUnitsOf(text: unknown): bigint | undefined {
  if (typeof text !== 'string') return undefined
  const match = grammar.exec(text)
  if (!match) return undefined
  const units = BigInt(match[1] as string) * 1_000_000n + BigInt((match[2] ?? '').padEnd(6, '0'))
  return units <= maxUint256 ? units : undefined
}

/** Strings and values someone may pass as an amount, valid ones among them. */
const amountInput = fc.oneof(
  { arbitrary: decimal, weight: 4 },
  fc.bigInt({ min: 0n, max: maxUint256 }).map(formatUsdc),
  fc.constantFrom(formatUsdc(maxUint256), `${formatUsdc(maxUint256)}1`, '1.000000', '0.000001'),
  hugeNumberText,
  tinyNumberText,
  { arbitrary: oddNumberText, weight: 4 },
  unicodeDigits,
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  longText,
  jsonNumber,
  fc.bigInt(),
  json,
  fc.anything(),
)

/** Runs `fn`; returns its value, or undefined after checking it threw a VaultValidationError. */
function valueOrValidationError<T>(fn: () => T, codes: string[]): T | undefined {
  try {
    return fn()
  } catch (error) {
    expect(error).toBeInstanceOf(VaultValidationError)
    expect(codes).toContain((error as VaultValidationError).code)
    return undefined
  }
}

describe('parseUsdc on any input', () => {
  it('accepts exactly the decimal grammar, round-trips with formatUsdc, and throws nothing but VaultValidationError', () => {
    fc.assert(
      fc.property(amountInput, (input) => {
        const parsed = valueOrValidationError(() => parseUsdc(input as string), ['INVALID_AMOUNT'])
        const expected = baseUnitsOf(input)
        expect(parsed).toBe(expected)
        if (parsed === undefined) return
        // format(parse(s)) is s without the fraction's trailing zeros; parse(format(x)) is x.
        const text = input as string
        const canonical = text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text
        expect(formatUsdc(parsed)).toBe(canonical)
        expect(parseUsdc(formatUsdc(parsed))).toBe(parsed)
      }),
      { numRuns: 3_000 },
    )
  })
})

describe('x402UsdcPrice on any input', () => {
  const chain = fc.oneof(
    { arbitrary: fc.constantFrom('base', 'base-sepolia'), weight: 6 },
    fc.string(),
    json,
  )
  const amount = fc.oneof(
    amountInput,
    fc.bigInt({ min: -(2n ** 300n), max: 2n ** 300n }),
    fc.constantFrom(0n, -1n, 1n, maxUint256, maxUint256 + 1n, '0', '0.0', '-0'),
  )

  it('prices exactly the positive amounts in atomic units, and refuses the rest with a VaultValidationError', () => {
    fc.assert(
      fc.property(chain, amount, (chainName, input) => {
        const price = valueOrValidationError(
          () => x402UsdcPrice({ chain: chainName as 'base', amount: input as bigint }),
          ['INVALID_AMOUNT', 'INVALID_ARGUMENT'],
        )
        const knownChain = chainName === 'base' || chainName === 'base-sepolia'
        const units = typeof input === 'bigint' ? input : baseUnitsOf(input)
        const payable = knownChain && units !== undefined && units > 0n && units <= maxUint256
        if (!payable) {
          expect(price).toBeUndefined()
          return
        }
        expect(price).toEqual({
          amount: (units as bigint).toString(),
          asset: x402UsdcAssets[chainName].address,
          extra: expect.objectContaining({
            assetTransferMethod: x402UsdcAssets[chainName].assetTransferMethod,
          }),
        })
      }),
      { numRuns: 3_000 },
    )
  })

  it('throws nothing but VaultValidationError whatever it is given', () => {
    fc.assert(
      fc.property(fc.anything(), (parameters) => {
        valueOrValidationError(
          () => x402UsdcPrice(parameters as never),
          ['INVALID_AMOUNT', 'INVALID_ARGUMENT', 'INVALID_ADDRESS'],
        )
      }),
      { numRuns: 1_000 },
    )
  })
})
