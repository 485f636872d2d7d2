import { formatUsdc } from '../index.js'

/** An amount in the commands' JSON: the decimal USDC string, and the exact base units beside it. */
export function usdcJson(value: bigint): { usdc: string; atomic: string } {
  return { usdc: formatUsdc(value), atomic: value.toString() }
}
