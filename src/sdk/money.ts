import { type Address, getAddress, isAddress, maxUint256, zeroAddress } from 'viem'
import { VaultValidationError } from './errors/classes.js'

/** USDC (and the share token) have 6 decimals. */
export const USDC_DECIMALS = 6
const UNIT = 10n ** BigInt(USDC_DECIMALS)

const usdcPattern = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/

/**
 * Parses a decimal USDC string into base units (6 decimals), strictly.
 *
 * Accepted: ASCII digits with an optional fractional part of 1 to 6 digits (`"10"`, `"0.5"`,
 * `"1234.000001"`). Rejected: empty strings, spaces, signs, exponents, leading zeros (`"01"`),
 * a bare point (`"1."`, `".5"`), more than 6 decimals, thousands separators, values above
 * `2^256 - 1`, and anything that is not a string. Zero parses to `0n`; callers that need a positive
 * amount check for it.
 *
 * @param text - The decimal amount, such as `"12.5"`.
 * @returns The amount in base units, such as `12_500_000n`.
 * @throws {VaultValidationError} `INVALID_AMOUNT` saying what is wrong.
 * @example
 * parseUsdc('12.5') // 12_500_000n
 */
export function parseUsdc(text: string): bigint {
  if (typeof text !== 'string') {
    throw new VaultValidationError('A USDC amount must be a decimal string.', {
      code: 'INVALID_AMOUNT',
      details: { received: typeof text },
    })
  }
  const match = usdcPattern.exec(text)
  if (!match) {
    throw new VaultValidationError(`Invalid USDC amount ${quote(text)}: ${whyInvalid(text)}.`, {
      code: 'INVALID_AMOUNT',
      details: { input: safeEcho(text) },
    })
  }
  const whole = match[1] ?? '0'
  const fraction = match[2] ?? ''
  if (fraction.length > USDC_DECIMALS) {
    throw new VaultValidationError(
      `Invalid USDC amount ${quote(text)}: USDC has at most ${USDC_DECIMALS} decimals.`,
      { code: 'INVALID_AMOUNT', details: { input: safeEcho(text) } },
    )
  }
  const value = BigInt(whole) * UNIT + BigInt(fraction.padEnd(USDC_DECIMALS, '0') || '0')
  if (value > maxUint256) {
    throw new VaultValidationError('The USDC amount is too large.', {
      code: 'INVALID_AMOUNT',
      details: { input: safeEcho(text) },
    })
  }
  return value
}

/**
 * Formats base units (6 decimals) as a decimal USDC string without trailing zeros.
 *
 * @param amount - Base units, such as `12_500_000n`. Negative values get a leading `-`.
 * @returns The decimal string, such as `"12.5"`; whole amounts have no point (`"10"`).
 * @throws {VaultValidationError} `INVALID_AMOUNT` when `amount` is not a bigint.
 * @example
 * formatUsdc(12_500_000n) // '12.5'
 */
export function formatUsdc(amount: bigint): string {
  if (typeof amount !== 'bigint') {
    throw new VaultValidationError('formatUsdc expects a bigint amount in base units.', {
      code: 'INVALID_AMOUNT',
      details: { received: typeof amount },
    })
  }
  const negative = amount < 0n
  const abs = negative ? -amount : amount
  const whole = abs / UNIT
  const fraction = (abs % UNIT).toString().padStart(USDC_DECIMALS, '0').replace(/0+$/, '')
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`
}

export type EvmAddressOptions = {
  /** Accept `0x000…000`. Default `false`: the zero address is never an account. */
  allowZero?: boolean
}

/**
 * Checks an EVM address and returns it checksummed (EIP-55).
 *
 * Accepts `0x` + 40 hex digits in all-lowercase, all-uppercase or correctly checksummed mixed case;
 * rejects a wrong checksum, other lengths, surrounding spaces, and the zero address (unless
 * `allowZero`). Input that looks like a private key or hash is never echoed back.
 *
 * @param text - The address text.
 * @param options - `allowZero`.
 * @returns The checksummed address.
 * @throws {VaultValidationError} `INVALID_ADDRESS` saying what is wrong.
 * @example
 * evmAddress('0xd8da6bf26964af9d7eed9e03e53415d37aa96045') // '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045'
 */
export function evmAddress(text: string, options: EvmAddressOptions = {}): Address {
  if (typeof text !== 'string') {
    throw new VaultValidationError('An address must be a string.', {
      code: 'INVALID_ADDRESS',
      details: { received: typeof text },
    })
  }
  if (!/^0x[0-9a-fA-F]{40}$/.test(text)) {
    const reason = /^0x[0-9a-fA-F]{64}$/.test(text)
      ? 'that is 32 bytes (a private key or a hash), not a 20-byte address'
      : 'expected 0x followed by 40 hex digits'
    throw new VaultValidationError(`Invalid address ${quote(text)}: ${reason}.`, {
      code: 'INVALID_ADDRESS',
      details: { input: safeEcho(text) },
    })
  }
  const hex = text.slice(2)
  const singleCase = hex === hex.toLowerCase() || hex === hex.toUpperCase()
  if (!singleCase && !isAddress(text, { strict: true })) {
    throw new VaultValidationError(
      `Invalid address ${text}: the mixed-case checksum is wrong (EIP-55).`,
      { code: 'INVALID_ADDRESS', details: { input: text } },
    )
  }
  const address = getAddress(`0x${hex.toLowerCase()}`)
  if (!options.allowZero && address === zeroAddress) {
    throw new VaultValidationError('The zero address is not an account.', {
      code: 'INVALID_ADDRESS',
      details: { input: text },
    })
  }
  return address
}

/** Quotes user input for a message, hiding anything that could be a secret (long hex strings). */
function quote(text: string): string {
  const shown = safeEcho(text)
  return shown === undefined ? '(hidden)' : JSON.stringify(shown)
}

/** Input safe to show: short, and not a 32-byte hex string (a private key looks like one). */
function safeEcho(text: string): string | undefined {
  if (/(?:0x)?[0-9a-fA-F]{64}/.test(text)) return undefined
  return text.length > 80 ? `${text.slice(0, 77)}...` : text
}

function whyInvalid(text: string): string {
  if (text === '') return 'it is empty'
  if (/\s/.test(text)) return 'it contains spaces'
  if (/^[+-]/.test(text)) return 'signs are not allowed'
  if (/^[0-9]+(\.[0-9]+)?[eE][+-]?[0-9]+$/.test(text)) return 'exponents are not allowed'
  if (/^0[xX]/.test(text) || /^[0-9a-fA-F]*[a-fA-F][0-9a-fA-F]*$/.test(text)) {
    return 'hex is not a USDC amount; write a decimal such as 12.5'
  }
  if (/[eE]/.test(text)) return 'exponents are not allowed'
  if (/,/.test(text)) return 'use a point as the decimal separator and no thousands separators'
  if (/^\./.test(text) || /\.$/.test(text)) return 'write digits on both sides of the point'
  if (/^0[0-9]/.test(text)) return 'leading zeros are not allowed'
  return 'expected a decimal number such as 12.5'
}

/**
 * A share amount as inputs take it, base units first, with its decimal value beside it:
 * `"199904644 share units (199.904644 shares)"`. Shares have 6 decimals, like USDC.
 *
 * @param shares - Share base units.
 * @returns The labelled amount.
 * @example
 * describeShares(2_500_000n) // '2500000 share units (2.5 shares)'
 */
export function describeShares(shares: bigint): string {
  return `${shares} share units (${formatUsdc(shares)} shares)`
}
