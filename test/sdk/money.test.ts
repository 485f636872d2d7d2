import fc from 'fast-check'
import { getAddress, maxUint256, zeroAddress } from 'viem'
import { describe, expect, it } from 'vitest'
import { evmAddress, formatUsdc, parseUsdc, VaultValidationError } from '../../src/index.js'

function expectValidation(fn: () => unknown, code: string) {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(VaultValidationError)
    expect((error as VaultValidationError).code).toBe(code)
    expect((error as VaultValidationError).category).toBe('validation')
    return error as VaultValidationError
  }
  throw new Error('expected a validation error')
}

describe('parseUsdc / formatUsdc', () => {
  it('parses typical amounts', () => {
    expect(parseUsdc('0')).toBe(0n)
    expect(parseUsdc('10')).toBe(10_000_000n)
    expect(parseUsdc('0.5')).toBe(500_000n)
    expect(parseUsdc('12.345678')).toBe(12_345_678n)
    expect(parseUsdc('1.000000')).toBe(1_000_000n)
    expect(parseUsdc('0.000001')).toBe(1n)
  })

  it('formats typical amounts without trailing zeros', () => {
    expect(formatUsdc(0n)).toBe('0')
    expect(formatUsdc(10_000_000n)).toBe('10')
    expect(formatUsdc(500_000n)).toBe('0.5')
    expect(formatUsdc(1n)).toBe('0.000001')
    expect(formatUsdc(-1_500_000n)).toBe('-1.5')
    expect(formatUsdc(maxUint256)).toBe(
      '115792089237316195423570985008687907853269984665640564039457584007913129.639935',
    )
  })

  it('round-trips any base-unit amount: parse(format(x)) = x', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: maxUint256 }), (amount) => {
        expect(parseUsdc(formatUsdc(amount))).toBe(amount)
      }),
      { numRuns: 2000 },
    )
  })

  it('round-trips canonical decimal text: format(parse(s)) = s', () => {
    const canonical = fc
      .tuple(
        fc.bigInt({ min: 0n, max: 10n ** 30n }),
        fc.option(fc.stringMatching(/^[0-9]{0,5}[1-9]$/), { nil: undefined }),
      )
      .map(([whole, fraction]) => (fraction ? `${whole}.${fraction}` : `${whole}`))
    fc.assert(
      fc.property(canonical, (text) => {
        expect(formatUsdc(parseUsdc(text))).toBe(text)
      }),
      { numRuns: 2000 },
    )
  })

  it('accepts trailing zeros up to 6 decimals and keeps the value', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 20n }),
        fc.integer({ min: 1, max: 6 }),
        (whole, zeros) => {
          expect(parseUsdc(`${whole}.${'0'.repeat(zeros)}`)).toBe(whole * 1_000_000n)
        },
      ),
    )
  })

  it('rejects any text with a character outside digits and one point', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 12 }).filter((s) => /[^0-9.]/.test(s)),
        (text) => {
          expectValidation(() => parseUsdc(text), 'INVALID_AMOUNT')
        },
      ),
      { numRuns: 1000 },
    )
  })

  it('rejects more than 6 decimals', () => {
    fc.assert(
      fc.property(fc.nat(), fc.stringMatching(/^[0-9]{7,12}$/), (whole, fraction) => {
        expectValidation(() => parseUsdc(`${whole}.${fraction}`), 'INVALID_AMOUNT')
      }),
    )
  })

  const malformed: [string, unknown][] = [
    ['empty', ''],
    ['space only', ' '],
    ['leading space', ' 1'],
    ['trailing space', '1 '],
    ['inner space', '1 000'],
    ['plus sign', '+1'],
    ['minus sign', '-1'],
    ['negative zero', '-0'],
    ['exponent', '1e6'],
    ['upper exponent', '1E6'],
    ['exponent with fraction', '1.5e3'],
    ['hex', '0x10'],
    ['comma decimal', '1,5'],
    ['thousands separator', '1,000.00'],
    ['underscore', '1_000'],
    ['bare point', '.'],
    ['leading point', '.5'],
    ['trailing point', '5.'],
    ['two points', '1.2.3'],
    ['leading zero', '01'],
    ['leading zeros with fraction', '00.5'],
    ['seven decimals', '0.0000001'],
    ['seven decimals of zeros', '1.0000000'],
    ['NaN', 'NaN'],
    ['Infinity', 'Infinity'],
    ['unicode digits', '١٢'],
    ['fullwidth digits', '１２'],
    ['newline', '1\n'],
    ['tab', '\t1'],
    ['dollar sign', '$1'],
    ['unit suffix', '1 USDC'],
    ['too large', `${maxUint256}`],
    ['a number', 1],
    ['a bigint', 1n],
    ['null', null],
    ['undefined', undefined],
    ['an object', { amount: '1' }],
  ]
  it.each(malformed)('rejects %s', (_name, input) => {
    expectValidation(() => parseUsdc(input as string), 'INVALID_AMOUNT')
  })

  it.each(['0xdead', 'deadbeef', '0X1F'])('says that hex (%s) is not a USDC amount', (input) => {
    expect(() => parseUsdc(input)).toThrowError(/hex is not a USDC amount/)
  })

  it('still calls an exponent an exponent', () => {
    expect(() => parseUsdc('1e6')).toThrowError(/exponents are not allowed/)
    expect(() => parseUsdc('1.5E3')).toThrowError(/exponents are not allowed/)
  })

  it('never echoes a private key back', () => {
    const key = `0x${'ab'.repeat(32)}`
    const error = expectValidation(() => parseUsdc(key), 'INVALID_AMOUNT')
    expect(error.message).not.toContain('abababab')
    expect(JSON.stringify(error.toJSON())).not.toContain('abababab')
  })

  it('formatUsdc rejects non-bigints', () => {
    expectValidation(() => formatUsdc(1 as unknown as bigint), 'INVALID_AMOUNT')
  })
})

describe('evmAddress', () => {
  const vitalik = '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045'

  it('checksums lowercase and uppercase input', () => {
    expect(evmAddress(vitalik.toLowerCase())).toBe(vitalik)
    expect(evmAddress(`0x${vitalik.slice(2).toUpperCase()}`)).toBe(vitalik)
    expect(evmAddress(vitalik)).toBe(vitalik)
  })

  it('round-trips random addresses in any case', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9a-f]{40}$/), fc.boolean(), (hex, upper) => {
        const address = `0x${upper ? hex.toUpperCase() : hex}`
        if (BigInt(address) === 0n) return
        expect(evmAddress(address)).toBe(getAddress(address))
      }),
    )
  })

  const bad: [string, unknown][] = [
    ['a wrong checksum', '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96046'.replace('d8dA', 'D8dA')],
    ['too short', '0x1234'],
    ['too long', `${vitalik}00`],
    ['no 0x', vitalik.slice(2)],
    ['spaces', ` ${vitalik}`],
    ['non-hex', `0x${'g'.repeat(40)}`],
    ['an ENS name', 'vitalik.eth'],
    ['empty', ''],
    ['the zero address', zeroAddress],
    ['a number', 42],
    ['undefined', undefined],
  ]
  it.each(bad)('rejects %s', (_name, input) => {
    expectValidation(() => evmAddress(input as string), 'INVALID_ADDRESS')
  })

  it('accepts the zero address when asked', () => {
    expect(evmAddress(zeroAddress, { allowZero: true })).toBe(zeroAddress)
  })

  it('recognises a private key without echoing it', () => {
    const key = `0x${'cd'.repeat(32)}`
    const error = expectValidation(() => evmAddress(key), 'INVALID_ADDRESS')
    expect(error.message).toMatch(/private key/)
    expect(error.message).not.toContain('cdcdcdcd')
    expect(JSON.stringify(error.toJSON())).not.toContain('cdcdcdcd')
  })
})
