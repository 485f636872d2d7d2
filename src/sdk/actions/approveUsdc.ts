import type { Account, Address, Hash } from 'viem'
import { simulateContract } from 'viem/actions'
import { usdcAbi } from '../abis/index.js'
import type { VaultContext } from '../context.js'
import { guard } from '../internal/read.js'
import { resolveAccount, validateUint256, validateWallet } from '../internal/validate.js'
import { sendRequest, type WaitOptions, waitForSuccess } from '../internal/write.js'

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
 * simulating first.
 *
 * @param ctx - The vault client, with a wallet client.
 * @param params - `amount`, `spender`, `account`.
 * @returns The transaction hash.
 * @example
 * await vault.approveUsdc({ amount: parseUsdc('100') })
 */
export async function approveUsdc(ctx: VaultContext, params: ApproveUsdcParameters): Promise<Hash> {
  return (await executeApprove(ctx, params)).hash
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
export async function approveUsdcAndWait(
  ctx: VaultContext,
  params: ApproveUsdcParameters & WaitOptions,
): Promise<ApproveUsdcResult> {
  const { hash, spender, amount } = await executeApprove(ctx, params)
  const receipt = await waitForSuccess(ctx, hash, 'Approval', params)
  return { txHash: hash, spender, amount, blockNumber: receipt.blockNumber }
}

async function executeApprove(
  ctx: VaultContext,
  params: ApproveUsdcParameters,
): Promise<{ hash: Hash; spender: Address; amount: bigint }> {
  const { walletClient, account } = resolveAccount(ctx, params.account)
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
    hash: await sendRequest(ctx, walletClient, account, request, 'Approval'),
    spender,
    amount,
  }
}
