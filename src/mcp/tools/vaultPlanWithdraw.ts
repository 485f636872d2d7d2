import { z } from 'zod'
import { formatUsdc, planWithdraw } from '../../index.js'
import { describeShares } from '../../sdk/shared.js'
import { McpToolError } from '../errors.js'
import {
  assertWithinPlanCap,
  parseSharesInput,
  parseUsdcInput,
  parseWalletInput,
} from '../inputs.js'
import { planEnvelope, usdcAmount } from '../json.js'
import {
  addressOutput,
  integerOutput,
  planOutputShape,
  readOnlyAnnotations,
  sharesInput,
  slippageInput,
  toolInput,
  usdcInput,
  usdcOutput,
  walletInput,
} from '../schemas.js'
import { defineTool } from '../tool.js'

/** `vault_plan_withdraw`: an unsigned withdrawal by USDC amount or by exact shares. */
export const vaultPlanWithdraw = defineTool({
  kind: 'plan',
  name: 'vault_plan_withdraw',
  title: 'Plan a vault withdrawal',
  description:
    'Plans, without signing or sending anything, a withdrawal from the x402-vault yield vault on Base Sepolia to the wallet: router.withdraw(shares, wallet, minUsdcOut). Give exactly one of amountUsdc (the wallet then receives at least that much USDC after the fee; use vault_get_position’s withdrawableUsdc to take everything) or shares (exactly that many shares are burned). The withdrawal is simulated. The USDC it moves is capped per plan by the server (VAULT_MCP_MAX_PLAN_USDC).',
  inputSchema: toolInput('vault_plan_withdraw', {
    wallet: walletInput(
      'The wallet that holds the shares, sends the transaction and receives the USDC: 0x followed by 40 hex digits.',
    ),
    amountUsdc: usdcInput(
      'USDC the wallet must receive at least, after the fee, as a decimal string with at most 6 decimals, such as "12.5". Give this or shares, not both.',
    ).optional(),
    shares: sharesInput(
      'Exact number of vault shares to burn, in base units as a whole-number string (the share token has 6 decimals: "2500000" is 2.5 shares). Give this or amountUsdc, not both.',
    ),
    slippageBps: slippageInput(
      'For a withdrawal by shares: tolerance on the USDC out, in basis points, an integer from 0 to 1000 (10 = 0.1 %). Default 10. A withdrawal by amountUsdc always guarantees the full amount.',
    ),
  }),
  outputSchema: z.object({
    ...planOutputShape('router.withdraw(shares, wallet, minUsdcOut), to send from the wallet.'),
    wallet: addressOutput('The withdrawing wallet.'),
    mode: z.enum(['amount', 'shares']).describe('Whether amountUsdc or shares was given.'),
    requestedUsdc: usdcOutput('The USDC asked for.')
      .nullable()
      .describe('The USDC asked for (by amountUsdc); null for a withdrawal by shares.'),
    shares: integerOutput('Shares the transaction burns (base units, 6 decimals).'),
    shareBalance: integerOutput('Shares the wallet holds now.'),
    expectedUsdcOut: usdcOutput('USDC the vault’s preview promises, after the fee.'),
    minUsdcOut: usdcOutput('The transaction reverts if the wallet would receive less.'),
    slippageBps: z
      .number()
      .int()
      .nullable()
      .describe(
        'The slippage applied to minUsdcOut, for a withdrawal by shares; null for a withdrawal by amountUsdc, where no slippage applies: minUsdcOut is the full amount asked for.',
      ),
    simulatedUsdcOut: usdcOutput('USDC the simulation paid out.'),
    blockNumber: integerOutput('The block the preview was read at.'),
  }),
  annotations: readOnlyAnnotations,
  async handler(input, context) {
    const wallet = parseWalletInput(input.wallet)
    if ((input.amountUsdc === undefined) === (input.shares === undefined)) {
      throw new McpToolError(
        input.amountUsdc === undefined
          ? 'Give amountUsdc (USDC to receive) or shares (shares to burn).'
          : 'Give either amountUsdc (USDC to receive) or shares (shares to burn), not both.',
        { code: 'INVALID_ARGUMENT' },
      )
    }
    const target =
      input.amountUsdc === undefined
        ? { shares: parseSharesInput(input.shares ?? '') }
        : { amount: parseUsdcInput(input.amountUsdc, context.config) }
    const vault = await context.vault()
    const plan = await planWithdraw(vault, { wallet, ...target, slippageBps: input.slippageBps })
    if (plan.mode === 'shares') {
      assertWithinPlanCap(
        plan.expectedUsdcOut,
        context.config,
        `Burning ${describeShares(plan.shares)} pays ${formatUsdc(plan.expectedUsdcOut)} USDC`,
      )
    }
    return {
      ...planEnvelope(vault, plan),
      wallet: plan.wallet,
      mode: plan.mode,
      requestedUsdc: plan.amount === undefined ? null : usdcAmount(plan.amount),
      shares: plan.shares.toString(),
      shareBalance: plan.shareBalance.toString(),
      expectedUsdcOut: usdcAmount(plan.expectedUsdcOut),
      minUsdcOut: usdcAmount(plan.minUsdcOut),
      slippageBps: plan.mode === 'shares' ? plan.slippageBps : null,
      simulatedUsdcOut: usdcAmount(plan.simulatedUsdcOut),
      blockNumber: plan.blockNumber.toString(),
      nextSteps: `Send this transaction from ${plan.wallet}. It burns ${describeShares(plan.shares)} of its ${describeShares(plan.shareBalance)} and pays at least ${formatUsdc(plan.minUsdcOut)} USDC to the wallet (the simulation paid ${formatUsdc(plan.simulatedUsdcOut)} USDC).`,
    }
  },
})
