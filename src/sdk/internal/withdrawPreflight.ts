import type { Address } from 'viem'
import { multicall } from 'viem/actions'
import { feeCollectorAbi, routerAbi, shareTokenAbi } from '../abis/index.js'
import type { VaultContext } from '../context.js'
import { VaultPreconditionError, VaultValidationError } from '../errors/classes.js'
import { describeShares, formatUsdc } from '../money.js'
import {
  blockNumberCall,
  blockOf,
  blockTimestampCall,
  guard,
  multicallOptions,
  resultValue,
  withdrawCapacityCall,
  withMorphoReachability,
} from './read.js'
import {
  previewRedeem,
  sharesDeliveringNet,
  sharesToAssets,
  type VaultTotals,
  type WalletHoldings,
} from './shareMath.js'
import { applySlippage, validateAmount } from './validate.js'

/** A withdrawal by USDC amount (the wallet receives at least `amount`) or by exact share count. */
export type WithdrawTarget =
  | { amount: bigint; shares?: undefined }
  | { shares: bigint; amount?: undefined }

/** Checks the "exactly one of amount or shares" rule and the value. */
export function parseWithdrawTarget(params: {
  amount?: bigint | undefined
  shares?: bigint | undefined
}): { mode: 'amount'; amount: bigint } | { mode: 'shares'; shares: bigint } {
  const hasAmount = params.amount !== undefined
  const hasShares = params.shares !== undefined
  if (hasAmount === hasShares) {
    throw new VaultValidationError(
      hasAmount
        ? 'Give either `amount` (USDC to receive) or `shares` (shares to burn), not both.'
        : 'Give either `amount` (USDC to receive) or `shares` (shares to burn).',
      { code: 'INVALID_ARGUMENT' },
    )
  }
  return hasAmount
    ? { mode: 'amount', amount: validateAmount(params.amount) }
    : { mode: 'shares', shares: validateAmount(params.shares, 'shares') }
}

/** What a withdrawal will burn and the least it accepts, checked at one block. */
export type WithdrawQuote = {
  mode: 'amount' | 'shares'
  blockNumber: bigint
  /** Shares to burn. */
  shares: bigint
  /** The wallet's share balance. */
  shareBalance: bigint
  /** USDC the preview promises: `amount` itself when withdrawing by amount. */
  expectedUsdcOut: bigint
  /** The least USDC accepted; never below `amount` when withdrawing by amount. */
  minUsdcOut: bigint
  /** `withdrawCapacity().morphoReachable` at that block; `undefined` when that read failed. */
  morphoReachable: boolean | undefined
  /** `withdrawCapacity().totalWithdrawCap`: what the venues can pay out now; `undefined` when unread. */
  withdrawCap: bigint | undefined
  /** The value of the shares left after the withdrawal; `undefined` when the totals could not be read. */
  remainingValue: bigint | undefined
  /** The router's minimum deposit; `undefined` when unread. */
  minDeposit: bigint | undefined
}

/**
 * Reads the wallet's registration, shares and the preview in one round trip and derives the
 * withdrawal: by amount, the fewest shares that pay the amount, found from the router's
 * `previewWithdrawNet(amount)` with its share math (see {@link sharesForAmount}), and
 * `minUsdcOut = amount`; by shares, `previewRedeem(shares)` minus slippage. Blockers throw
 * `VaultPreconditionError`s.
 */
export async function quoteWithdraw(
  ctx: VaultContext,
  wallet: Address,
  target: { mode: 'amount'; amount: bigint } | { mode: 'shares'; shares: bigint },
  slippageBps: number,
  action: string,
): Promise<WithdrawQuote> {
  const { router, shareToken, feeCollector } = ctx.addresses
  const preview =
    target.mode === 'amount'
      ? ({
          address: router,
          abi: routerAbi,
          functionName: 'previewWithdrawNet',
          args: [target.amount, wallet],
        } as const)
      : ({
          address: router,
          abi: routerAbi,
          functionName: 'previewRedeem',
          args: [target.shares, wallet],
        } as const)
  const [bn, ts, registered, balance, previewResult, capacity, assets, supply, basis, feeBps, min] =
    await guard(ctx, action, () =>
      multicall(ctx.publicClient, {
        ...multicallOptions,
        contracts: [
          blockNumberCall,
          blockTimestampCall,
          { address: router, abi: routerAbi, functionName: 'authorizedWallets', args: [wallet] },
          { address: shareToken, abi: shareTokenAbi, functionName: 'balanceOf', args: [wallet] },
          preview,
          withdrawCapacityCall(ctx),
          // The share math's inputs, to check a by-amount quote (sharesForAmount).
          { address: router, abi: routerAbi, functionName: 'totalVaultAssets' },
          { address: shareToken, abi: shareTokenAbi, functionName: 'totalSupply' },
          { address: router, abi: routerAbi, functionName: 'costBasisUSDC', args: [wallet] },
          { address: feeCollector, abi: feeCollectorAbi, functionName: 'FEE_BPS' },
          { address: router, abi: routerAbi, functionName: 'MIN_DEPOSIT' },
        ],
      }),
    )
  const { blockNumber } = blockOf(ctx, bn, ts, action)
  const decode = withMorphoReachability(ctx, capacity)
  const { morphoReachable } = decode
  if (!resultValue(decode, registered, action)) {
    throw new VaultPreconditionError(
      `Wallet ${wallet} is not registered with the vault router, so it has nothing to withdraw.`,
      { code: 'WALLET_NOT_REGISTERED', details: { wallet } },
    )
  }
  const shareBalance = resultValue(decode, balance, action)
  // One answer for an empty position, whichever way the withdrawal was asked for (by amount the
  // router's preview says NoPositionToWithdraw).
  if (shareBalance === 0n) {
    throw new VaultPreconditionError(
      `Wallet ${wallet} holds no vault shares, so it has nothing to withdraw.`,
      { code: 'NO_POSITION', details: { wallet } },
    )
  }
  if (target.mode === 'shares' && target.shares > shareBalance) {
    throw new VaultPreconditionError(
      `The wallet holds ${describeShares(shareBalance)}, fewer than the ${describeShares(target.shares)} to burn.`,
      {
        code: 'INSUFFICIENT_SHARES',
        details: { requested: target.shares, available: shareBalance },
      },
    )
  }
  const previewed = resultValue(decode, previewResult as never, action) as bigint
  const facts = {
    morphoReachable,
    withdrawCap: capacity.status === 'success' ? capacity.result.totalWithdrawCap : undefined,
    minDeposit: min.status === 'success' ? min.result : undefined,
  }
  const remainingValueAfter = (burnt: bigint) =>
    assets.status === 'success' && supply.status === 'success'
      ? sharesToAssets(shareBalance - burnt, {
          totalAssets: assets.result,
          totalShares: supply.result,
        })
      : undefined
  if (target.mode === 'amount') {
    if (previewed > shareBalance) {
      throw new VaultPreconditionError(
        `Receiving ${formatUsdc(target.amount)} USDC needs ${describeShares(previewed)}; the wallet holds ${describeShares(shareBalance)}.`,
        { code: 'INSUFFICIENT_SHARES', details: { requested: previewed, available: shareBalance } },
      )
    }
    const shares = sharesForAmount(previewed, target.amount, {
      vault: {
        totalAssets: resultValue(decode, assets, action),
        totalShares: resultValue(decode, supply, action),
      },
      wallet: { shares: shareBalance, costBasis: resultValue(decode, basis, action) },
      feeBps: resultValue(decode, feeBps, action),
    })
    return {
      mode: 'amount',
      blockNumber,
      shares,
      shareBalance,
      expectedUsdcOut: target.amount,
      minUsdcOut: target.amount,
      ...facts,
      remainingValue: remainingValueAfter(shares),
    }
  }
  return {
    mode: 'shares',
    blockNumber,
    shares: target.shares,
    shareBalance,
    expectedUsdcOut: previewed,
    minUsdcOut: applySlippage(previewed, slippageBps),
    ...facts,
    remainingValue: remainingValueAfter(target.shares),
  }
}

/**
 * The shares to burn so the wallet receives at least `amount`: the fewest whose `previewRedeem` pays it
 * at the quote's block (every share when `amount` is everything the position pays). The router's
 * `previewWithdrawNet` quote bounds the search: it aims at `amount + 1` and rounds up, so it often pays
 * 1–2 units more than asked, and for the whole position it can quote `W − 1` shares, 1 unit short (then
 * the next share up, or every share, is the bound). The fewest pay at most `⌈price per share⌉ − 1`
 * units more than `amount`: 1 while a share is worth under 2 units (docs/sdk.md#rounding).
 *
 * @param quoted - `previewWithdrawNet(amount, wallet)`.
 * @param amount - The USDC the wallet must receive, net of the fee.
 * @param state - The share math's inputs, read at the quote's block.
 * @returns The shares to burn.
 * @throws {VaultPreconditionError} `UNSERVICEABLE_AMOUNT` when even every share pays less.
 */
export function sharesForAmount(
  quoted: bigint,
  amount: bigint,
  state: { vault: VaultTotals; wallet: WalletHoldings; feeBps: bigint },
): bigint {
  const shares = sharesDeliveringNet(quoted, amount, state.vault, state.wallet, state.feeBps)
  if (shares !== undefined) return shares
  const maxDeliverable = previewRedeem(state.wallet.shares, state.vault, state.wallet, state.feeBps)
  throw new VaultPreconditionError(
    `The wallet can receive at most ${formatUsdc(maxDeliverable)} USDC after fees, less than the ${formatUsdc(amount)} USDC requested.`,
    { code: 'UNSERVICEABLE_AMOUNT', details: { requested: amount, maxDeliverable } },
  )
}
