import {
  type Abi,
  type Account,
  type Address,
  decodeFunctionData,
  encodeFunctionData,
  type Hash,
  type Hex,
  isAddressEqual,
  parseEventLogs,
  type TransactionReceipt,
} from 'viem'
import {
  call,
  estimateContractGas,
  getTransaction,
  getTransactionCount,
  writeContract,
} from 'viem/actions'
import { routerAbi } from '../abis/index.js'
import type { VaultContext, VaultWalletClient } from '../context.js'
import {
  VaultContractError,
  type VaultError,
  VaultRpcError,
  VaultTransactionError,
} from '../errors/classes.js'
import { findCause } from '../errors/find.js'
import { toVaultError } from '../errors/toVaultError.js'
import type { WaitOptions } from '../transactions.js'
import { type DecodeContext, guard } from './read.js'
import { type SentTransaction, waitForNonceSlot } from './waitForNonceSlot.js'

/** Gas headroom over the estimate, in percent of it… */
export const GAS_MARGIN_PERCENT = 30n
/** …and at least this much gas. */
export const GAS_MARGIN_MIN = 100_000n

/**
 * The gas limit to send with: the estimate plus {@link GAS_MARGIN_PERCENT}, and at least
 * {@link GAS_MARGIN_MIN} more. Block time moves between the estimate and inclusion, and then the
 * venues accrue interest (storage writes and a mint), the oracle may record an observation, and a
 * withdrawal's yield may first be worth a fee (the treasury's pull: a 180k estimate becomes 252k),
 * paths the estimate never took: an exact estimate runs out of gas. A percentage alone is too little for a
 * cheap call whose cost the accrual doubles. Unused gas is not charged.
 */
export function withGasMargin(estimate: bigint): bigint {
  const percent = (estimate * GAS_MARGIN_PERCENT) / 100n
  return estimate + (percent > GAS_MARGIN_MIN ? percent : GAS_MARGIN_MIN)
}

/** A simulated request with its gas limit and nonce, ready to send. */
export type PreparedWrite = {
  params: Record<string, unknown>
  gas: bigint
  nonce: number
}

/**
 * Estimates a simulated request's gas and reads the sender's nonce, in one parallel step. A failed
 * estimate throws here, so a write that would fail is refused before anything is sent.
 *
 * The nonce is the account's transaction count at the latest block, not the pending one. In one
 * process the write queue has waited for every earlier write's receipt, so that is the next nonce.
 * When another process sends with the same key at the same time, both pick the same nonce and the node
 * refuses the later one (`NONCE_CONFLICT`, safe to retry): nothing is mined that was simulated against
 * a state the other transaction changes. The explicit nonce also bypasses an account's viem
 * `nonceManager`, which counts pending transactions.
 *
 * `nonceBlock` pins the nonce to the block the write's inputs were read at (a deposit's checks). Read
 * at the latest block instead, the nonce could come from just after another process's transaction was
 * mined while the estimate ran just before it: the write would then be sent with a fresh nonce against
 * a state that no longer holds, and be mined reverted. A nonce from no later than the state the write
 * was decided on is taken by any transaction that changed that state since, so the node refuses ours.
 */
export async function prepareWrite(
  ctx: DecodeContext,
  account: Account | Address,
  request: object,
  action: string,
  nonceBlock?: bigint,
): Promise<PreparedWrite> {
  const params = { ...(request as Record<string, unknown>), account }
  const address = typeof account === 'string' ? account : account.address
  const [estimate, nonce] = await guard(ctx, `${action} (gas estimate)`, () =>
    Promise.all([
      estimateContractGas(ctx.publicClient, params as never),
      getTransactionCount(
        ctx.publicClient,
        nonceBlock === undefined
          ? { address, blockTag: 'latest' }
          : { address, blockNumber: nonceBlock },
      ),
    ]),
  )
  return { params, gas: withGasMargin(estimate), nonce }
}

/**
 * Sends a prepared write with the wallet client; errors become `VaultError`s.
 *
 * When the RPC fails after the transaction may have reached it (a timeout, a dropped connection, a
 * malformed or 5xx answer), the send's outcome is unknown: the error is `SEND_OUTCOME_UNKNOWN`, not
 * retryable, with the nonce it was sent with, because sending the same write again could do it twice.
 * A refusal the node made before accepting anything (a rate limit, a JSON-RPC error, no connection)
 * keeps its own code.
 */
export async function sendPrepared(
  ctx: DecodeContext,
  walletClient: VaultWalletClient,
  prepared: PreparedWrite,
  action: string,
): Promise<SentTransaction> {
  const from = prepared.params.account as Account | Address
  const address = typeof from === 'string' ? from : from.address
  try {
    const hash = await writeContract(walletClient, {
      ...prepared.params,
      gas: prepared.gas,
      nonce: prepared.nonce,
      chain: walletClient.chain ?? ctx.viemChain,
    } as never)
    return { hash, from: address, nonce: prepared.nonce, call: callOf(prepared.params) }
  } catch (error) {
    const converted = toVaultError(error, { ...ctx, action })
    if (!sendMayHaveLanded(converted, error)) throw converted
    throw new VaultTransactionError(
      `${action}: the RPC failed while the transaction was being sent (${converted.code}), so it may still be mined. Check the account's transaction with nonce ${prepared.nonce} before sending it again.`,
      {
        code: 'SEND_OUTCOME_UNKNOWN',
        details: { from: address, nonce: prepared.nonce, rpcCode: converted.code },
        cause: converted,
      },
    )
  }
}

/** The contract a simulated request calls and its calldata (a fee bump of it makes the same call). */
function callOf(params: Record<string, unknown>): SentTransaction['call'] {
  const { address, abi, functionName, args } = params as {
    address?: Address
    abi?: Abi
    functionName?: string
    args?: readonly unknown[]
  }
  if (!address || !abi || !functionName) return undefined
  return { to: address, input: encodeFunctionData({ abi, functionName, args } as never) }
}

/** An RPC failure after which a sent transaction may still have reached the node. */
function sendMayHaveLanded(converted: VaultError, error: unknown): boolean {
  if (!(converted instanceof VaultRpcError)) return false
  if (converted.code === 'RPC_TIMEOUT' || converted.code === 'RPC_BAD_RESPONSE') return true
  if (converted.code === 'RPC_HTTP_ERROR') return (converted.status ?? 0) >= 500
  // A refused or unresolved connection sent nothing; a reset one may have.
  if (converted.code === 'RPC_UNREACHABLE') {
    return !findCause(error, (e) => /ECONNREFUSED|ENOTFOUND|EAI_AGAIN/.test(String(e.code)))
  }
  return false
}

/**
 * Sends a simulated request (from `simulateContract`): {@link prepareWrite} (with its optional
 * `nonceBlock`), then {@link sendPrepared}.
 */
export async function sendRequest(
  ctx: DecodeContext,
  walletClient: VaultWalletClient,
  account: Account | Address,
  request: object,
  action: string,
  nonceBlock?: bigint,
): Promise<SentTransaction> {
  const prepared = await prepareWrite(ctx, account, request, action, nonceBlock)
  return sendPrepared(ctx, walletClient, prepared, action)
}

/**
 * Waits for a sent transaction's receipt and checks its status.
 *
 * The wait ({@link waitForNonceSlot}) ends when a transaction is mined in the sent one's nonce slot,
 * also one that replaced ours before the wait first looked. A replacement with the same call (a
 * wallet's fee bump) is the same write: its receipt is returned, and its hash is
 * `receipt.transactionHash`. Any other replacement was sent by another sender with the same key:
 * `NONCE_CONFLICT`, because reporting its receipt as ours would count someone else's write. A receipt
 * the node does not have yet is polled for until `options.timeout` (default 180 s, as viem's), then
 * `RECEIPT_TIMEOUT`.
 */
export async function waitForSuccess(
  ctx: VaultContext,
  sent: SentTransaction,
  action: string,
  options: WaitOptions = {},
): Promise<TransactionReceipt> {
  const { hash } = sent
  const { receipt, replacement } = await waitForNonceSlot(ctx, sent, action, options)
  if (replacement && !replacement.repriced) {
    throw new VaultTransactionError(
      `${action}: transaction ${hash} was replaced by ${replacement.hash}, sent with the same nonce by another sender (another process with the same key?). Read the state again before sending anything else.`,
      {
        code: 'NONCE_CONFLICT',
        details: { txHash: hash, replacedBy: replacement.hash },
        retryable: true,
      },
    )
  }
  if (receipt.status !== 'success') {
    const replayed = await replayRevert(ctx, receipt.transactionHash, receipt)
    const revert = replayed?.revert
    // The code stays TRANSACTION_REVERTED (gas was spent); what the revert means is in
    // `details.revertCode` and in the cause, decoded like a simulation's.
    throw new VaultTransactionError(
      `${action}: transaction ${receipt.transactionHash} reverted on chain${replayed ? `: ${replayed.message}` : '.'}`,
      {
        code: 'TRANSACTION_REVERTED',
        details: {
          txHash: receipt.transactionHash,
          blockNumber: receipt.blockNumber,
          ...(revert
            ? {
                revertCode: revert.code,
                ...(revert.errorName ? { errorName: revert.errorName, args: revert.args } : {}),
              }
            : {}),
        },
        cause: revert,
      },
    )
  }
  return receipt
}

/** The router events that name the wallet they are about. */
type WalletEventName = 'Deposited' | 'Withdrawn' | 'WalletAuthorised'

/** The router's `eventName` log for `wallet` in a receipt (logs of other contracts are ignored). */
export function findRouterEvent<const eventName extends WalletEventName>(
  ctx: VaultContext,
  receipt: TransactionReceipt,
  eventName: eventName,
  wallet: Address,
) {
  return parseEventLogs({
    abi: routerAbi,
    eventName,
    logs: receipt.logs.filter((log) => isAddressEqual(log.address, ctx.addresses.router)),
  }).find((entry) => isAddressEqual((entry.args as { wallet: Address }).wallet, wallet))
}

/** Like {@link findRouterEvent}, but a missing log is an `EVENT_NOT_FOUND` error. */
export function requireRouterEvent<const eventName extends WalletEventName>(
  ctx: VaultContext,
  receipt: TransactionReceipt,
  eventName: eventName,
  wallet: Address,
  action: string,
) {
  const log = findRouterEvent(ctx, receipt, eventName, wallet)
  if (!log) {
    throw new VaultTransactionError(
      `${action} ${receipt.transactionHash} succeeded but the router emitted no ${eventName} log for ${wallet}.`,
      { code: 'EVENT_NOT_FOUND', details: { txHash: receipt.transactionHash } },
    )
  }
  return log
}

/**
 * Best effort: replays a reverted transaction as an `eth_call` on the state before its block to learn
 * why it reverted (other transactions earlier in the same block may make the replay differ).
 *
 * @returns Why, as a sentence, with the decoded revert when there is one.
 */
async function replayRevert(
  ctx: VaultContext,
  hash: Hash,
  receipt: TransactionReceipt,
): Promise<{ message: string; revert?: VaultContractError } | undefined> {
  let functionName: string | undefined
  try {
    const tx = await getTransaction(ctx.publicClient, { hash })
    if (receipt.gasUsed >= tx.gas) return { message: `it ran out of gas (limit ${tx.gas})` }
    if (!tx.to) return undefined
    functionName = routerFunctionOf(tx.input)
    await call(ctx.publicClient, {
      account: tx.from,
      to: tx.to,
      data: tx.input,
      gas: tx.gas,
      blockNumber: receipt.blockNumber > 0n ? receipt.blockNumber - 1n : receipt.blockNumber,
    })
    return undefined
  } catch (error) {
    // The function name tells a deposit's slippage (in shares) from a withdrawal's (in USDC).
    const revert = toVaultError(error, { addresses: ctx.addresses, functionName })
    return revert instanceof VaultContractError ? { message: revert.message, revert } : undefined
  }
}

/** The router function a transaction's input calls, when it calls one. */
function routerFunctionOf(input: Hex): string | undefined {
  try {
    return decodeFunctionData({ abi: routerAbi, data: input }).functionName
  } catch {
    return undefined
  }
}
