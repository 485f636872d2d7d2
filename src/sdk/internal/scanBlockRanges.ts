import { findCause } from '../errors/find.js'
import { readRpcFailure } from '../errors/rpc.js'

/** An inclusive range of blocks. */
export type BlockRange = { fromBlock: bigint; toBlock: bigint }

/** Options of {@link scanBlockRanges}. */
export type ScanBlockRangesOptions<T> = {
  /** The first block to read. */
  fromBlock: bigint
  /** The last block to read (inclusive). */
  toBlock: bigint
  /**
   * Reads one range: typically one or a few `eth_getLogs` over it, sent together. It should throw what
   * the RPC answered; a "range too large" answer from any of them makes the scan read that range again
   * in smaller pieces, and anything else ends the scan with that error.
   */
  read: (range: BlockRange) => Promise<T>
  /** The largest range to ask for at once, and the first one tried. Default 10,000 blocks. */
  maxSpan?: bigint | undefined
  /** Called after each range is read, in block order: with the ranges done so far, for a progress bar. */
  onRange?: ((range: BlockRange, result: T) => void) | undefined
}

/** The first range tried: what most public RPCs and providers' paid plans accept for `eth_getLogs`. */
export const DEFAULT_LOG_SPAN = 10_000n
/** Ranges read without a refusal before the scan tries a range twice as large again (up to `maxSpan`). */
const GROW_AFTER = 4

/**
 * Reads `[fromBlock, toBlock]` in consecutive ranges, one at a time, backing off from "range too large"
 * answers: the range shrinks to the size the RPC named when its message names one, else to half, and
 * is read again. A block limit the RPC states ("limited to a 10,000 range", "maximum block range:
 * 5000") is kept as the ceiling for the rest of the scan. A range it suggests for this read only
 * ("Try with this block range [0x…, 0x…]", given when the results would be too many, which depends on
 * how busy the blocks are) and a halving both grow back after a few reads without a refusal. A single
 * block that is still too large fails with the RPC's error.
 *
 * This is the one place in the package that scans logs over many blocks: the ledger uses it, and so
 * can anything else that reads a wallet's history.
 *
 * @param options - The blocks, the reader, the largest range, and a callback per range read.
 * @returns Each range's result, in block order.
 * @throws What `read` threw, when it is not a "range too large" answer (or is one for a single block).
 * @example
 * const logs = (await scanBlockRanges({ fromBlock, toBlock, read: (range) => getLogs(client, { ...filter, ...range }) })).flat()
 */
export async function scanBlockRanges<T>(options: ScanBlockRangesOptions<T>): Promise<T[]> {
  const { fromBlock, toBlock, read, onRange } = options
  let ceiling = options.maxSpan ?? DEFAULT_LOG_SPAN
  if (ceiling < 1n) ceiling = 1n
  let span = ceiling
  let quietReads = 0
  const results: T[] = []
  let start = fromBlock
  while (start <= toBlock) {
    const end = start + span - 1n < toBlock ? start + span - 1n : toBlock
    const range = { fromBlock: start, toBlock: end }
    let result: T
    try {
      result = await read(range)
    } catch (error) {
      const size = end - start + 1n
      if (size <= 1n || !isRangeTooLarge(error)) throw error
      const named = namedSpan(error)
      if (named !== undefined && named.size < size) {
        span = named.size
        if (named.limit) ceiling = named.size
      } else {
        span = size / 2n
      }
      quietReads = 0
      continue
    }
    results.push(result)
    onRange?.(range, result)
    start = end + 1n
    quietReads++
    if (span < ceiling && quietReads >= GROW_AFTER) {
      span = span * 2n < ceiling ? span * 2n : ceiling
      quietReads = 0
    }
  }
  return results
}

/** What providers say when an `eth_getLogs` asks for too many blocks or would return too many logs. */
const tooLargePatterns = [
  /block range/i,
  /range (is )?too (large|wide|big)/i,
  /too (large|wide|big) (a )?(block )?range/i,
  /more than [\d,]+ (results|logs)/i,
  /too many (results|logs)/i,
  /max(imum)? (block )?range/i,
  /response size/i,
  /limited to a [\d,]+k? (block )?range/i,
  /ranges? over [\d,]+k? blocks/i,
  /max(imum)? (is )?[\d,]+k? blocks/i,
  /query (returned|exceeds)/i,
  /query timeout/i,
  /logs? (limit|size) exceeded/i,
]

/**
 * Whether an RPC failure says that an `eth_getLogs` asked for too much: too many blocks, too many
 * results, or an answer too large to send or to read (HTTP 413, a body over the transport's limit).
 * Rate limits are not: they say nothing about the range.
 *
 * @param error - What a `getLogs` threw (a viem error or a `VaultError` wrapping one).
 * @returns `true` when reading a smaller range may succeed.
 * @example
 * isRangeTooLarge(new RpcRequestError({ body: {}, url, error: { code: -32005, message: 'query returned more than 10000 results' } })) // true
 */
export function isRangeTooLarge(error: unknown): boolean {
  if (findCause(error, (e) => e.name === 'ResponseBodyTooLargeError')) return true
  const failure = readRpcFailure(error)
  if (failure?.status === 413) return true
  const text = messagesOf(error)
  if (/rate limit|too many requests|request limit|credits|capacity/i.test(text)) return false
  return tooLargePatterns.some((pattern) => pattern.test(text))
}

/**
 * The range size an RPC's refusal names, when it names one: a range it suggests for this read (`limit`
 * false), or the largest range it accepts (`limit` true).
 */
function namedSpan(error: unknown): { size: bigint; limit: boolean } | undefined {
  const text = messagesOf(error)
  const bracket = /\[\s*(0x[0-9a-f]+|\d+)\s*,\s*(0x[0-9a-f]+|\d+)\s*\]/i.exec(text)
  if (bracket?.[1] && bracket[2]) {
    const size = BigInt(bracket[2]) - BigInt(bracket[1]) + 1n
    return size >= 1n ? { size, limit: false } : undefined
  }
  const count =
    /(\d[\d,]*)\s*(k)?\s*(?:-\s*)?(?:block range|blocks?\b|range\b)/i.exec(text) ??
    /range(?: limit)?(?: is| of)?\s*:?\s*(\d[\d,]*)\s*(k)?\b/i.exec(text)
  if (!count?.[1]) return undefined
  const size = BigInt(count[1].replaceAll(',', '')) * (count[2] ? 1_000n : 1n)
  return size >= 1n ? { size, limit: true } : undefined
}

/** Every message and details text along an error's cause chain, where providers put their words. */
function messagesOf(error: unknown): string {
  const parts: string[] = []
  let current: unknown = error
  for (let depth = 0; current instanceof Error && depth < 10; depth++) {
    parts.push(current.message)
    const details = (current as { details?: unknown }).details
    if (typeof details === 'string') parts.push(details)
    current = current.cause
  }
  return parts.join('\n')
}
