import type { Address } from 'viem'
import { simulateContract } from 'viem/actions'
import { routerAbi } from '../abis/index.js'
import type { VaultChainName } from '../chains.js'
import type { VaultContext } from '../context.js'
import { guard } from '../internal/read.js'
import { validateSlippage, validateWallet } from '../internal/validate.js'
import { parseWithdrawTarget, quoteWithdraw } from '../internal/withdrawPreflight.js'
import { buildWithdrawTransaction, type WithdrawTransaction } from '../transactions.js'

/**
 * A withdrawal to plan: by `amount` (USDC the wallet receives at least, after the fee) or by `shares`
 * (exactly that many burned). Exactly one of the two.
 */
export type PlanWithdrawParameters = {
  wallet: Address
  /** Tolerance on the USDC out when withdrawing by shares, in bps (0–1000, default 10). */
  slippageBps?: number | undefined
} & ({ amount: bigint; shares?: undefined } | { shares: bigint; amount?: undefined })

/** An unsigned withdrawal. */
export type WithdrawPlan = {
  chain: VaultChainName
  chainId: number
  wallet: Address
  mode: 'amount' | 'shares'
  /** The requested USDC (by amount), else `undefined`. */
  amount: bigint | undefined
  /** Shares the transaction burns. */
  shares: bigint
  /** The wallet's share balance. */
  shareBalance: bigint
  /** USDC the preview promises (the requested amount, by amount). */
  expectedUsdcOut: bigint
  /** The least USDC the transaction accepts; by amount it equals the amount. */
  minUsdcOut: bigint
  /** The slippage applied (by shares only; by amount the guarantee `minUsdcOut = amount` wins). */
  slippageBps: number
  /** USDC the simulation returned. */
  simulatedUsdcOut: bigint
  blockNumber: bigint
  transaction: WithdrawTransaction
}

/**
 * Plans `router.withdraw(shares, wallet, minUsdcOut)` for any wallet, without signing, in two round
 * trips: one Multicall3 read (registration, shares, the preview) and one simulation from the wallet.
 *
 * By `amount`, the shares come from `previewWithdrawNet(amount, wallet)`, checked against the share
 * math read in the same multicall (the live quote can fall 1 base unit short for a whole position; then
 * one more share, or all of them), and `minUsdcOut = amount`, so the wallet receives at least what it
 * asked for (or the transaction reverts). By `shares`,
 * `minUsdcOut = previewRedeem(shares) × (10000 − slippageBps) / 10000`.
 *
 * @param ctx - The vault client (no wallet client needed).
 * @param params - `wallet`, exactly one of `amount` / `shares`, and `slippageBps`.
 * @returns The plan with its unsigned transaction.
 * @throws {VaultPreconditionError} `WALLET_NOT_REGISTERED`, `INSUFFICIENT_SHARES`; {VaultContractError}
 *   `UNSERVICEABLE_AMOUNT`, `NO_POSITION`, … from the preview or the simulation.
 * @example
 * const plan = await vault.planWithdraw({ wallet, amount: parseUsdc('5') })
 */
export async function planWithdraw(
  ctx: VaultContext,
  params: PlanWithdrawParameters,
): Promise<WithdrawPlan> {
  const wallet = validateWallet(params.wallet)
  const target = parseWithdrawTarget(params)
  const bps = validateSlippage(params.slippageBps)
  const quote = await quoteWithdraw(ctx, wallet, target, bps, 'Withdrawal plan')
  const decode = { ...ctx, morphoReachable: quote.morphoReachable }
  const { result } = await guard(decode, 'Withdrawal simulation', () =>
    simulateContract(ctx.publicClient, {
      account: wallet,
      address: ctx.addresses.router,
      abi: routerAbi,
      functionName: 'withdraw',
      args: [quote.shares, wallet, quote.minUsdcOut],
    }),
  )
  return {
    chain: ctx.chain,
    chainId: ctx.chainId,
    wallet,
    mode: quote.mode,
    amount: target.mode === 'amount' ? target.amount : undefined,
    shares: quote.shares,
    shareBalance: quote.shareBalance,
    expectedUsdcOut: quote.expectedUsdcOut,
    minUsdcOut: quote.minUsdcOut,
    slippageBps: bps,
    simulatedUsdcOut: result,
    blockNumber: quote.blockNumber,
    transaction: buildWithdrawTransaction(ctx, quote.shares, wallet, quote.minUsdcOut),
  }
}
