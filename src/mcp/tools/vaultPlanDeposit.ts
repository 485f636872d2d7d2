import { z } from 'zod'
import {
  type DepositPlan,
  formatUsdc,
  getMinDeposit,
  planDeposit,
  VaultPreconditionError,
} from '../../index.js'
import { describeShares } from '../../sdk/shared.js'
import { McpToolError, withAdvice } from '../errors.js'
import { capBelowMinimumText, parseUsdcInput, parseWalletInput } from '../inputs.js'
import { planEnvelope, type TransactionJson, transactionJson, usdcAmount } from '../json.js'
import {
  addressOutput,
  integerOutput,
  planOutputShape,
  readOnlyAnnotations,
  slippageInput,
  toolInput,
  transactionOutput,
  usdcInput,
  usdcOutput,
  walletInput,
} from '../schemas.js'
import { defineTool, type VaultToolContext } from '../tool.js'

/** `vault_plan_deposit`: an unsigned deposit, with the registration and approval it needs first. */
export const vaultPlanDeposit = defineTool({
  kind: 'plan',
  name: 'vault_plan_deposit',
  title: 'Plan a vault deposit',
  description:
    'Plans, without signing or sending anything, a USDC deposit into the x402-vault yield vault on Base Sepolia: router.deposit(amount, wallet, minSharesOut). It checks the vault’s pause flag, minimum deposit, TVL cap and the wallet’s USDC balance; reports whether the wallet must first register with the router (needsRegistration, with the unsigned initialize()) and approve the router for the USDC (needsApproval, with the allowance and the shortfall); and lists in steps the unsigned transactions to send from the wallet, in order. It also gives every step as one EIP-5792 batch (calls) for a smart wallet, simulates the whole sequence and lists warnings. The amount is capped per plan by the server (VAULT_MCP_MAX_PLAN_USDC).',
  inputSchema: toolInput('vault_plan_deposit', {
    wallet: walletInput(
      'The wallet that pays the USDC, receives the shares and sends the transactions: 0x followed by 40 hex digits.',
    ),
    amountUsdc: usdcInput(
      'USDC to deposit: a decimal string with at most 6 decimals, from the vault’s minimum deposit up to the per-plan cap, such as "25".',
    ),
    slippageBps: slippageInput(
      'Tolerance on the shares minted, in basis points: an integer from 0 to 1000 (10 = 0.1 %); null for the default of 10.',
    ),
  }),
  outputSchema: z.object({
    ...planOutputShape('router.deposit(amount, wallet, minSharesOut), to send from the wallet.'),
    wallet: addressOutput('The depositing wallet.'),
    amount: usdcOutput('USDC to deposit.'),
    slippageBps: z.number().int().describe('The slippage tolerance applied to minSharesOut.'),
    expectedShares: integerOutput('Shares the deposit mints now (base units, 6 decimals).'),
    minSharesOut: integerOutput('The deposit reverts if it would mint fewer shares than this.'),
    minDeposit: usdcOutput('The vault’s minimum deposit.'),
    usdcBalance: usdcOutput('The wallet’s USDC balance.'),
    needsApproval: z
      .boolean()
      .describe('The router’s allowance is below the amount: approve first.'),
    allowance: usdcOutput('The router’s current allowance.'),
    shortfall: usdcOutput('How much allowance is missing (0 when none).'),
    needsRegistration: z
      .boolean()
      .describe('The wallet is not registered with the router: send initializeTransaction first.'),
    initializeTransaction: transactionOutput(
      'router.initialize(), to send from the wallet before anything else.',
    )
      .nullable()
      .describe('router.initialize() when needsRegistration, else null.'),
    steps: z
      .array(
        z.object({
          step: z.number().int().describe('1, 2, 3: send in this order.'),
          description: z.string().describe('What the transaction does.'),
          transaction: transactionOutput('The unsigned transaction.'),
        }),
      )
      .describe('Every transaction the wallet must send, in order: initialize, approve, deposit.'),
    simulated: z
      .boolean()
      .describe(
        'The deposit was simulated: after the earlier steps in one batch (eth_simulateV1), or alone when the RPC lacks that method and nothing comes before it (see warnings).',
      ),
    simulatedShares: integerOutput('Shares the simulation minted.')
      .nullable()
      .describe('Shares the simulation minted; null when not simulated.'),
    blockNumber: integerOutput('The block the checks were read at.'),
  }),
  annotations: readOnlyAnnotations,
  async handler(input, context) {
    const wallet = parseWalletInput(input.wallet)
    let amount: bigint
    try {
      amount = parseUsdcInput(input.amountUsdc, context.config)
    } catch (error) {
      throw await noDepositUnderCap(error, context)
    }
    const vault = await context.vault()
    let plan: DepositPlan
    try {
      plan = await planDeposit(vault, {
        wallet,
        amount,
        slippageBps: input.slippageBps ?? undefined,
      })
    } catch (error) {
      if (error instanceof VaultPreconditionError) {
        throw withWhatElseIsNeeded(error, amount, context.config.maxPlanUsdc)
      }
      throw error
    }
    const steps = depositSteps(plan)
    return {
      ...planEnvelope(vault, plan),
      wallet: plan.wallet,
      amount: usdcAmount(plan.amount),
      slippageBps: plan.slippageBps,
      expectedShares: plan.expectedShares.toString(),
      minSharesOut: plan.minSharesOut.toString(),
      minDeposit: usdcAmount(plan.minDeposit),
      usdcBalance: usdcAmount(plan.usdcBalance),
      needsApproval: plan.needsApproval,
      allowance: usdcAmount(plan.allowance),
      shortfall: usdcAmount(plan.shortfall),
      needsRegistration: plan.needsRegistration,
      initializeTransaction: plan.initializeTransaction
        ? transactionJson(plan.initializeTransaction)
        : null,
      steps,
      simulated: plan.simulated,
      simulatedShares: plan.simulatedShares === undefined ? null : plan.simulatedShares.toString(),
      blockNumber: plan.blockNumber.toString(),
      nextSteps: depositNextSteps(plan, steps.length),
    }
  },
})

function depositSteps(
  plan: DepositPlan,
): { step: number; description: string; transaction: TransactionJson }[] {
  const amount = formatUsdc(plan.amount)
  const steps: { description: string; transaction: TransactionJson }[] = []
  if (plan.initializeTransaction) {
    steps.push({
      description: `Register ${plan.wallet} with the vault router (router.initialize()); the router only takes deposits from registered wallets.`,
      transaction: transactionJson(plan.initializeTransaction),
    })
  }
  if (plan.approveTransaction) {
    steps.push({
      description: `Approve the vault router to pull ${amount} USDC from the wallet (usdc.approve); its allowance is ${formatUsdc(plan.allowance)} USDC now.`,
      transaction: transactionJson(plan.approveTransaction),
    })
  }
  steps.push({
    description: `Deposit ${amount} USDC into the vault (router.deposit), accepting no fewer than ${describeShares(plan.minSharesOut)}.`,
    transaction: transactionJson(plan.transaction),
  })
  return steps.map((step, index) => ({ step: index + 1, ...step }))
}

function depositNextSteps(plan: DepositPlan, count: number): string {
  if (count === 1) {
    return `Send the deposit transaction from ${plan.wallet}. Its simulation minted ${describeShares(plan.simulatedShares ?? 0n)}; it reverts below ${describeShares(plan.minSharesOut)}.`
  }
  const missing = [
    plan.needsRegistration ? 'register the wallet' : undefined,
    plan.needsApproval ? `approve ${formatUsdc(plan.amount)} USDC for the router` : undefined,
  ].filter(Boolean)
  const simulated = plan.simulated
    ? `The simulation of all ${count} steps together minted ${formatUsdc(plan.simulatedShares ?? 0n)} shares.`
    : 'The steps could not be simulated together (see warnings): if the deposit fails after the earlier steps, plan it again with vault_plan_deposit.'
  return `Before the deposit the wallet must ${missing.join(' and ')}. A smart wallet sends calls in one wallet_sendCalls request (all or nothing); a plain wallet sends the ${count} transactions in steps from ${plan.wallet}, in order, each once the previous one is confirmed. ${simulated}`
}

/**
 * A deposit blocked by the vault or the balance: adds what else the wallet will need once the
 * blocker is gone (registration, approval), so the user learns everything in one answer. The SDK's
 * blocker carries both, read in the plan's one round trip.
 */
function withWhatElseIsNeeded(
  blocker: VaultPreconditionError,
  amount: bigint,
  cap: bigint,
): McpToolError {
  const { registered, allowance, minDeposit } = blocker.details as {
    registered?: unknown
    allowance?: unknown
    minDeposit?: unknown
  }
  if (blocker.code === 'BELOW_MIN_DEPOSIT' && typeof minDeposit === 'bigint' && minDeposit > cap) {
    // "Plan at least the minimum" would only lead to PLAN_CAP_EXCEEDED: say what is really wrong.
    return new McpToolError(`${blocker.message} ${capBelowMinimumText(cap, minDeposit)}`, {
      code: blocker.code,
      category: blocker.category,
      details: blocker.details,
      cause: blocker,
    })
  }
  const missing: string[] = []
  if (registered === false) missing.push('register with the vault router (router.initialize())')
  if (typeof allowance === 'bigint' && allowance < amount) {
    missing.push(
      `approve the router for the deposit (its allowance is ${formatUsdc(allowance)} USDC)`,
    )
  }
  const alsoNeeded = missing.length
    ? ` After that the wallet will also need to ${missing.join(' and ')}; vault_plan_deposit lists those transactions once the deposit can be planned.`
    : ' The wallet is registered and its allowance covers the deposit.'
  return new McpToolError(`${withAdvice(blocker)}${alsoNeeded}`, {
    code: blocker.code,
    category: blocker.category,
    details: blocker.details,
    cause: blocker,
  })
}

/**
 * A deposit above the per-plan cap: when the cap is below the vault's minimum deposit, "plan at
 * most the cap" would only lead to `BELOW_MIN_DEPOSIT`, so the refusal says that no deposit can be
 * planned by this server and what its operator must change. Reads the minimum (the verification's
 * batch, or one more read on this refusal's path only); any other error is returned as it is.
 */
async function noDepositUnderCap(error: unknown, context: VaultToolContext): Promise<unknown> {
  if (!(error instanceof McpToolError) || error.code !== 'PLAN_CAP_EXCEEDED') return error
  const cap = context.config.maxPlanUsdc
  const minimum = await context
    .vault()
    .then((vault) => getMinDeposit(vault))
    .catch(() => undefined)
  if (minimum === undefined || minimum <= cap) return error
  return new McpToolError(capBelowMinimumText(cap, minimum), {
    code: 'PLAN_CAP_EXCEEDED',
    details: { ...error.details, minDeposit: minimum },
    cause: error,
  })
}
