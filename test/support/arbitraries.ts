import fc from 'fast-check'

// Generators of hostile input for property tests: what a careless or malicious caller sends where a
// decimal amount, a number or a string is due.

/** Any JSON value, shallow. */
export const json = fc.jsonValue({ maxDepth: 2 })

/** Whitespace, ASCII and not: spaces, tabs, newlines, no-break, em, zero-width spaces, a BOM. */
export const whitespace = fc.constantFrom(
  ' ',
  '\t',
  '\n',
  '\r\n',
  '\u00a0',
  '\u2003',
  '\u200b',
  '\ufeff',
)

/** Digits that are not ASCII: Arabic, Devanagari, Bengali, Thai, fullwidth, math, superscript… */
export const unicodeDigits = fc.string({
  unit: fc.constantFrom('٠', '١', '٢', '٣', '۴', '५', '০', '๓', '１', '𝟙', '²', '⑤', 'Ⅻ'),
  minLength: 1,
  maxLength: 8,
})

/** A decimal in the amount grammar's shape, with up to 8 decimals (so sometimes too many). */
export const decimal = fc
  .tuple(
    fc.bigInt({ min: 0n, max: 10n ** 12n }),
    fc.option(fc.stringMatching(/^[0-9]{1,8}$/), { nil: undefined }),
  )
  .map(([whole, fraction]) => (fraction ? `${whole}.${fraction}` : `${whole}`))

/** Whole numbers of 21 to 101 digits. */
export const hugeNumberText = fc.bigInt({ min: 10n ** 20n, max: 10n ** 100n }).map(String)
/** 0.000…1 with 7 to 400 decimals: below one base unit. */
export const tinyNumberText = fc.integer({ min: 7, max: 400 }).map((n) => `0.${'0'.repeat(n - 1)}1`)

/** JSON numbers, huge, tiny, negative zero and unsafe integers included. */
export const jsonNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(1e308, -1e308, 5e-324, -0, 2 ** 53 + 2, 1e21),
)

/** A short random string repeated to 1,000 to 100,000 characters. */
export const longText = fc
  .tuple(fc.string({ minLength: 1, maxLength: 8 }), fc.integer({ min: 1_000, max: 100_000 }))
  .map(([unit, length]) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length))

/** Almost a decimal: padded, signed, exponents, unicode digits, leading zeros, commas, words. */
export const oddNumberText = fc.oneof(
  fc.tuple(whitespace, decimal, whitespace).map((parts) => parts.join('')),
  fc.tuple(decimal, unicodeDigits).map(([ascii, unicode]) => `${ascii}${unicode}`),
  unicodeDigits,
  decimal.map((text) => `-${text}`),
  decimal.map((text) => `+${text}`),
  fc.integer({ min: -400, max: 400 }).map((exponent) => `1e${exponent}`),
  decimal.map((text) => `0${text}`),
  decimal.map((text) => text.replace('.', ',')),
  fc.constantFrom('', '.', '.5', '5.', 'NaN', 'Infinity', '0x10', '1_000', '$1', '1 USDC'),
)
