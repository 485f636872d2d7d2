import { formatUnits } from 'viem'
import { formatUsdc, isUnavailable } from '../index.js'

/**
 * The commands' JSON vocabulary, the SDK's names (docs/operations.md, "JSON output"): `chain` and
 * `chainId` at the top, `wallet`, `blockNumber` and `txHash`; a USDC amount as `{ usdc, atomic }`; any
 * other integer (shares in base units, block numbers, times in seconds) as a decimal string.
 */

/** An amount in the commands' JSON: the decimal USDC string, and the exact base units beside it. */
export function usdcJson(value: bigint): { usdc: string; atomic: string } {
  return { usdc: formatUsdc(value), atomic: value.toString() }
}

/** {@link usdcJson}, or `null`. */
export function optionalUsdcJson(value: bigint | null): { usdc: string; atomic: string } | null {
  return value === null ? null : usdcJson(value)
}

/**
 * An SDK result as the commands' JSON: each bigint under one of `usdcKeys` becomes `{ usdc, atomic }`,
 * `pricePerShare` becomes `{ usdcPerShare, scaled1e18 }` (as the MCP server gives it), every other
 * bigint a decimal string; an unavailable field stays `{ unavailable: true, code, reason }`.
 */
export function amountsJson(value: unknown, usdcKeys: ReadonlySet<string>, key = ''): unknown {
  if (typeof value === 'bigint') {
    if (key === 'pricePerShare')
      return { usdcPerShare: formatUnits(value, 18), scaled1e18: value.toString() }
    return usdcKeys.has(key) ? usdcJson(value) : value.toString()
  }
  if (Array.isArray(value)) return value.map((item) => amountsJson(item, usdcKeys, key))
  if (value && typeof value === 'object' && !isUnavailable(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([name, inner]) => [name, amountsJson(inner, usdcKeys, name)]),
    )
  }
  return value
}
