/**
 * Shared parts of the batch-settlement tests (and any bench of them): what x402's batch-settlement contract
 * did on the devnet, read from the facilitator's transactions (deposits, claims with each row they carried,
 * settles to the merchant, refunds to buyers). Its stock buyer is `buyerClient` (harness/merchantApps.ts).
 */
import {
  createPublicClient,
  decodeFunctionData,
  type Hash,
  type Hex,
  http,
  isAddressEqual,
  parseEventLogs,
  type TransactionReceipt,
} from 'viem'
import type { Devnet } from '../src/devnet/startDevnet.js'
import { x402BatchSettlementAbi, x402BatchSettlementAddress } from '../src/sdk/shared.js'
import { receiptsFrom } from './merchant.js'

/** The claim rows a transaction to the contract carried (a claim, or a multicall with one, as a refund sends). */
function claimRowsOf(input: Hex): number {
  try {
    const call = decodeFunctionData({ abi: x402BatchSettlementAbi, data: input })
    if (call.functionName === 'claim' || call.functionName === 'claimWithSignature') {
      return (call.args[0] as readonly unknown[]).length
    }
    if (call.functionName === 'multicall') {
      return (call.args[0] as readonly Hex[]).reduce((sum, inner) => sum + claimRowsOf(inner), 0)
    }
  } catch {
    // a deposit or a settle: no claim rows
  }
  return 0
}

/** One transaction of the facilitator's to the contract: its receipt, its claim rows and its events. */
export type EscrowTransaction = {
  receipt: TransactionReceipt
  /** The voucher claims it carried (a claim's rows, or the ones in a refund's multicall). */
  claimRows: number
  claimed: { channelId: Hash; sender: Hex; claimAmount: bigint; newTotalClaimed: bigint }[]
  settled: { receiver: Hex; token: Hex; sender: Hex; amount: bigint }[]
  refunded: { channelId: Hash; sender: Hex; amount: bigint }[]
}

/**
 * What x402's batch-settlement contract did in the facilitator's transactions since `fromBlock`, in order.
 *
 * @param devnet - The devnet (its facilitator account sends every claim, settle and refund).
 * @param fromBlock - The first block to read.
 * @returns Each transaction to the contract, and every `Claimed`, `Settled` and `Refunded` in them.
 * @example
 * const escrow = await escrowActivity(devnet, firstBlock)
 * expect(sum(escrow.settled.map((s) => s.amount))).toBe(charged)
 */
export async function escrowActivity(devnet: Devnet, fromBlock: bigint) {
  const receipts = await receiptsFrom(devnet, devnet.accounts.facilitator.address, fromBlock)
  const publicClient = createPublicClient({
    chain: devnet.viemChain,
    transport: http(devnet.rpcUrl),
  })
  const transactions: EscrowTransaction[] = []
  for (const receipt of receipts) {
    if (!receipt.to || !isAddressEqual(receipt.to, x402BatchSettlementAddress)) continue
    const { input } = await publicClient.getTransaction({ hash: receipt.transactionHash })
    const logs = parseEventLogs({ abi: x402BatchSettlementAbi, logs: receipt.logs }).filter((log) =>
      isAddressEqual(log.address, x402BatchSettlementAddress),
    )
    transactions.push({
      receipt,
      claimRows: claimRowsOf(input),
      claimed: logs.flatMap((log) => (log.eventName === 'Claimed' ? [log.args] : [])),
      settled: logs.flatMap((log) => (log.eventName === 'Settled' ? [log.args] : [])),
      refunded: logs.flatMap((log) => (log.eventName === 'Refunded' ? [log.args] : [])),
    })
  }
  const all = <key extends 'claimed' | 'settled' | 'refunded'>(key: key) =>
    transactions.flatMap((transaction) =>
      (transaction[key] as EscrowTransaction[key][number][]).map((entry) => ({
        ...entry,
        txHash: transaction.receipt.transactionHash,
      })),
    )
  return {
    transactions,
    claimed: all('claimed'),
    settled: all('settled'),
    refunded: all('refunded'),
    /** Claim rows carried, across every transaction; each row that claimed something new emits one `Claimed`. */
    claimRows: transactions.reduce((sum, transaction) => sum + transaction.claimRows, 0),
  }
}

/**
 * Resolves with the first `eventName` the batch-settlement contract emits from `fromBlock` on (viem's log
 * filter, polled every 50 ms): a wait on the chain's event, not on time.
 *
 * @param devnet - The devnet.
 * @param eventName - `Claimed`, `Settled` or `Refunded`.
 * @param fromBlock - The first block to look in.
 * @returns The event's arguments and its transaction.
 * @example
 * const refund = await nextEscrowEvent(devnet, 'Refunded', firstBlock)
 */
export function nextEscrowEvent<name extends 'Claimed' | 'Settled' | 'Refunded'>(
  devnet: Devnet,
  eventName: name,
  fromBlock: bigint,
) {
  const publicClient = createPublicClient({
    chain: devnet.viemChain,
    pollingInterval: 50,
    transport: http(devnet.rpcUrl),
  })
  return new Promise<{ txHash: Hash; blockNumber: bigint }>((resolve, reject) => {
    const stop = publicClient.watchContractEvent({
      address: x402BatchSettlementAddress,
      abi: x402BatchSettlementAbi,
      eventName: eventName as 'Refunded',
      fromBlock,
      poll: true,
      onLogs: (logs) => {
        const log = logs[0]
        if (!log) return
        stop()
        resolve({ txHash: log.transactionHash, blockNumber: log.blockNumber })
      },
      onError: (error) => {
        stop()
        reject(error)
      },
    })
  })
}
