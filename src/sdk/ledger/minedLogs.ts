import type { Address, Hash } from 'viem'
import type { BlockRange } from '../logRanges.js'

/** A log as the ledger reads it: where it was mined, and whether a reorganisation removed it. */
export type MinedLog = {
  address: Address
  blockNumber: bigint | null
  blockTimestamp?: bigint | null | undefined
  transactionHash: Hash | null
  logIndex: number | null
  removed: boolean
}

/** A log of a mined block that no reorganisation removed. */
export const isLive = (log: MinedLog) => !log.removed && log.blockNumber !== null

/** Where a log sits, and its block's time when the RPC sent it with the log. */
export function position(log: MinedLog) {
  return {
    blockNumber: log.blockNumber as bigint,
    timestamp: log.blockTimestamp ?? undefined,
    txHash: log.transactionHash as Hash,
    logIndex: log.logIndex ?? 0,
  }
}

/** The smallest range that holds every log. */
export function blocksOf(logs: MinedLog[]): BlockRange {
  let fromBlock = logs[0]?.blockNumber as bigint
  let toBlock = fromBlock
  for (const log of logs) {
    const block = log.blockNumber as bigint
    if (block < fromBlock) fromBlock = block
    if (block > toBlock) toBlock = block
  }
  return { fromBlock, toBlock }
}
