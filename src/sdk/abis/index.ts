import { type Abi, toFunctionSelector } from 'viem'
import { formatAbiItem } from 'viem/utils'
import { feeCollectorAbi } from './feeCollector.js'
import { oracleAbi } from './oracle.js'
import { routerAbi } from './router.js'
import { shareTokenAbi } from './shareToken.js'
import { usdcAbi } from './usdc.js'

export { feeCollectorAbi } from './feeCollector.js'
export { oracleAbi } from './oracle.js'
export { routerAbi } from './router.js'
export { shareTokenAbi } from './shareToken.js'
export { usdcAbi } from './usdc.js'

let vaultErrors: Abi | undefined

/**
 * Every custom error of the router, oracle, fee collector, share token and USDC, de-duplicated by
 * selector. Used to decode a revert whatever contract it bubbled up from. Built on first use: hashing
 * every error's signature took about 20 ms of `import('x402-vault')`, for a list only a revert reads.
 *
 * @returns The errors, each selector once.
 * @example
 * decodeErrorResult({ abi: vaultErrorsAbi(), data: '0x2c5211c6' }).errorName // 'InvalidAmount'
 */
export function vaultErrorsAbi(): Abi {
  if (vaultErrors) return vaultErrors
  const seen = new Set<string>()
  const errors: Abi[number][] = []
  for (const abi of [routerAbi, oracleAbi, feeCollectorAbi, shareTokenAbi, usdcAbi]) {
    for (const item of abi) {
      if (item.type !== 'error') continue
      const selector = toFunctionSelector(formatAbiItem(item))
      if (seen.has(selector)) continue
      seen.add(selector)
      errors.push(item)
    }
  }
  vaultErrors = errors
  return errors
}
