import type { Address } from 'viem'
import { z } from 'zod'
import {
  formatUsdc,
  planWithdraw,
  previewRedeem,
  previewWithdrawNet,
  type VaultContext,
  VaultContractError,
  type WithdrawPlan,
} from '../../index.js'
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
  optionalInput,
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
    amountUsdc: optionalInput(
      usdcInput(),
      'USDC the wallet receives at least, after the fee: a decimal string with at most 6 decimals, such as "12.5". This or shares; the other null.',
    ),
    shares: sharesInput(
      'Exact vault shares to burn, in base units as a whole-number string (6 decimals: "2500000" is 2.5 shares). This or amountUsdc; the other null.',
    ),
    slippageBps: slippageInput(
      'By shares: tolerance on the USDC out in basis points, an integer from 0 to 1000 (10 = 0.1 %); null for the default of 10. By amountUsdc the full amount is guaranteed.',
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
        'The slippage applied to minUsdcOut (by shares); null by amountUsdc, where minUsdcOut is the full amount asked for.',
      ),
    simulatedUsdcOut: usdcOutput('USDC the simulation paid out.'),
    blockNumber: integerOutput('The block the preview was read at.'),
  }),
  annotations: readOnlyAnnotations,
  async handler(input, context) {
    const wallet = parseWalletInput(input.wallet)
    // null is "not given", as a client in strict mode sends what it leaves out.
    const amountUsdc = input.amountUsdc ?? undefined
    const sharesText = input.shares ?? undefined
    if ((amountUsdc === undefined) === (sharesText === undefined)) {
      throw new McpToolError(
        amountUsdc === undefined
          ? 'Give amountUsdc (USDC to receive) or shares (shares to burn).'
          : 'Give either amountUsdc (USDC to receive) or shares (shares to burn), not both: leave the other out or null.',
        { code: 'INVALID_ARGUMENT' },
      )
    }
    const target =
      amountUsdc === undefined
        ? { shares: parseSharesInput(sharesText ?? '') }
        : { amount: parseUsdcInput(amountUsdc, context.config) }
    const vault = await context.vault()
    const slippageBps = input.slippageBps ?? undefined
    let plan: WithdrawPlan
    try {
      plan = await planWithdraw(vault, { wallet, ...target, slippageBps })
    } catch (error) {
      // Only a revert can be dust's doing; RPC trouble is not worth another read.
      if (target.shares === undefined || !(error instanceof VaultContractError)) throw error
      throw (await dustRefusal(vault, wallet, target.shares)) ?? error
    }
    // Shares that pay nothing would be burned for a minimum of 0 USDC: never a plan to hand over.
    if (plan.mode === 'shares' && plan.expectedUsdcOut === 0n) {
      throw (
        (await dustRefusal(vault, wallet, plan.shares)) ??
        new McpToolError(
          `Burning ${describeShares(plan.shares)} pays 0 USDC: its value rounds down to zero base units of USDC. Withdraw more shares, or withdraw by amountUsdc.`,
          { code: 'ZERO_AMOUNT', details: { shares: plan.shares } },
        )
      )
    }
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

/**
 * A withdrawal by shares worth nothing: the router pays whole base units, so a few share units
 * round down to 0 USDC. The withdrawal then either reverts (with a message about liquidity that the
 * venues have plenty of) or would burn the shares for a minimum of 0 USDC. Reads, on this refusal's
 * path only, what the shares pay and the fewest shares that pay 1 base unit, and says so.
 *
 * @returns The refusal, or `undefined` when the shares do pay something (the error stands).
 */
async function dustRefusal(
  vault: VaultContext,
  wallet: Address,
  shares: bigint,
): Promise<McpToolError | undefined> {
  try {
    if ((await previewRedeem(vault, { shares, wallet })) > 0n) return undefined
    // The router's quote for the smallest payout aims a base unit above it, so it can be a share
    // or two more than needed: the share counts below it are tried, in one batch.
    const quoted = await previewWithdrawNet(vault, { amount: 1n, wallet })
    const below = Array.from({ length: Number(quoted < 64n ? quoted : 64n) }, (_, index) =>
      BigInt(index + 1),
    )
    const paid = await Promise.all(
      below.map((count) => previewRedeem(vault, { shares: count, wallet })),
    )
    const fewest = below.find((_, index) => (paid[index] ?? 0n) > 0n) ?? quoted
    return new McpToolError(
      `Burning ${describeShares(shares)} pays 0 USDC: its value rounds down to zero base units of USDC. The fewest shares this wallet can withdraw for something are ${describeShares(fewest)}, which pay at least ${formatUsdc(1n)} USDC; or withdraw by amountUsdc (at least "${formatUsdc(1n)}").`,
      { code: 'ZERO_AMOUNT', details: { shares, fewestShares: fewest } },
    )
  } catch {
    return undefined
  }
}
