import type { Address, ContractFunctionParameters, MulticallResponse } from 'viem'
import { getBlock, multicall } from 'viem/actions'
import { routerAbi, shareTokenAbi, usdcAbi } from '../abis/index.js'
import type { VaultContext } from '../context.js'
import { VaultError, VaultRpcError } from '../errors/classes.js'
import { findError } from '../errors/find.js'
import { blockTimestampCall, guard, multicallOptions, resultValue } from '../internal/read.js'
import {
  type Balances,
  type Draft,
  type LedgerEntry,
  type LedgerPositionPoint,
  ledgerAction,
} from './types.js'

/** The most position reads `positionHistory` makes between the opening and the closing one. */
const maxHistoryReads = 100
/** Reads of blocks or positions sent at once. */
const readConcurrency = 8

/** The entries with their block times: from the logs where the RPC sent them, else from the blocks. */
export async function withTimestamps(
  ctx: VaultContext,
  drafts: Draft[],
): Promise<Omit<LedgerEntry, 'balanceAfter'>[]> {
  const missing = [
    ...new Set(drafts.filter((d) => d.timestamp === undefined).map((d) => d.blockNumber)),
  ]
  const times = new Map<bigint, bigint>()
  await forEachLimited(missing, async (blockNumber) => {
    const block = await guard(ctx, `${ledgerAction} (block ${blockNumber})`, () =>
      getBlock(ctx.publicClient, { blockNumber }),
    )
    times.set(blockNumber, block.timestamp)
  })
  return drafts.map((draft) => ({
    ...draft,
    timestamp: draft.timestamp ?? (times.get(draft.blockNumber) as bigint),
  }))
}

/** Runs `run` over the items, a few at once (the ledger's per-block and per-transaction reads). */
export async function forEachLimited<T>(
  items: T[],
  run: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < items.length) await run(items[next++] as T)
  }
  await Promise.all(Array.from({ length: Math.min(readConcurrency, items.length) }, worker))
}

/**
 * The wallet's token balances, shares, position value and cost basis at the end of one block, in one
 * `eth_call`; the token symbols too.
 */
export async function readBalances(
  ctx: VaultContext,
  wallet: Address,
  tokens: Address[],
  blockNumber: bigint,
  options: { opening?: boolean } = {},
): Promise<Balances> {
  const { router, shareToken } = ctx.addresses
  const what = `${ledgerAction} (balances at block ${blockNumber})`
  const contracts: ContractFunctionParameters[] = [
    blockTimestampCall,
    { address: shareToken, abi: shareTokenAbi, functionName: 'balanceOf', args: [wallet] },
    { address: router, abi: routerAbi, functionName: 'getPosition', args: [wallet] },
    ...tokens.map((token) => ({
      address: token,
      abi: usdcAbi,
      functionName: 'balanceOf',
      args: [wallet],
    })),
    ...tokens.map((token) => ({ address: token, abi: usdcAbi, functionName: 'symbol' })),
  ]
  const results = (await atBlock(ctx, blockNumber, what, () =>
    multicall(ctx.publicClient, { ...multicallOptions, blockNumber, contracts }),
  )) as MulticallResponse<unknown>[]
  const value = <T>(result: MulticallResponse<unknown> | undefined) =>
    resultValue(ctx, result as MulticallResponse<T>, what)
  // A ledger that opens before the vault (or a token) was deployed reads nothing there: no contract
  // means no balance and no position. Only at the opening block: at the closing one it is a mistake.
  const amount = <T>(result: MulticallResponse<unknown> | undefined, none: T): T =>
    options.opening && result?.status === 'failure' && noContract(result.error)
      ? none
      : value<T>(result)
  const [timestamp, shares, held, ...rest] = results
  const [costBasis, positionValue] = amount<readonly [bigint, bigint, bigint]>(held, [0n, 0n, 0n])
  return {
    blockNumber,
    timestamp: value<bigint>(timestamp),
    balances: rest.slice(0, tokens.length).map((result) => amount(result, 0n)),
    symbols: rest
      .slice(tokens.length)
      .map((result) => (result.status === 'success' ? String(result.result) : '')),
    position: { shares: amount(shares, 0n), value: positionValue, costBasis },
  }
}

/** Whether a call failed because nothing answered it: no contract at the address at that block. */
function noContract(error: unknown): boolean {
  return findError(error, 'ContractFunctionZeroDataError', 'AbiDecodingZeroDataError') !== undefined
}

/** The position after each block with a sweep or a withdrawal (at most `maxHistoryReads`), between the ends. */
export async function readPositionHistory(
  ctx: VaultContext,
  wallet: Address,
  entries: LedgerEntry[],
  opening: Balances,
  closing: Balances,
): Promise<LedgerPositionPoint[]> {
  const moves = [
    ...new Set(
      entries
        .filter((e) => e.kind === 'sweep' || e.kind === 'withdrawal')
        .map((e) => e.blockNumber)
        .filter((block) => block !== closing.blockNumber),
    ),
  ]
  const picked =
    moves.length <= maxHistoryReads
      ? moves
      : Array.from(
          { length: maxHistoryReads },
          (_, i) => moves[Math.floor((i * moves.length) / maxHistoryReads)] as bigint,
        )
  const points = new Map<bigint, LedgerPositionPoint>()
  await forEachLimited(picked, async (blockNumber) => {
    const what = `${ledgerAction} (position at block ${blockNumber})`
    const [timestamp, shares, held] = await atBlock(ctx, blockNumber, what, () =>
      multicall(ctx.publicClient, {
        ...multicallOptions,
        blockNumber,
        contracts: [
          blockTimestampCall,
          {
            address: ctx.addresses.shareToken,
            abi: shareTokenAbi,
            functionName: 'balanceOf',
            args: [wallet],
          },
          {
            address: ctx.addresses.router,
            abi: routerAbi,
            functionName: 'getPosition',
            args: [wallet],
          },
        ],
      }),
    )
    points.set(blockNumber, {
      blockNumber,
      timestamp: resultValue(ctx, timestamp, what),
      shares: resultValue(ctx, shares, what),
      value: resultValue(ctx, held, what)[1],
    })
  })
  const point = (b: Balances): LedgerPositionPoint => ({
    blockNumber: b.blockNumber,
    timestamp: b.timestamp,
    shares: b.position.shares,
    value: b.position.value,
  })
  return [
    point(opening),
    ...picked.map((b) => points.get(b) as LedgerPositionPoint),
    point(closing),
  ]
}

/**
 * Runs a read pinned to a block. An RPC that keeps no state that old (not an archive node) answers with
 * its own words ("missing trie node", "header not found", …): that becomes a message saying so.
 */
export async function atBlock<T>(
  ctx: VaultContext,
  blockNumber: bigint,
  what: string,
  read: () => Promise<T>,
): Promise<T> {
  try {
    return await guard(ctx, what, read)
  } catch (error) {
    if (error instanceof VaultError && error.category === 'rpc' && noStateAt(error)) {
      throw new VaultRpcError(
        `${what}: the RPC cannot read the chain's state at block ${blockNumber}; it keeps no state that old. Use an archive RPC, or scan from a later block.`,
        { code: 'RPC_ERROR', retryable: false, details: { blockNumber }, cause: error },
      )
    }
    throw error
  }
}

function noStateAt(error: Error): boolean {
  const text = [error.message, String((error.cause as Error | undefined)?.message ?? '')].join(' ')
  return /missing trie node|historical state|state (is )?not available|header not found|pruned|unknown block|block not found/i.test(
    text,
  )
}
