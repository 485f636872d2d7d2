import type { MulticallResponse } from 'viem'
import { multicall3Abi } from '../abis/venues.js'
import { multicall3Address } from '../chains.js'
import type { VaultContext } from '../context.js'
import type { VaultError } from '../errors/classes.js'
import { toVaultError } from '../errors/toVaultError.js'
import { type Field, unavailable } from '../field.js'

/** Options for every SDK multicall: per-call failures, Multicall3 at its canonical address, one `eth_call`. */
export const multicallOptions = {
  allowFailure: true,
  multicallAddress: multicall3Address,
  batchSize: 0,
} as const

/** Multicall3's own block getters, placed first in every read so its block is known. */
export const blockNumberCall = {
  address: multicall3Address,
  abi: multicall3Abi,
  functionName: 'getBlockNumber',
} as const
export const blockTimestampCall = {
  address: multicall3Address,
  abi: multicall3Abi,
  functionName: 'getCurrentBlockTimestamp',
} as const

/**
 * Returns the block of a multicall from its first two results (Multicall3's getters).
 * If they failed, the whole call failed (RPC trouble, no Multicall3): that error is thrown.
 */
export function blockOf(
  ctx: VaultContext,
  numberResult: MulticallResponse<bigint>,
  timestampResult: MulticallResponse<bigint>,
  action: string,
): { blockNumber: bigint; blockTimestamp: bigint } {
  if (numberResult.status === 'failure')
    throw toVaultError(numberResult.error, { addresses: ctx.addresses, action })
  if (timestampResult.status === 'failure') {
    throw toVaultError(timestampResult.error, { addresses: ctx.addresses, action })
  }
  return { blockNumber: numberResult.result, blockTimestamp: timestampResult.result }
}

/** Turns one multicall result into a field: the value, or `Unavailable` with the decoded reason. */
export function fieldOf<T, U = T>(
  ctx: VaultContext,
  result: MulticallResponse<T>,
  map?: (value: T) => U,
): Field<U> {
  if (result.status === 'failure')
    return unavailable(toVaultError(result.error, { addresses: ctx.addresses }))
  return map ? map(result.result) : (result.result as unknown as U)
}

/** Returns one multicall result's value, or throws its (decoded) error. */
export function resultValue<T>(
  ctx: VaultContext,
  result: MulticallResponse<T>,
  action?: string,
): T {
  if (result.status === 'failure')
    throw toVaultError(result.error, { addresses: ctx.addresses, action })
  return result.result
}

/** Runs one promise, converting any failure to a `VaultError`. */
export async function guard<T>(
  ctx: VaultContext,
  action: string,
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await run()
  } catch (error) {
    throw toVaultError(error, { addresses: ctx.addresses, action }) satisfies VaultError
  }
}
