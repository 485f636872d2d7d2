import { type Address, decodeFunctionResult, encodeFunctionData } from 'viem'
import { simulateContract } from 'viem/actions'
import { routerAbi } from '../abis/index.js'
import type { VaultChainName } from '../chains.js'
import type { VaultContext } from '../context.js'
import {
  assertDepositPossible,
  type DepositChecks,
  readDepositChecks,
} from '../internal/depositPreflight.js'
import { guard } from '../internal/read.js'
import {
  belowMinimumError,
  type StepOutcome,
  type StepsSimulation,
  simulateSteps,
  stepRevertError,
} from '../internal/simulateSteps.js'
import {
  applySlippage,
  validateAmount,
  validateSlippage,
  validateWallet,
} from '../internal/validate.js'
import { formatUsdc } from '../money.js'
import { type PlanWarning, slippageWarnings, type WalletCalls, walletCallsOf } from '../plans.js'
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
  /**
   * Whether the deposit was simulated: after the earlier steps (registration, approval) in one
   * `eth_simulateV1` batch, or alone when the RPC does not offer that method and nothing is missing.
   */
  simulated: boolean
  /** Shares the simulation minted. */
  simulatedShares?: bigint
  blockNumber: bigint
  transaction: DepositTransaction
  /** Every transaction to send, in order: `initializeTransaction`, `approveTransaction`, `transaction`. */
  steps: readonly (InitializeTransaction | ApproveTransaction | DepositTransaction)[]
  /** The same steps as one EIP-5792 `wallet_sendCalls` batch, for a smart wallet: all or nothing. */
  calls: WalletCalls
  /** What could still go wrong or is worth knowing, each with a stable code. */
  warnings: PlanWarning[]
}

/**
 * Plans `router.deposit(amount, wallet, minSharesOut)` for any wallet, without signing, in one round
 * trip on a batching transport.
 *
 * One Multicall3 read takes every check (pause, registration, minimum, TVL cap, balance, allowance,
 * preview, and whether the oracle is fresh once the deposit's own attempt to record ran); a blocker
 * throws a `VaultPreconditionError` (`DEPOSITS_PAUSED`, `BELOW_MIN_DEPOSIT`, `TVL_CAP_EXCEEDED`,
 * `INSUFFICIENT_USDC`, `STALE_ORACLE`), whatever the wallet still needs. Alongside it, in the same tick,
 * `eth_simulateV1` runs the whole sequence a new wallet needs from the wallet: `initialize()` (its
 * `WalletAlreadyAuthorised` revert is expected for a registered wallet), `approve(router, amount)` and
 * `deposit(amount, wallet, 0)`; the deposit's result gives `simulatedShares`. A deposit that reverts there,
 * or mints fewer than `minSharesOut`, throws a decoded `VaultContractError`. Missing approval or
 * registration is reported with the transactions that fix it, in `steps` and as one EIP-5792 batch
 * in `calls`.
 *
 * When the RPC refuses `eth_simulateV1`, the plan carries the `SIMULATION_UNSUPPORTED` warning and
 * simulates the deposit alone in a second round trip when nothing is missing (else not at all).
 *
 * @param ctx - The vault client (no wallet client needed).
 * @param params - `wallet`, `amount`, `slippageBps`.
 * @returns The plan with its unsigned transactions.
 * @example
 * const plan = await vault.planDeposit({ wallet, amount: parseUsdc('25') })
 * if (plan.needsApproval) {
 *   // send plan.steps in order, or plan.calls with wallet_sendCalls
 * }
 */
export async function planDeposit(
  ctx: VaultContext,
  params: PlanDepositParameters,
): Promise<DepositPlan> {
  const wallet = validateWallet(params.wallet)
  const amount = validateAmount(params.amount)
  const slippageBps = validateSlippage(params.slippageBps)
  const { router } = ctx.addresses
  const initialize = buildInitializeTransaction(ctx)
  const approve = buildApproveTransaction(ctx, router, amount)
  // Started in the same tick: a batching transport sends the read and the simulation together.
  const simulation = simulateSteps(ctx, wallet, [
    initialize,
    approve,
    {
      to: router,
      data: encodeFunctionData({
        abi: routerAbi,
        functionName: 'deposit',
        args: [amount, wallet, 0n],
      }),
    },
  ])
  // Settled whatever happens, so a failed read leaves no rejection unheard.
  simulation.catch(() => {})
  const checks = await readDepositChecks(ctx, wallet, amount, 'Deposit plan')
  assertDepositPossible(checks, amount)
  const simulated = await guard(
    { ...ctx, morphoReachable: checks.morphoReachable },
    'Deposit simulation',
    () => simulation,
  )

  const minSharesOut = applySlippage(checks.expectedShares, slippageBps)
  const needsApproval = checks.allowance < amount
  const needsRegistration = !checks.registered
  const transaction = buildDepositTransaction(ctx, amount, wallet, minSharesOut)
  const steps = [
    ...(needsRegistration ? [initialize] : []),
    ...(needsApproval ? [approve] : []),
    transaction,
  ]
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
    ...(needsApproval ? { approveTransaction: approve } : {}),
    needsRegistration,
    ...(needsRegistration ? { initializeTransaction: initialize } : {}),
    simulated: false,
    blockNumber: checks.blockNumber,
    transaction,
    steps,
    calls: walletCallsOf(ctx, wallet, steps),
    warnings: [
      ...depositWarnings(checks, amount),
      ...slippageWarnings(slippageBps, 'shares minted'),
    ],
  }
  const shares = await simulatedDeposit(ctx, plan, checks, simulated)
  return shares === undefined ? plan : { ...plan, simulated: true, simulatedShares: shares }
}

/**
 * The shares the simulated deposit minted; a revert throws. Without `eth_simulateV1`, the deposit is
 * simulated alone when nothing comes before it (today's fallback, a second round trip), else not at all.
 */
async function simulatedDeposit(
  ctx: VaultContext,
  plan: DepositPlan,
  checks: DepositChecks,
  simulation: StepsSimulation,
): Promise<bigint | undefined> {
  const decode = { ...ctx, morphoReachable: checks.morphoReachable }
  if (!simulation.supported) {
    const alone = plan.steps.length === 1
    plan.warnings.push({
      level: 'warning',
      code: 'SIMULATION_UNSUPPORTED',
      message: alone
        ? 'The RPC does not offer eth_simulateV1, so the deposit was simulated on its own in a second request.'
        : 'The RPC does not offer eth_simulateV1, so the deposit could not be simulated after the earlier steps; every precondition was checked instead.',
    })
    if (!alone) return undefined
    const { result } = await guard(decode, 'Deposit simulation', () =>
      simulateContract(ctx.publicClient, {
        account: plan.wallet,
        address: ctx.addresses.router,
        abi: routerAbi,
        functionName: 'deposit',
        args: [plan.amount, plan.wallet, plan.minSharesOut],
      }),
    )
    return result
  }
  const [initialize, approve, deposit] = simulation.steps as [StepOutcome, StepOutcome, StepOutcome]
  // initialize() reverts WalletAlreadyAuthorised for a registered wallet: expected, not a failure.
  const failed =
    (plan.needsRegistration && initialize.status === 'reverted' && ['initialize', initialize]) ||
    (approve.status === 'reverted' && ['approve', approve]) ||
    (deposit.status === 'reverted' && ['deposit', deposit]) ||
    undefined
  const action = 'Deposit simulation'
  if (failed) {
    const [functionName, outcome] = failed as [string, StepOutcome]
    const contract = functionName === 'approve' ? 'usdc' : 'router'
    throw stepRevertError(decode, { contract, functionName, action }, outcome.data)
  }
  const shares = decodeFunctionResult({
    abi: routerAbi,
    functionName: 'deposit',
    data: deposit.data,
  })
  if (shares < plan.minSharesOut) {
    throw belowMinimumError(decode, { functionName: 'deposit', action }, shares, plan.minSharesOut)
  }
  return shares
}

/** Less than this share of the TVL cap left after a deposit is `TVL_CAP_CLOSE` (in bps). */
const tvlCloseBps = 500n

/** The warnings the deposit's reads give: a stale oracle the deposit refreshes, the TVL cap, dust left. */
function depositWarnings(checks: DepositChecks, amount: bigint): PlanWarning[] {
  const warnings: PlanWarning[] = []
  if (checks.oracleFresh === false) {
    warnings.push({
      level: 'warning',
      code: 'ORACLE_STALE',
      message:
        'The yield oracle is stale; the deposit records a new observation first (it costs more gas). If recording fails before the deposit is sent, the deposit reverts StaleOracle.',
    })
  }
  if (checks.tvlCap !== null && checks.totalAssets !== undefined) {
    const left = checks.tvlCap - checks.totalAssets - amount
    if (left * 10_000n < checks.tvlCap * tvlCloseBps) {
      warnings.push({
        level: 'warning',
        code: 'TVL_CAP_CLOSE',
        message: `After this deposit only ${formatUsdc(left)} USDC of the ${formatUsdc(checks.tvlCap)} USDC TVL cap is left: a deposit by someone else that lands first can make this one revert (TVLCapExceeded).`,
      })
    }
  }
  const remaining = checks.usdcBalance - amount
  if (remaining > 0n && remaining < checks.minDeposit) {
    warnings.push({
      level: 'info',
      code: 'BALANCE_BELOW_MINIMUM_AFTER',
      message: `The wallet keeps ${formatUsdc(remaining)} USDC after this deposit, below the vault's minimum deposit of ${formatUsdc(checks.minDeposit)} USDC: it cannot be deposited on its own later. Deposit ${formatUsdc(checks.usdcBalance)} USDC to take it all.`,
    })
  }
  return warnings
}
