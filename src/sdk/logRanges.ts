import type { AbiEvent, Address, Log } from 'viem'
import { getLogs } from 'viem/actions'
import type { VaultContext } from './context.js'
import { findCause } from './errors/find.js'
import { readRpcFailure } from './errors/rpc.js'
import { toVaultError } from './errors/toVaultError.js'

/*
 * Reading logs over many blocks from RPCs that limit `eth_getLogs`: public and hosted RPCs refuse a
 * block range above their own limit (500, 2,000, 10,000 blocks…) or a result above so many logs, each
 * with its own message. The scan walks the range in chunks of at most `maxRange` blocks; when the RPC
 * says the range is too large, the chunk shrinks to the size its message names, else to half, down to
 * one block, and the smaller limit is kept for the next scan. Other failures end the scan: the caller
 * backs off and scans again from the block it reached. This is the one place in the package that
 * scans logs over many blocks (the ledger and `sweep --watch` use it).
 */

/** What a scan learns about the RPC: the largest block range it asks for. Shared across scans. */
export type LogRangeLimit = { maxRange: bigint }

/** A chunk of a scan: its blocks (inclusive) and the logs in them. */
export type LogChunk<event extends AbiEvent> = {
  fromBlock: bigint
  toBlock: bigint
  logs: Log<bigint, number, false, event, true>[]
}

export type GetLogsInRangesParameters<event extends AbiEvent> = {
  address: Address
  event: event
  /** Indexed arguments to filter on, as viem's `getLogs` takes them. */
  args?: Record<string, unknown> | undefined
  fromBlock: bigint
  toBlock: bigint
  /** The range limit, updated when the RPC refuses a range. */
  limit: LogRangeLimit
}

/** An inclusive range of blocks. */
export type BlockRange = { fromBlock: bigint; toBlock: bigint }

export type ReadInRangesParameters<T> = {
  fromBlock: bigint
  toBlock: bigint
  /** The range limit, updated when the RPC refuses a range. */
  limit: LogRangeLimit
  /**
   * Reads one range: one or a few `eth_getLogs` over it, sent together. It throws what the RPC answered;
   * a "range too large" answer from any of them makes the scan read that range again in smaller pieces.
   */
  read: (range: BlockRange) => Promise<T>
}

/** The first range a scan asks for: what most public RPCs and providers' paid plans accept. */
export const DEFAULT_LOG_SPAN = 10_000n

/** What providers say when an `eth_getLogs` asks for too many blocks or would return too many logs. */
const tooLargePatterns = [
  /block range/i,
  /range (is )?too (large|wide|big)/i,
  /too (large|wide|big) (a )?(block )?range/i,
  /range limit/i,
  /exceed(s|ed)? (the )?(max|limit)/i,
  /more than [\d,]+ (results|logs|blocks)/i,
  /too many (results|logs|blocks)/i,
  /max(imum)? (block )?range/i,
  /response size/i,
  /limited to (a )?[\d,]+/i,
  /ranges? over [\d,]+k? blocks/i,
  /max(imum)? (is )?[\d,]+k? blocks/i,
  /query (returned|exceeds)/i,
  /query timeout/i,
  /logs? (limit|size) exceeded/i,
]

/**
 * Whether an RPC failure says the `eth_getLogs` range (or its result) is too large: too many blocks,
 * too many results, or an answer too large to send or to read (HTTP 413, a body over the transport's
 * limit). Rate limits are not: they say nothing about the range.
 *
 * @param error - What `getLogs` threw (a viem error, or a `VaultError` wrapping one).
 * @returns `true` for a "range too large" answer.
 * @example
 * isLogRangeTooLarge(error) // true for "query returned more than 10000 results"
 */
export function isLogRangeTooLarge(error: unknown): boolean {
  if (findCause(error, (e) => e.name === 'ResponseBodyTooLargeError')) return true
  if (readRpcFailure(error)?.status === 413) return true
  const text = messagesOf(error)
  if (/rate limit|too many requests|request limit|credits|capacity/i.test(text)) return false
  return tooLargePatterns.some((pattern) => pattern.test(text))
}

/**
 * Reads `[fromBlock, toBlock]` in consecutive ranges of at most `limit.maxRange` blocks, yielding each
 * range's result in block order once read. On a "range too large" answer the range shrinks to the size
 * the RPC's message names ("limited to a 2,000 range", "Try with this block range [0x…, 0x…]"), else to
 * half, and is read again; the smaller size is kept in `limit`. A single block still too large, and any
 * other failure, is thrown as `read` threw it.
 *
 * @param params - The blocks, the shared `limit`, and `read` for one range.
 * @returns Each range with its result, in block order.
 * @example
 * for await (const { toBlock, result } of readInRanges({ fromBlock, toBlock: latest, limit, read })) {
 *   console.log(toBlock, result.length)
 * }
 */
export async function* readInRanges<T>(
  params: ReadInRangesParameters<T>,
): AsyncGenerator<BlockRange & { result: T }> {
  const { toBlock, limit, read } = params
  let from = params.fromBlock
  while (from <= toBlock) {
    const span = limit.maxRange < 1n ? 1n : limit.maxRange
    const to = from + span - 1n < toBlock ? from + span - 1n : toBlock
    let result: T
    try {
      result = await read({ fromBlock: from, toBlock: to })
    } catch (error) {
      const size = to - from + 1n
      if (size <= 1n || !isLogRangeTooLarge(error)) throw error
      const named = namedSpan(error)
      limit.maxRange = named !== undefined && named < size ? named : size / 2n
      continue
    }
    yield { fromBlock: from, toBlock: to, result }
    from = to + 1n
  }
}

/**
 * Reads the logs of one event from `fromBlock` to `toBlock` (inclusive) in chunks the RPC accepts,
 * yielding each chunk in block order once read, so a caller that stops on a failure keeps what it
 * has and resumes from the next block.
 *
 * @param ctx - The vault client (its public client reads).
 * @param params - `address`, `event`, `args`, `fromBlock`, `toBlock`, and the shared `limit`.
 * @returns The chunks, in order.
 * @throws {VaultRpcError} (and other `VaultError`s) when a chunk cannot be read for another reason,
 *   or the RPC refuses even a single block.
 * @example
 * const limit = { maxRange: 2_000n }
 * for await (const chunk of getLogsInRanges(vault, { address: usdc, event: transferEvent,
 *   args: { to: wallet }, fromBlock, toBlock, limit })) {
 *   console.log(chunk.toBlock, chunk.logs.length)
 * }
 */
export async function* getLogsInRanges<const event extends AbiEvent>(
  ctx: VaultContext,
  params: GetLogsInRangesParameters<event>,
): AsyncGenerator<LogChunk<event>> {
  const { address, event, args, fromBlock, toBlock, limit } = params
  const chunks = readInRanges({
    fromBlock,
    toBlock,
    limit,
    read: async (range) =>
      (await getLogs(ctx.publicClient, {
        address,
        event,
        args,
        ...range,
        strict: true,
      } as never)) as Log<bigint, number, false, event, true>[],
  })
  try {
    for await (const { result, ...range } of chunks) yield { ...range, logs: result }
  } catch (error) {
    throw toVaultError(error, { action: 'Log read', addresses: ctx.addresses })
  }
}

/**
 * The range size an RPC's refusal names, when it names one: a range it suggests for this read
 * (`[0x…, 0x…]`), or the largest range it accepts.
 */
function namedSpan(error: unknown): bigint | undefined {
  const text = messagesOf(error)
  const bracket = /\[\s*(0x[0-9a-f]+|\d+)\s*,\s*(0x[0-9a-f]+|\d+)\s*\]/i.exec(text)
  if (bracket?.[1] && bracket[2]) {
    const size = BigInt(bracket[2]) - BigInt(bracket[1]) + 1n
    return size >= 1n ? size : undefined
  }
  const count =
    /(\d[\d,]*)\s*(k)?\s*(?:-\s*)?(?:block range|blocks?\b|range\b)/i.exec(text) ??
    /range(?: limit)?(?: is| of)?\s*:?\s*(\d[\d,]*)\s*(k)?\b/i.exec(text)
  if (!count?.[1]) return undefined
  const size = BigInt(count[1].replaceAll(',', '')) * (count[2] ? 1_000n : 1n)
  return size >= 1n ? size : undefined
}

/** Every message and details text along an error's cause chain, where providers put their words. */
function messagesOf(error: unknown): string {
  const parts: string[] = []
  findCause(error, (e) => {
    parts.push(e.message)
    if (typeof e.details === 'string') parts.push(e.details)
    return false
  })
  return parts.join('\n')
}
