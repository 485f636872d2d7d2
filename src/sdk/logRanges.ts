import type { AbiEvent, Address, Log } from 'viem'
import { getLogs } from 'viem/actions'
import type { VaultContext } from './context.js'
import { findCause } from './errors/find.js'
import { toVaultError } from './errors/toVaultError.js'

/*
 * Reading logs over many blocks from RPCs that limit `eth_getLogs`: public and hosted RPCs refuse a
 * block range above their own limit (500, 2,000, 10,000 blocks…) or a result above so many logs, each
 * with its own message. The scan walks the range in chunks of at most `maxRange` blocks and halves the
 * chunk whenever the RPC says the range is too large, down to one block; the smaller limit is kept
 * for the next scan. Other failures are thrown as `VaultError`s (RPC trouble is retryable): the
 * caller backs off and scans again from the block it reached.
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

/** The messages RPCs answer a block range or a result set that is too large with. */
const rangeTooLargePattern =
  /block range|range (is )?too (large|wide|big)|range limit|exceed(s|ed)? (the )?(max|limit)|more than \d+ (results|logs|blocks)|response size|too many (results|logs|blocks)|limited to (a )?\d/i

/**
 * Whether an RPC failure says the `eth_getLogs` range (or its result) is too large.
 *
 * @param error - What `getLogs` threw.
 * @returns `true` for a "range too large" answer.
 * @example
 * isLogRangeTooLarge(error) // true for "query returned more than 10000 results"
 */
export function isLogRangeTooLarge(error: unknown): boolean {
  return (
    findCause(error, (e) =>
      rangeTooLargePattern.test(`${e.message} ${String((e as { details?: unknown }).details)}`),
    ) !== undefined
  )
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
  const { address, event, args, toBlock, limit } = params
  let from = params.fromBlock
  while (from <= toBlock) {
    const span = limit.maxRange < 1n ? 1n : limit.maxRange
    const to = from + span - 1n < toBlock ? from + span - 1n : toBlock
    let logs: Log<bigint, number, false, event, true>[]
    try {
      logs = (await getLogs(ctx.publicClient, {
        address,
        event,
        args,
        fromBlock: from,
        toBlock: to,
        strict: true,
      } as never)) as Log<bigint, number, false, event, true>[]
    } catch (error) {
      if (to > from && isLogRangeTooLarge(error)) {
        limit.maxRange = (to - from + 1n) / 2n
        continue
      }
      throw toVaultError(error, { action: 'Log read', addresses: ctx.addresses })
    }
    yield { fromBlock: from, toBlock: to, logs }
    from = to + 1n
  }
}
