import { z } from 'zod'
import { formatUsdc, isUnavailable, planApproveUsdc } from '../../index.js'
import { parseUsdcInput, parseWalletInput } from '../inputs.js'
import { planEnvelope, usdcAmount, usdcField } from '../json.js'
import {
  addressOutput,
  field,
  integerOutput,
  planOutputShape,
  readOnlyAnnotations,
  toolInput,
  usdcInput,
  usdcOutput,
  walletInput,
} from '../schemas.js'
import { defineTool } from '../tool.js'

/** `vault_plan_approve_usdc`: an unsigned USDC approval with the vault router as spender. */
export const vaultPlanApproveUsdc = defineTool({
  kind: 'plan',
  name: 'vault_plan_approve_usdc',
  title: 'Plan a USDC approval for the vault',
  description:
    'Plans, without signing or sending anything, the USDC approval that lets the x402-vault router on Base Sepolia pull USDC from a wallet for deposits: usdc.approve(router, amount). Returns the unsigned transaction for the wallet’s owner to review and send from their own wallet, with the current allowance and USDC balance. The amount is capped per plan by the server (VAULT_MCP_MAX_PLAN_USDC).',
  inputSchema: toolInput('vault_plan_approve_usdc', {
    wallet: walletInput('The wallet that will send the approval: 0x followed by 40 hex digits.'),
    amountUsdc: usdcInput(
      'The allowance for the vault router in USDC: a decimal string with at most 6 decimals, above 0 and within the per-plan cap, such as "25".',
    ),
  }),
  outputSchema: z.object({
    ...planOutputShape('usdc.approve(router, amount), to send from the wallet.'),
    wallet: addressOutput('The wallet that sends the approval.'),
    spender: addressOutput('The vault router.'),
    amount: usdcOutput('The allowance the transaction sets (it replaces the current one).'),
    currentAllowance: field(usdcOutput('The router’s allowance now.')),
    usdcBalance: field(usdcOutput('The wallet’s USDC balance now.')),
    blockNumber: integerOutput('The block the allowance and balance were read at.'),
  }),
  annotations: readOnlyAnnotations,
  async handler(input, context) {
    const wallet = parseWalletInput(input.wallet)
    const amount = parseUsdcInput(input.amountUsdc, context.config)
    const vault = await context.vault()
    const plan = await planApproveUsdc(vault, { wallet, amount })
    const shown = formatUsdc(amount)
    const lowBalance =
      !isUnavailable(plan.usdcBalance) && plan.usdcBalance < amount
        ? ` The wallet holds only ${formatUsdc(plan.usdcBalance)} USDC, so a deposit of ${shown} USDC also needs more USDC first.`
        : ''
    return {
      ...planEnvelope(vault, plan),
      wallet: plan.wallet,
      spender: plan.spender,
      amount: usdcAmount(amount),
      currentAllowance: usdcField(plan.currentAllowance),
      usdcBalance: usdcField(plan.usdcBalance),
      blockNumber: plan.blockNumber.toString(),
      nextSteps: `Send this transaction from ${plan.wallet} to let the vault router (${plan.spender}) pull up to ${shown} USDC; then plan the deposit with vault_plan_deposit.${lowBalance}`,
    }
  },
})
