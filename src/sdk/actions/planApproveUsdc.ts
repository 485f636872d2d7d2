import type { Address } from 'viem'
import { multicall } from 'viem/actions'
import { usdcAbi } from '../abis/index.js'
import type { VaultChainName } from '../chains.js'
import type { VaultContext } from '../context.js'
import { VaultValidationError } from '../errors/classes.js'
import type { Field } from '../field.js'
import {
  blockNumberCall,
  blockOf,
  blockTimestampCall,
  fieldOf,
  guard,
  multicallOptions,
} from '../internal/read.js'
import { validateWallet } from '../internal/validate.js'
import { type PlanWarning, type WalletCalls, walletCallsOf } from '../plans.js'
import { type ApproveTransaction, buildApproveTransaction } from '../transactions.js'

export type PlanApproveUsdcParameters = {
  /** The wallet that will send the approval. */
  wallet: Address
  /** The allowance to set, in USDC base units (0 revokes). */
  amount: bigint
}

/** An unsigned USDC approval with the router as spender. */
export type ApproveUsdcPlan = {
  chain: VaultChainName
  chainId: number
  wallet: Address
  spender: Address
  amount: bigint
  /** The wallet's current allowance to the router. */
  currentAllowance: Field<bigint>
  /** The wallet's USDC balance. */
  usdcBalance: Field<bigint>
  blockNumber: bigint
  transaction: ApproveTransaction
  /** The one step, `transaction`. */
  steps: readonly [ApproveTransaction]
  /** The same step as an EIP-5792 `wallet_sendCalls` batch. */
  calls: WalletCalls
  /** Structured warnings (none today for an approval); the field is on every plan. */
  warnings: PlanWarning[]
}

/**
 * Plans `usdc.approve(router, amount)` for any wallet, without signing (one RPC round trip, to report
 * the current allowance and balance).
 *
 * @param ctx - The vault client (no wallet client needed).
 * @param params - `wallet`, `amount` (base units).
 * @returns The plan with its unsigned transaction.
 * @example
 * const plan = await vault.planApproveUsdc({ wallet, amount: parseUsdc('25') })
 * // send plan.transaction from the wallet
 */
export async function planApproveUsdc(
  ctx: VaultContext,
  params: PlanApproveUsdcParameters,
): Promise<ApproveUsdcPlan> {
  const wallet = validateWallet(params.wallet)
  const amount = params.amount
  if (typeof amount !== 'bigint' || amount < 0n || amount >= 2n ** 256n) {
    throw new VaultValidationError(
      'amount must be a bigint in base units from 0 (revoke) to 2^256 - 1; convert decimal text with parseUsdc().',
      { code: 'INVALID_AMOUNT', details: { field: 'amount' } },
    )
  }
  const { router, usdc } = ctx.addresses
  const action = 'Approval plan'
  const [bn, ts, allowance, balance] = await guard(ctx, action, () =>
    multicall(ctx.publicClient, {
      ...multicallOptions,
      contracts: [
        blockNumberCall,
        blockTimestampCall,
        { address: usdc, abi: usdcAbi, functionName: 'allowance', args: [wallet, router] },
        { address: usdc, abi: usdcAbi, functionName: 'balanceOf', args: [wallet] },
      ],
    }),
  )
  const { blockNumber } = blockOf(ctx, bn, ts, action)
  const transaction = buildApproveTransaction(ctx, router, amount)
  return {
    chain: ctx.chain,
    chainId: ctx.chainId,
    wallet,
    spender: router,
    amount,
    currentAllowance: fieldOf(ctx, allowance),
    usdcBalance: fieldOf(ctx, balance),
    blockNumber,
    transaction,
    steps: [transaction],
    calls: walletCallsOf(ctx, wallet, [transaction]),
    warnings: [],
  }
}
