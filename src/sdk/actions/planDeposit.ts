import type { Address } from 'viem'
import { simulateContract } from 'viem/actions'
import { routerAbi } from '../abis/index.js'
import type { VaultChainName } from '../chains.js'
import type { VaultContext } from '../context.js'
import { assertDepositPossible, readDepositChecks } from '../internal/depositPreflight.js'
import { guard } from '../internal/read.js'
import {
  applySlippage,
  validateAmount,
  validateSlippage,
  validateWallet,
} from '../internal/validate.js'
import {
  type ApproveTransaction,
  buildApproveTransaction,
  buildDepositTransaction,
  buildInitializeTransaction,
  type DepositTransaction,
  type InitializeTransaction,
} from '../transactions.js'

export type PlanDepositParameters = {
  /** The wallet that pays the USDC, receives the shares and sends the transaction. */
  wallet: Address
  /** USDC base units. */
  amount: bigint
  /** Tolerance on the shares minted, in bps: an integer 0–1000. Default 10. */
  slippageBps?: number | undefined
}

/** An unsigned deposit, with what must happen before it. */
export type DepositPlan = {
  chain: VaultChainName
  chainId: number
  wallet: Address
  amount: bigint
  slippageBps: number
  /** Shares `previewDeposit(amount)` promises now. */
  expectedShares: bigint
  /** `expectedShares × (10000 − slippageBps) / 10000`, rounded down: the deposit reverts below it. */
  minSharesOut: bigint
  /** The router's minimum deposit. */
  minDeposit: bigint
  usdcBalance: bigint
  /** `true` when the router's allowance is below `amount`: approve first (see `approveTransaction`). */
  needsApproval: boolean
  /** The wallet's current USDC allowance to the router. */
  allowance: bigint
  /** `amount − allowance` when approval is needed, else 0. */
  shortfall: bigint
  /** `usdc.approve(router, amount)`, present when `needsApproval`. */
  approveTransaction?: ApproveTransaction
  /** `true` when the wallet is not registered: send `initializeTransaction` from it first. */
  needsRegistration: boolean
  /** `router.initialize()`, present when `needsRegistration`. */
  initializeTransaction?: InitializeTransaction
  /** Whether the deposit was simulated (only when nothing is missing). */
  simulated: boolean
  /** Shares the simulation minted. */
  simulatedShares?: bigint
  blockNumber: bigint
  transaction: DepositTransaction
}

/**
 * Plans `router.deposit(amount, wallet, minSharesOut)` for any wallet, without signing.
 *
 * One round trip reads every check (pause, registration, minimum, TVL cap, balance, allowance,
 * preview); a blocker throws a `VaultPreconditionError` (`DEPOSITS_PAUSED`, `BELOW_MIN_DEPOSIT`,
 * `TVL_CAP_EXCEEDED`, `INSUFFICIENT_USDC`). Missing approval or registration is reported with the
 * transactions that fix it. When nothing is missing, a second round trip simulates the deposit from
 * the wallet; a revert throws a decoded `VaultContractError`.
 *
 * @param ctx - The vault client (no wallet client needed).
 * @param params - `wallet`, `amount`, `slippageBps`.
 * @returns The plan with its unsigned transaction.
 * @example
 * const plan = await vault.planDeposit({ wallet, amount: parseUsdc('25') })
 * if (plan.needsApproval) {
 *   // send plan.approveTransaction first
 * }
 */
export async function planDeposit(
  ctx: VaultContext,
  params: PlanDepositParameters,
): Promise<DepositPlan> {
  const wallet = validateWallet(params.wallet)
  const amount = validateAmount(params.amount)
  const slippageBps = validateSlippage(params.slippageBps)
  const checks = await readDepositChecks(ctx, wallet, amount, 'Deposit plan')
  assertDepositPossible(checks, amount)

  const minSharesOut = applySlippage(checks.expectedShares, slippageBps)
  const needsApproval = checks.allowance < amount
  const needsRegistration = !checks.registered
  const plan: DepositPlan = {
    chain: ctx.chain,
    chainId: ctx.chainId,
    wallet,
    amount,
    slippageBps,
    expectedShares: checks.expectedShares,
    minSharesOut,
    minDeposit: checks.minDeposit,
    usdcBalance: checks.usdcBalance,
    needsApproval,
    allowance: checks.allowance,
    shortfall: needsApproval ? amount - checks.allowance : 0n,
    ...(needsApproval
      ? { approveTransaction: buildApproveTransaction(ctx, ctx.addresses.router, amount) }
      : {}),
    needsRegistration,
    ...(needsRegistration ? { initializeTransaction: buildInitializeTransaction(ctx) } : {}),
    simulated: false,
    blockNumber: checks.blockNumber,
    transaction: buildDepositTransaction(ctx, amount, wallet, minSharesOut),
  }
  if (needsApproval || needsRegistration) return plan

  const decode = { ...ctx, morphoReachable: checks.morphoReachable }
  const { result } = await guard(decode, 'Deposit simulation', () =>
    simulateContract(ctx.publicClient, {
      account: wallet,
      address: ctx.addresses.router,
      abi: routerAbi,
      functionName: 'deposit',
      args: [amount, wallet, minSharesOut],
    }),
  )
  return { ...plan, simulated: true, simulatedShares: result }
}
