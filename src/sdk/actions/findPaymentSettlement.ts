import {
  decodeFunctionData,
  getAbiItem,
  type Hash,
  isAddressEqual,
  parseEventLogs,
  type TransactionReceipt,
} from 'viem'
import { getBlockNumber, getTransaction } from 'viem/actions'
import { usdcAbi } from '../abis/usdc.js'
import { x402ExactPermit2ProxyAbi } from '../abis/x402.js'
import { x402ExactPermit2ProxyAddress } from '../chains.js'
import type { VaultContext } from '../context.js'
import { VaultValidationError } from '../errors/classes.js'
import { toVaultError } from '../errors/toVaultError.js'
import { guard } from '../internal/read.js'
import { sleep } from '../internal/sleep.js'
import { receiptIfMined } from '../internal/waitForNonceSlot.js'
import { DEFAULT_LOG_SPAN, getLogsInRanges } from '../logRanges.js'
import {
  type PaymentAuthorization,
  type PaymentAuthorizationMethod,
  paymentAuthorizationOn,
  type X402PaymentPayload,
} from './paymentAuthorization.js'

/** A transaction that settled an x402 payment: it moved exactly the authorised amount to the payee. */
export type PaymentSettlement = {
  txHash: Hash
  blockNumber: bigint
  method: PaymentAuthorizationMethod
  asset: PaymentAuthorization['asset']
  payer: PaymentAuthorization['payer']
  payTo: PaymentAuthorization['payTo']
  /** Base units. */
  amount: bigint
}

/** What `findPaymentSettlement` takes: the payment, and one transaction to check or the blocks to search. */
export type FindPaymentSettlementParameters = {
  /** The x402 payment payload (`accepted` and `payload`), as x402's hooks hand it or its client made it. */
  paymentPayload: X402PaymentPayload
  /**
   * Check this transaction only (such as the one a facilitator answered): whether it settled this
   * payment. Without it, the chain's logs from `fromBlock` on are searched.
   */
  transaction?: Hash | undefined
  /** With `transaction`: wait up to this many ms for it to be mined. Default 0: not mined yet is no settlement. */
  timeout?: number | undefined
  /** Without `transaction`: the first block to search. A payment cannot be mined before its payer signed it. */
  fromBlock?: bigint | undefined
  /** Without `transaction`: the last block to search. Default: the latest. */
  toBlock?: bigint | undefined
}

const transactionHashPattern = /^0x[0-9a-fA-F]{64}$/
const authorizationUsedEvent = getAbiItem({ abi: usdcAbi, name: 'AuthorizationUsed' })
const transferEvent = getAbiItem({ abi: usdcAbi, name: 'Transfer' })
const action = 'Payment settlement read'

/**
 * Finds the transaction that settled an x402 `exact` payment, from the chain alone: one whose receipt
 * succeeded and moved exactly the authorised amount of the token from the payer to the payee, under this
 * authorisation: on EIP-3009 the token's `AuthorizationUsed(payer, nonce)` in the same receipt; on Permit2
 * a call to x402's exact Permit2 proxy (`settle` or `settleWithPermit`) for this owner and nonce.
 *
 * With `transaction` it checks that one transaction (one receipt; on Permit2 the transaction too), such
 * as a facilitator's claim. Without it, it searches `fromBlock`…`toBlock` in ranges the RPC accepts: on
 * EIP-3009 for the `AuthorizationUsed` log of this payer and nonce (indexed, so one match at most), on
 * Permit2 for the token's transfers from the payer to the payee of that amount, each candidate checked.
 * A Permit2 settlement sent through another contract than the proxy (a batching contract) is not found.
 *
 * @param ctx - The vault client (no wallet client needed); its chain must be the payment's.
 * @param params - `paymentPayload`, and `transaction` (with `timeout`) or `fromBlock` (with `toBlock`).
 * @returns The settlement, or `undefined` when the transaction (or the blocks searched) holds none of this
 *   payment: another payment's transaction, a failed one, one not mined, or an authorisation cancelled.
 * @throws {VaultValidationError} `INVALID_ARGUMENT` for a payment that is not x402 `exact` on this chain, a
 *   malformed `transaction`, or neither `transaction` nor `fromBlock`; {VaultRpcError} when the RPC fails.
 * @example
 * const settlement = await vault.findPaymentSettlement({
 *   paymentPayload: context.paymentPayload,
 *   transaction: context.result.transaction,
 * })
 * if (!settlement) console.warn('the facilitator named a transaction that did not settle this payment')
 */
export async function findPaymentSettlement(
  ctx: VaultContext,
  params: FindPaymentSettlementParameters,
): Promise<PaymentSettlement | undefined> {
  const authorization = paymentAuthorizationOn(ctx, params?.paymentPayload)
  const { transaction, fromBlock } = params
  if (transaction !== undefined) {
    if (typeof transaction !== 'string' || !transactionHashPattern.test(transaction)) {
      throw new VaultValidationError(
        '`transaction` must be a transaction hash (0x and 64 hex digits).',
        {
          code: 'INVALID_ARGUMENT',
          details: { field: 'transaction' },
        },
      )
    }
    return settlementIn(ctx, authorization, transaction, params.timeout ?? 0)
  }
  if (typeof fromBlock !== 'bigint' || fromBlock < 0n) {
    throw new VaultValidationError(
      'Give `transaction` to check, or `fromBlock` (a bigint block number) to search from.',
      { code: 'INVALID_ARGUMENT', details: { field: 'fromBlock' } },
    )
  }
  const toBlock =
    params.toBlock ??
    (await guard(ctx, action, () => getBlockNumber(ctx.publicClient, { cacheTime: 0 })))
  const limit = { maxRange: DEFAULT_LOG_SPAN }
  if (authorization.method === 'eip3009') {
    const chunks = getLogsInRanges(ctx, {
      address: authorization.asset,
      event: authorizationUsedEvent,
      args: { authorizer: authorization.payer, nonce: authorization.nonce },
      fromBlock,
      toBlock,
      limit,
    })
    for await (const { logs } of chunks) {
      for (const log of logs) {
        const found = await settlementIn(ctx, authorization, log.transactionHash, 0)
        if (found) return found
      }
    }
    return undefined
  }
  const chunks = getLogsInRanges(ctx, {
    address: authorization.asset,
    event: transferEvent,
    args: { from: authorization.payer, to: authorization.payTo },
    fromBlock,
    toBlock,
    limit,
  })
  const checked = new Set<string>()
  for await (const { logs } of chunks) {
    for (const log of logs) {
      if (log.args.value !== authorization.amount || checked.has(log.transactionHash)) continue
      checked.add(log.transactionHash)
      const found = await settlementIn(ctx, authorization, log.transactionHash, 0)
      if (found) return found
    }
  }
  return undefined
}

/** Whether `hash` settled this authorisation, from its receipt (and, on Permit2, its call). */
async function settlementIn(
  ctx: VaultContext,
  authorization: PaymentAuthorization,
  hash: Hash,
  timeout: number,
): Promise<PaymentSettlement | undefined> {
  const receipt = await receiptOf(ctx, hash, timeout)
  if (receipt?.status !== 'success' || !movedTheMoney(authorization, receipt)) return undefined
  const authorised =
    authorization.method === 'eip3009'
      ? usedAuthorization(authorization, receipt)
      : await calledTheProxy(ctx, authorization, hash)
  if (!authorised) return undefined
  return {
    txHash: receipt.transactionHash,
    blockNumber: receipt.blockNumber,
    method: authorization.method,
    asset: authorization.asset,
    payer: authorization.payer,
    payTo: authorization.payTo,
    amount: authorization.amount,
  }
}

/**
 * The receipt, or `undefined` when the transaction is not mined (within `timeout` ms, when waiting).
 *
 * The wait polls here rather than through viem's `waitForTransactionReceipt`: that one recognises "not
 * found" by class, and over a caller's client (another viem) gives up at the first `null`, which a node
 * behind a load balancer answers for a while; and with the RPC down it runs out its timeout, which would
 * read as "not mined". Here an RPC failure is thrown as one, and only "not found" is waited through.
 */
async function receiptOf(
  ctx: VaultContext,
  hash: Hash,
  timeout: number,
): Promise<TransactionReceipt | undefined> {
  const deadline = Date.now() + timeout
  for (;;) {
    const receipt = await receiptIfMined(ctx, hash).catch((error: unknown) => {
      throw toVaultError(error, { addresses: ctx.addresses, action })
    })
    if (receipt) return receipt
    const left = deadline - Date.now()
    if (left <= 0) return undefined
    await sleep(Math.min(ctx.publicClient.pollingInterval, left))
  }
}

/** Whether the receipt moved exactly the amount of the token from the payer to the payee. */
function movedTheMoney(authorization: PaymentAuthorization, receipt: TransactionReceipt): boolean {
  const transfers = parseEventLogs({ abi: usdcAbi, eventName: 'Transfer', logs: receipt.logs })
  return transfers.some(
    (log) =>
      isAddressEqual(log.address, authorization.asset) &&
      isAddressEqual(log.args.from, authorization.payer) &&
      isAddressEqual(log.args.to, authorization.payTo) &&
      log.args.value === authorization.amount,
  )
}

/** EIP-3009: whether the token marked this payer's nonce used in the same receipt. */
function usedAuthorization(
  authorization: PaymentAuthorization,
  receipt: TransactionReceipt,
): boolean {
  const used = parseEventLogs({ abi: usdcAbi, eventName: 'AuthorizationUsed', logs: receipt.logs })
  return used.some(
    (log) =>
      isAddressEqual(log.address, authorization.asset) &&
      isAddressEqual(log.args.authorizer, authorization.payer) &&
      log.args.nonce.toLowerCase() === authorization.nonce,
  )
}

/** Permit2: whether the transaction called x402's exact proxy for this owner, nonce, token and payee. */
async function calledTheProxy(
  ctx: VaultContext,
  authorization: PaymentAuthorization,
  hash: Hash,
): Promise<boolean> {
  const tx = await guard(ctx, action, () => getTransaction(ctx.publicClient, { hash }))
  if (!tx.to || !isAddressEqual(tx.to, x402ExactPermit2ProxyAddress)) return false
  let call: ReturnType<typeof decodeFunctionData<typeof x402ExactPermit2ProxyAbi>>
  try {
    call = decodeFunctionData({ abi: x402ExactPermit2ProxyAbi, data: tx.input })
  } catch {
    return false
  }
  const [permit, owner, witness] =
    call.functionName === 'settle'
      ? [call.args[0], call.args[1], call.args[2]]
      : [call.args[1], call.args[2], call.args[3]]
  return (
    permit.nonce === BigInt(authorization.nonce) &&
    isAddressEqual(owner, authorization.payer) &&
    isAddressEqual(permit.permitted.token, authorization.asset) &&
    permit.permitted.amount === authorization.amount &&
    isAddressEqual(witness.to, authorization.payTo)
  )
}
