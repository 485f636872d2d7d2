import { type Address, maxUint256 } from 'viem'
import { evmAddress, formatUsdc, parseUsdc } from '../index.js'
import type { McpConfig } from './config.js'
import { McpToolError } from './errors.js'

/**
 * Checks the `wallet` input with the SDK's strict address check.
 *
 * @param text - The input.
 * @returns The checksummed address.
 * @throws {McpToolError} `INVALID_ADDRESS` saying what is wrong.
 * @example
 * parseWalletInput('0xd8da6bf26964af9d7eed9e03e53415d37aa96045')
 */
export function parseWalletInput(text: string): Address {
  try {
    return evmAddress(text)
  } catch (error) {
    throw new McpToolError(
      `wallet: ${(error as Error).message} Give the wallet as 0x followed by 40 hex digits.`,
      { code: 'INVALID_ADDRESS' },
    )
  }
}

/**
 * Parses a decimal USDC input strictly (no sign, exponent, spaces or empty string; at most 6
 * decimals), requires it to be above zero and within the server's per-plan cap.
 *
 * @param text - The input, such as `"12.5"`.
 * @param config - For the cap (`VAULT_MCP_MAX_PLAN_USDC`).
 * @returns Base units.
 * @throws {McpToolError} `INVALID_AMOUNT`, or `PLAN_CAP_EXCEEDED` naming the variable and its value.
 * @example
 * parseUsdcInput('12.5', config) // 12_500_000n
 */
export function parseUsdcInput(text: string, config: McpConfig): bigint {
  const howTo = 'Write amountUsdc as a decimal string with at most 6 decimals, such as "12.5".'
  // One rule for every well-formed amount above the cap, however many digits: PLAN_CAP_EXCEEDED
  // (parseUsdc would call one above 2^256 too large, and a smaller one is over the cap anyway).
  if (/^[1-9][0-9]{78,}(?:\.[0-9]{1,6})?$/.test(text)) {
    throw planCapExceeded(config, `The plan is for ${describeInput(text)} USDC`, {})
  }
  let amount: bigint
  try {
    amount = parseUsdc(text)
  } catch (error) {
    throw new McpToolError(`amountUsdc: ${(error as Error).message} ${howTo}`, {
      code: 'INVALID_AMOUNT',
    })
  }
  if (amount === 0n) {
    throw new McpToolError(`amountUsdc must be greater than 0. ${howTo}`, {
      code: 'INVALID_AMOUNT',
    })
  }
  assertWithinPlanCap(amount, config, `The plan is for ${formatUsdc(amount)} USDC`)
  return amount
}

/**
 * Parses the `shares` input: a whole number of share base units, above zero, that fits uint256.
 *
 * @param text - The input, such as `"2500000"`.
 * @returns The share count.
 * @throws {McpToolError} `INVALID_AMOUNT` saying what is wrong.
 * @example
 * parseSharesInput('2500000') // 2_500_000n
 */
export function parseSharesInput(text: string): bigint {
  const howTo =
    'Give shares as a whole number of base units greater than 0 (the share token has 6 decimals: "2500000" is 2.5 shares).'
  // The same digits rule as amountUsdc: no sign, no spaces, no leading zeros ("0100").
  if (!/^(0|[1-9][0-9]*)$/.test(text)) {
    const why = /^0[0-9]/.test(text) ? 'has leading zeros' : 'is not a whole number'
    throw new McpToolError(`shares ${describeInput(text)} ${why}. ${howTo}`, {
      code: 'INVALID_AMOUNT',
    })
  }
  const shares = BigInt(text)
  if (shares === 0n)
    throw new McpToolError(`shares must be greater than 0. ${howTo}`, { code: 'INVALID_AMOUNT' })
  if (shares > maxUint256) {
    throw new McpToolError(`shares does not fit in uint256 (at most 78 digits). ${howTo}`, {
      code: 'INVALID_AMOUNT',
    })
  }
  return shares
}

/**
 * Refuses a plan that moves more USDC than `VAULT_MCP_MAX_PLAN_USDC` allows.
 *
 * @param amount - The USDC the plan moves, in base units.
 * @param config - For the cap.
 * @param what - The start of the message, such as `The plan is for 250 USDC`.
 * @throws {McpToolError} `PLAN_CAP_EXCEEDED`.
 * @example
 * assertWithinPlanCap(250_000_000n, config, 'The plan is for 250 USDC')
 */
export function assertWithinPlanCap(amount: bigint, config: McpConfig, what: string): void {
  if (amount <= config.maxPlanUsdc) return
  throw planCapExceeded(config, what, { amount })
}

function planCapExceeded(config: McpConfig, what: string, details: { amount?: bigint }) {
  const cap = formatUsdc(config.maxPlanUsdc)
  return new McpToolError(
    `${what}, above this server's per-plan cap of ${cap} USDC (VAULT_MCP_MAX_PLAN_USDC = ${cap}). Plan at most ${cap} USDC per call, or ask whoever runs the server to raise VAULT_MCP_MAX_PLAN_USDC.`,
    { code: 'PLAN_CAP_EXCEEDED', details: { ...details, cap: config.maxPlanUsdc } },
  )
}

function describeInput(text: string): string {
  if (text === '') return '(empty)'
  return JSON.stringify(text.length > 30 ? `${text.slice(0, 27)}...` : text)
}

/**
 * What to say when `VAULT_MCP_MAX_PLAN_USDC` is below the vault's minimum deposit: no deposit can
 * be planned, whatever the amount.
 *
 * @param cap - The per-plan cap, in base units.
 * @param minimum - The vault's `MIN_DEPOSIT`, in base units.
 * @returns One sentence naming both and the fix.
 * @example
 * capBelowMinimumText(5_000_000n, 10_000_000n)
 */
export function capBelowMinimumText(cap: bigint, minimum: bigint): string {
  return `No deposit can be planned by this server: its per-plan cap (VAULT_MCP_MAX_PLAN_USDC = ${formatUsdc(cap)}) is below the vault's minimum deposit of ${formatUsdc(minimum)} USDC. Whoever runs the server must set VAULT_MCP_MAX_PLAN_USDC to at least ${formatUsdc(minimum)}.`
}
