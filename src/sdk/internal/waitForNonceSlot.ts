import {
  type Address,
  type Hash,
  type Hex,
  isAddressEqual,
  type Transaction,
  type TransactionReceipt,
} from 'viem'
import {
  getBlock,
  getBlockNumber,
  getTransaction,
  getTransactionCount,
  getTransactionReceipt,
} from 'viem/actions'
import type { VaultContext } from '../context.js'
import { VaultTransactionError } from '../errors/classes.js'
import { findError } from '../errors/find.js'
import { toVaultError } from '../errors/toVaultError.js'
import type { WaitOptions } from '../transactions.js'
import { sleep } from './sleep.js'

/** A transaction the node accepted: its hash, the sender and nonce of its slot, and the call it made. */
export type SentTransaction = {
  hash: Hash
  from: Address
  nonce: number
  /** The contract it called and its calldata, when known: they tell a fee bump from another write. */
  call?: { to: Address; input: Hex } | undefined
}

/** How a nonce slot was settled: the receipt of the transaction mined in it, and whether it was ours. */
export type NonceSlotOutcome = {
  receipt: TransactionReceipt
  /**
   * Set when another transaction took the slot. `repriced` when it made the same call (a wallet's
   * fee bump of ours, or the same write sent by another process with the same key).
   */
  replacement?: { hash: Hash; repriced: boolean } | undefined
}

/** How long a receipt wait lasts when the caller gives no `timeout`: viem's default. */
const defaultReceiptTimeoutMs = 180_000

/**
 * Waits until a sent transaction's nonce slot holds a mined transaction, and returns its receipt:
 * ours, or the one that replaced ours.
 *
 * Each poll asks for our receipt and, while there is none, for the sender's transaction count. A count
 * past our nonce means a transaction was mined in our slot; the node then names it (by sender and
 * nonce, or, where it lacks that method, by finding the block where the count passed the nonce). So
 * a replacement is found whenever and however it was mined. viem's `waitForTransactionReceipt` looks
 * for one only in the blocks it handles, and skips blocks that arrive while it fetches another: a
 * transaction it once saw pending and that another sender then replaced could go unnoticed until its
 * timeout (180 s by default), holding the account's writes all that time.
 *
 * A receipt the node has not indexed yet (a node behind a load balancer may answer `null` for a while)
 * is polled for until the deadline. RPC failures other than "not found" are thrown as `VaultError`s.
 *
 * @param ctx - The vault client.
 * @param sent - The transaction.
 * @param action - What it does, for error messages ("Deposit").
 * @param options - `confirmations` (default 1) and `timeout` in ms (default 180 s).
 * @returns The receipt, and the replacement when another transaction took the slot.
 * @throws {VaultTransactionError} `RECEIPT_TIMEOUT` when the slot is still open at the deadline.
 */
export async function waitForNonceSlot(
  ctx: VaultContext,
  sent: SentTransaction,
  action: string,
  options: WaitOptions = {},
): Promise<NonceSlotOutcome> {
  const deadline = Date.now() + (options.timeout ?? defaultReceiptTimeoutMs)
  const confirmations = BigInt(Math.max(1, options.confirmations ?? 1))
  const client = ctx.publicClient
  // The transaction mined in our slot, once a count past our nonce showed one was.
  let holder: Transaction | undefined
  for (;;) {
    try {
      const hash = holder?.hash ?? sent.hash
      const receipt = await receiptIfMined(ctx, hash)
      if (receipt) {
        const latest =
          confirmations > 1n ? await getBlockNumber(client, { cacheTime: 0 }) : receipt.blockNumber
        if (latest - receipt.blockNumber + 1n >= confirmations) {
          return holder && !isHashEqual(holder.hash, sent.hash)
            ? { receipt, replacement: { hash: holder.hash, repriced: sameCall(sent, holder) } }
            : { receipt }
        }
      } else if (holder === undefined) {
        const count = await getTransactionCount(client, { address: sent.from, blockTag: 'latest' })
        if (count > sent.nonce) {
          holder = await slotHolder(ctx, sent)
          // Another transaction's receipt is asked for at once; our own the node has not indexed yet.
          if (holder && !isHashEqual(holder.hash, sent.hash)) continue
        }
      }
    } catch (error) {
      throw toVaultError(error, {
        addresses: ctx.addresses,
        action: `${action} (waiting for the receipt)`,
      })
    }
    const left = deadline - Date.now()
    if (left <= 0) {
      throw new VaultTransactionError(
        `${action}: no receipt for ${sent.hash} arrived in time; it may still be mined. Check it before sending again.`,
        { code: 'RECEIPT_TIMEOUT', details: { txHash: sent.hash } },
      )
    }
    await sleep(Math.min(client.pollingInterval, left))
  }
}

/**
 * A transaction's receipt, or `undefined` while the node has none. "Not found" is recognised by class
 * name: over a caller's client, its own viem throws classes other than the package's bundled one.
 *
 * @param ctx - The vault client.
 * @param hash - The transaction.
 * @returns The receipt, or `undefined` when it is not mined (or not indexed yet).
 * @throws Any other RPC failure, as the client threw it.
 */
export async function receiptIfMined(
  ctx: VaultContext,
  hash: Hash,
): Promise<TransactionReceipt | undefined> {
  try {
    return await getTransactionReceipt(ctx.publicClient, { hash })
  } catch (error) {
    if (findError(error, 'TransactionReceiptNotFoundError', 'TransactionNotFoundError')) {
      return undefined
    }
    throw error
  }
}

/**
 * The mined transaction in the sender's nonce slot, once the sender's count is past it: asked for by
 * sender and nonce (`eth_getTransactionBySenderAndNonce`), else found in the block where the count
 * passed the nonce. The second way serves nodes without the method, and nodes whose own search fails:
 * anvil's, on a chain that starts at a later block number, asks for blocks the chain never had.
 * `undefined` when the node cannot tell yet.
 */
async function slotHolder(
  ctx: VaultContext,
  sent: SentTransaction,
): Promise<Transaction | undefined> {
  const found = await getTransaction(ctx.publicClient, {
    sender: sent.from,
    nonce: sent.nonce,
  }).catch(() => undefined)
  if (found && found.blockNumber !== null) return found
  return slotHolderByBlock(ctx, sent)
}

/**
 * Finds the block where the sender's transaction count first passed `sent.nonce` (going back from the
 * latest block in doubling steps, then halving the range), and the transaction in it from that slot.
 */
async function slotHolderByBlock(
  ctx: VaultContext,
  sent: SentTransaction,
): Promise<Transaction | undefined> {
  const client = ctx.publicClient
  const passed = async (blockNumber: bigint) =>
    (await getTransactionCount(client, { address: sent.from, blockNumber })) > sent.nonce
  // `after` is a block whose count is past the nonce, `before` one whose count is not.
  let after = await getBlockNumber(client, { cacheTime: 0 })
  if (!(await passed(after))) return undefined
  let before = -1n
  for (let step = 1n; after > 0n; step *= 2n) {
    const candidate = after > step ? after - step : 0n
    if (!(await passed(candidate))) {
      before = candidate
      break
    }
    after = candidate
  }
  while (after - before > 1n) {
    const middle = (after + before) / 2n
    if (await passed(middle)) after = middle
    else before = middle
  }
  const block = await getBlock(client, { blockNumber: after, includeTransactions: true })
  return block.transactions.find(
    (transaction) =>
      isAddressEqual(transaction.from, sent.from) && transaction.nonce === sent.nonce,
  )
}

/** Whether the slot's transaction makes the same call as ours (a fee bump), when ours is known. */
function sameCall(sent: SentTransaction, holder: Transaction): boolean {
  if (!sent.call || !holder.to) return false
  return (
    isAddressEqual(holder.to, sent.call.to) &&
    holder.value === 0n &&
    holder.input.toLowerCase() === sent.call.input.toLowerCase()
  )
}

/** Whether two transaction hashes are the same (nodes and wallets differ in letter case). */
export function isHashEqual(a: Hash, b: Hash): boolean {
  return a.toLowerCase() === b.toLowerCase()
}
