import { type Address, decodeFunctionResult, encodeFunctionData } from 'viem'
import { simulateContract } from 'viem/actions'
import { routerAbi } from '../abis/index.js'
import type { VaultChainName } from '../chains.js'
import type { VaultContext } from '../context.js'
import { type DecodeContext, guard } from '../internal/read.js'
import {
  belowMinimumError,
  type StepsSimulation,
  simulateSteps,
  stepRevertError,
} from '../internal/simulateSteps.js'
import { validateSlippage, validateWallet } from '../internal/validate.js'
import {
  parseWithdrawTarget,
  quoteWithdraw,
  type WithdrawQuote,
} from '../internal/withdrawPreflight.js'
import { withdrawProbeAbi, withdrawProbeCode } from '../internal/withdrawProbe.js'
import { formatUsdc } from '../money.js'
import { type PlanWarning, slippageWarnings, type WalletCalls, walletCallsOf } from '../plans.js'
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
  /** The one step, `transaction`. */
  steps: readonly [WithdrawTransaction]
  /** The same step as an EIP-5792 `wallet_sendCalls` batch. */
  calls: WalletCalls
  /** What could still go wrong or is worth knowing, each with a stable code. */
  warnings: PlanWarning[]
}

/**
 * Plans `router.withdraw(shares, wallet, minUsdcOut)` for any wallet, without signing, in one round trip
 * on a batching transport: one Multicall3 read (registration, shares, the preview, the share math) and,
 * started in the same tick, one `eth_simulateV1` from the wallet.
 *
 * By `amount`, the shares are the fewest that pay the amount, from `previewWithdrawNet(amount, wallet)`
 * and the share math read in the same multicall (the router's quote often pays 1–2 base units more than
 * asked, and can fall 1 short for a whole position), and `minUsdcOut = amount`, so the wallet receives
 * at least what it asked for (or the transaction reverts). The simulation finds the same shares and
 * withdraws them as the wallet (a state override puts a small probe's code at the wallet's address for
 * that simulation only). By `shares`, `minUsdcOut = previewRedeem(shares) × (10000 − slippageBps) /
 * 10000`, and the simulation withdraws those shares.
 *
 * When the RPC refuses `eth_simulateV1` (the `SIMULATION_UNSUPPORTED` warning), or the simulated shares
 * differ from the SDK's (the probe steps down at most 4 shares below the router's quote), the withdrawal
 * is simulated with `eth_call` in a second round trip.
 *
 * @param ctx - The vault client (no wallet client needed).
 * @param params - `wallet`, exactly one of `amount` / `shares`, and `slippageBps`.
 * @returns The plan with its unsigned transaction.
 * @throws {VaultPreconditionError} `WALLET_NOT_REGISTERED`, `NO_POSITION`, `INSUFFICIENT_SHARES`;
 *   {VaultContractError} `UNSERVICEABLE_AMOUNT`, `INSUFFICIENT_VAULT_LIQUIDITY`, … from the preview or
 *   the simulation.
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
  const { router } = ctx.addresses
  // Started in the same tick as the read: a batching transport sends both in one request.
  const simulation =
    target.mode === 'amount'
      ? simulateSteps(
          ctx,
          wallet,
          [
            {
              to: wallet,
              data: encodeFunctionData({
                abi: withdrawProbeAbi,
                functionName: 'withdrawNet',
                args: [router, target.amount],
              }),
            },
          ],
          withdrawProbeCode,
        )
      : simulateSteps(ctx, wallet, [
          {
            to: router,
            data: encodeFunctionData({
              abi: routerAbi,
              functionName: 'withdraw',
              args: [target.shares, wallet, 0n],
            }),
          },
        ])
  simulation.catch(() => {}) // a failed read throws first; this rejection is then nobody's
  const quote = await quoteWithdraw(ctx, wallet, target, bps, 'Withdrawal plan')
  const decode = { ...ctx, morphoReachable: quote.morphoReachable }
  const simulated = await guard(decode, 'Withdrawal simulation', () => simulation)
  const transaction = buildWithdrawTransaction(ctx, quote.shares, wallet, quote.minUsdcOut)
  const warnings = [
    ...withdrawWarnings(quote),
    ...(target.mode === 'shares' ? slippageWarnings(bps, 'USDC paid out') : []),
  ]
  let out = simulatedUsdcOut(ctx, quote, simulated, warnings)
  if (out === undefined) {
    const { result } = await guard(decode, 'Withdrawal simulation', () =>
      simulateContract(ctx.publicClient, {
        account: wallet,
        address: router,
        abi: routerAbi,
        functionName: 'withdraw',
        args: [quote.shares, wallet, quote.minUsdcOut],
      }),
    )
    out = result
  }
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
    simulatedUsdcOut: out,
    blockNumber: quote.blockNumber,
    transaction,
    steps: [transaction],
    calls: walletCallsOf(ctx, wallet, [transaction]),
    warnings,
  }
}

/**
 * The USDC the batch simulation paid, or `undefined` when it cannot tell for these shares (the RPC
 * refused the method, or the router's quote differs from the checked shares): then an `eth_call`
 * decides. A revert throws, decoded; so does a payout below `minUsdcOut`.
 */
function simulatedUsdcOut(
  ctx: DecodeContext,
  quote: WithdrawQuote,
  simulation: StepsSimulation,
  warnings: PlanWarning[],
): bigint | undefined {
  if (!simulation.supported) {
    warnings.push({
      level: 'warning',
      code: 'SIMULATION_UNSUPPORTED',
      message:
        'The RPC does not offer eth_simulateV1, so the withdrawal was simulated with eth_call in a second request.',
    })
    return undefined
  }
  const [step] = simulation.steps
  if (!step) return undefined
  const action = 'Withdrawal simulation'
  if (step.status === 'reverted') {
    throw stepRevertError(ctx, { contract: 'router', functionName: 'withdraw', action }, step.data)
  }
  let shares = quote.shares
  let out: bigint
  if (quote.mode === 'amount') {
    ;[shares, out] = decodeFunctionResult({
      abi: withdrawProbeAbi,
      functionName: 'withdrawNet',
      data: step.data,
    })
  } else {
    out = decodeFunctionResult({ abi: routerAbi, functionName: 'withdraw', data: step.data })
  }
  // The probe found other shares than the SDK's (a state between the two reads, or a quote more than
  // its steps above the fewest): simulate the SDK's instead.
  if (shares !== quote.shares) return undefined
  if (out < quote.minUsdcOut) {
    throw belowMinimumError(ctx, { functionName: 'withdraw', action }, out, quote.minUsdcOut)
  }
  return out
}

/** The warnings the withdrawal's reads give: thin venue capacity, a position left below the minimum. */
function withdrawWarnings(quote: WithdrawQuote): PlanWarning[] {
  const warnings: PlanWarning[] = []
  if (quote.withdrawCap !== undefined && quote.withdrawCap < 2n * quote.expectedUsdcOut) {
    warnings.push({
      level: 'warning',
      code: 'WITHDRAW_CAPACITY_LOW',
      message: `The venues can pay out ${formatUsdc(quote.withdrawCap)} USDC now, less than twice this withdrawal: another withdrawal that lands first can make this one revert (InsufficientVaultLiquidity).`,
    })
  }
  const left = quote.remainingValue
  if (
    left !== undefined &&
    left > 0n &&
    quote.minDeposit !== undefined &&
    left < quote.minDeposit &&
    quote.shares < quote.shareBalance
  ) {
    warnings.push({
      level: 'info',
      code: 'POSITION_BELOW_MINIMUM',
      message: `The position left after this withdrawal is worth about ${formatUsdc(left)} USDC, below the vault's minimum deposit of ${formatUsdc(quote.minDeposit)} USDC. Withdrawing the whole position (its withdrawableUsdc) leaves nothing behind.`,
    })
  }
  return warnings
}
