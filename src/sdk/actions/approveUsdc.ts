import type { Account, Address, Hash } from 'viem'
import { simulateContract } from 'viem/actions'
import { usdcAbi } from '../abis/index.js'
import type { VaultContext } from '../context.js'
import { guard } from '../internal/read.js'
import { resolveAccount, validateUint256, validateWallet } from '../internal/validate.js'
import type { SentTransaction } from '../internal/waitForNonceSlot.js'
import { sendRequest, waitForSuccess } from '../internal/write.js'
import {
  assertSlotFor,
  runExclusive,
  sendExclusive,
  type WriteSlot,
} from '../internal/writeQueue.js'
import type { WaitOptions } from '../transactions.js'

export type ApproveUsdcParameters = {
  /** The allowance to set, in USDC base units (0 revokes). */
  amount: bigint
  /** Who may spend. Default: the router. */
  spender?: Address | undefined
  /** The account that approves. Default: the wallet client's account. */
  account?: Account | Address | undefined
}

/** A confirmed approval. */
export type ApproveUsdcResult = {
  txHash: Hash
  spender: Address
  amount: bigint
  blockNumber: bigint
}

/**
 * Sets the account's USDC allowance (`usdc.approve(spender, amount)`, the router by default),
 * simulating and estimating gas first.
 *
 * Runs in the sending account's write queue: after every earlier write from that account has its
 * receipt, and holding the account until this transaction has its own. A nonce another process took
 * first is `NONCE_CONFLICT` (retryable).
 *
 * @param ctx - The vault client, with a wallet client.
 * @param params - `amount`, `spender`, `account`.
 * @returns The transaction hash.
 * @example
 * await vault.approveUsdc({ amount: parseUsdc('100') })
 */
export function approveUsdc(ctx: VaultContext, params: ApproveUsdcParameters): Promise<Hash> {
  return sendExclusive(ctx, params.account, (slot) => executeApprove(slot, ctx, params))
}

/**
 * Sets the USDC allowance and waits for the receipt.
 *
 * @param ctx - The vault client, with a wallet client.
 * @param params - `amount`, `spender`, `account`, `confirmations`, `timeout`.
 * @returns `{ txHash, spender, amount, blockNumber }`.
 * @example
 * await vault.approveUsdcAndWait({ amount: parseUsdc('100') })
 */
export function approveUsdcAndWait(
  ctx: VaultContext,
  params: ApproveUsdcParameters & WaitOptions,
): Promise<ApproveUsdcResult> {
  return runExclusive(ctx, params.account, (slot) => approveUsdcAndWaitIn(slot, ctx, params))
}

/**
 * The body of {@link approveUsdcAndWait} for a caller that already holds the account's write slot
 * (see `runExclusive`), such as a deposit that approves first.
 *
 * @param slot - The sending account's write slot.
 * @param ctx - The vault client, with a wallet client.
 * @param params - As `approveUsdcAndWait`.
 * @param nonceBlock - The block the caller decided on (a deposit's checks): the nonce is read there
 *   (see `prepareWrite`). Default: the latest block.
 * @returns As `approveUsdcAndWait`.
 */
export async function approveUsdcAndWaitIn(
  slot: WriteSlot,
  ctx: VaultContext,
  params: ApproveUsdcParameters & WaitOptions,
  nonceBlock?: bigint,
): Promise<ApproveUsdcResult> {
  const { spender, amount, ...sent } = await executeApprove(slot, ctx, params, nonceBlock)
  const receipt = await waitForSuccess(ctx, sent, 'Approval', params)
  return { txHash: receipt.transactionHash, spender, amount, blockNumber: receipt.blockNumber }
}

async function executeApprove(
  slot: WriteSlot,
  ctx: VaultContext,
  params: ApproveUsdcParameters,
  nonceBlock?: bigint,
): Promise<SentTransaction & { spender: Address; amount: bigint }> {
  const { walletClient, account, address } = resolveAccount(ctx, params.account)
  assertSlotFor(slot, ctx, address)
  const amount = validateUint256(params.amount, 'amount')
  const spender =
    params.spender === undefined ? ctx.addresses.router : validateWallet(params.spender, 'spender')
  const { request } = await guard(ctx, 'Approval simulation', () =>
    simulateContract(ctx.publicClient, {
      account,
      address: ctx.addresses.usdc,
      abi: usdcAbi,
      functionName: 'approve',
      args: [spender, amount],
    }),
  )
  return {
    ...(await sendRequest(ctx, walletClient, account, request, 'Approval', nonceBlock)),
    spender,
    amount,
  }
}
