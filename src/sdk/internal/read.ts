import type { Address, Hex, MulticallResponse } from 'viem'
import { getCode } from 'viem/actions'
import { routerAbi } from '../abis/router.js'
import { multicall3Abi } from '../abis/venues.js'
import { multicall3Address } from '../chains.js'
import type { VaultContext } from '../context.js'
import { VaultConfigError, type VaultError, VaultRpcError } from '../errors/classes.js'
import { findError } from '../errors/find.js'
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
 * Multicall3's `getChainId()`: the chain the read's state came from, checked at no extra round trip.
 * A write decided on another chain's state must not be sent.
 */
export const chainIdCall = {
  address: multicall3Address,
  abi: multicall3Abi,
  functionName: 'getChainId',
} as const

/**
 * Checks that a read came from the client's chain. The RPC behind a URL can change chains while a
 * process runs (a node swapped behind a load balancer, a misconfigured failover).
 *
 * @throws {VaultConfigError} `CHAIN_MISMATCH` with `expected` and `actual`.
 */
export function assertReadChain(
  ctx: VaultContext,
  chainIdResult: MulticallResponse<bigint>,
  action: string,
): void {
  if (chainIdResult.status === 'failure') {
    throw toVaultError(chainIdResult.error, { addresses: ctx.addresses, action })
  }
  if (chainIdResult.result === BigInt(ctx.chainId)) return
  throw new VaultConfigError(
    `${action}: the RPC now serves chain ${chainIdResult.result}, not ${ctx.viemChain.name} (${ctx.chainId}), so nothing was sent. Point the RPC URL at a ${ctx.viemChain.name} node.`,
    {
      code: 'CHAIN_MISMATCH',
      details: { expected: ctx.chainId, actual: Number(chainIdResult.result) },
    },
  )
}

/**
 * A vault context plus what a read learned that decodes its failures: `morphoReachable` from the
 * router's `withdrawCapacity()`, read in the same round trip. While it is `false`, a revert no vault ABI
 * knows is the Morpho vault's own error, reported as `MORPHO_UNREACHABLE`.
 */
export type DecodeContext = VaultContext & { readonly morphoReachable?: boolean | undefined }

/** The router's `withdrawCapacity()` as a multicall entry: it never reverts, and says whether Morpho answers. */
export function withdrawCapacityCall(ctx: VaultContext) {
  return {
    address: ctx.addresses.router,
    abi: routerAbi,
    functionName: 'withdrawCapacity',
  } as const
}

/** `ctx` with `morphoReachable` taken from a `withdrawCapacity()` result (unknown when that failed). */
export function withMorphoReachability(
  ctx: VaultContext,
  capacity: MulticallResponse<{ morphoReachable: boolean }>,
): DecodeContext {
  return {
    ...ctx,
    morphoReachable: capacity.status === 'success' ? capacity.result.morphoReachable : undefined,
  }
}

/** What `toVaultError` needs from a context. */
function decodeOptions(ctx: DecodeContext, action?: string) {
  return { addresses: ctx.addresses, morphoReachable: ctx.morphoReachable, action }
}

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
  ctx: DecodeContext,
  result: MulticallResponse<T>,
  map?: (value: T) => U,
): Field<U> {
  if (result.status === 'failure')
    return unavailable(toVaultError(result.error, decodeOptions(ctx)))
  return map ? map(result.result) : (result.result as unknown as U)
}

/** Returns one multicall result's value, or throws its (decoded) error. */
export function resultValue<T>(
  ctx: DecodeContext,
  result: MulticallResponse<T>,
  action?: string,
): T {
  if (result.status === 'failure') throw toVaultError(result.error, decodeOptions(ctx, action))
  return result.result
}

/** Runs one promise, converting any failure to a `VaultError`. */
export async function guard<T>(
  ctx: DecodeContext,
  action: string,
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await run()
  } catch (error) {
    const converted = toVaultError(error, decodeOptions(ctx, action)) satisfies VaultError
    if (converted.code !== 'CONTRACT_NO_DATA') throw converted
    throw await noDataOrBadAnswer(ctx, error, converted, action)
  }
}

/**
 * A call that returned no data: true when the contract has no code there, a malformed RPC answer
 * when it has. The code is read on this error path only, so a read that succeeds pays nothing.
 */
async function noDataOrBadAnswer(
  ctx: DecodeContext,
  error: unknown,
  converted: VaultError,
  action: string,
): Promise<VaultError> {
  const address = findError<{ contractAddress?: Address }>(
    error,
    'ContractFunctionExecutionError',
  )?.contractAddress
  if (!address) return converted
  let code: Hex | undefined
  try {
    code = await getCode(ctx.publicClient, { address })
  } catch (codeError) {
    return toVaultError(codeError, decodeOptions(ctx, action))
  }
  if (!code || code === '0x') return converted
  return new VaultRpcError(
    `${action} failed: The RPC answered the call with no data, though the contract has code there: a malformed answer.`,
    { code: 'RPC_BAD_RESPONSE', retryable: true, cause: error },
  )
}
