import { type Address, maxUint256, toHex } from 'viem'
import {
  formatUsdc,
  isUnavailable,
  planApproveUsdc,
  planInitialize,
  planSetOperator,
  type VaultContext,
  type VaultTransaction,
} from '../index.js'
import { toJsonSafe } from '../sdk/shared.js'

/** One of the steps the merchant wallet signs itself before an operator key can sweep it. */
export type SetupStep = {
  action: 'register' | 'approve' | 'set-operator'
  description: string
  /** Already in place on chain: nothing to send. */
  done: boolean
  transaction: VaultTransaction
}

/** What an operator key needs from the wallet, read from the chain. */
export type OperatorSetup = {
  chain: VaultContext['chain']
  chainId: number
  wallet: Address
  operator: Address
  steps: SetupStep[]
  /** Every step is done: the operator key can sweep. */
  ready: boolean
}

/** An allowance at least this large counts as unlimited (some USDCs lower even a max allowance). */
const unlimitedFloor = maxUint256 / 2n

/**
 * Reads which one-time steps the wallet still has to sign for `operator` to sweep it, and plans each
 * as an unsigned transaction with the SDK's plan builders: register the wallet with the router,
 * approve the router for its USDC, make `operator` its operator.
 *
 * @param vault - A vault context (no key needed).
 * @param wallet - The merchant wallet.
 * @param operator - The sweeping key's address.
 * @param allowance - The router allowance to ask for: `'unlimited'`, or base units.
 * @returns The steps in order, each done or not.
 */
export async function readOperatorSetup(
  vault: VaultContext,
  wallet: Address,
  operator: Address,
  allowance: bigint | 'unlimited',
): Promise<OperatorSetup> {
  const amount = allowance === 'unlimited' ? maxUint256 : allowance
  const [registration, approval, operatorPlan] = await Promise.all([
    planInitialize(vault, { wallet }),
    planApproveUsdc(vault, { wallet, amount }),
    planSetOperator(vault, { wallet, operator }),
  ])
  const current = isUnavailable(approval.currentAllowance) ? 0n : approval.currentAllowance
  const steps: SetupStep[] = [
    {
      action: 'register',
      description: 'register the wallet with the vault router',
      done: registration.alreadyRegistered,
      transaction: registration.transaction,
    },
    {
      action: 'approve',
      description: `approve the router for ${allowance === 'unlimited' ? 'unlimited' : formatUsdc(allowance)} USDC`,
      done: current >= (allowance === 'unlimited' ? unlimitedFloor : allowance),
      transaction: approval.transaction,
    },
    {
      action: 'set-operator',
      description: `make ${operator} the wallet's operator (it deposits for the wallet; USDC only moves between the wallet and the vault)`,
      done: operatorPlan.alreadySet,
      transaction: operatorPlan.transaction,
    },
  ]
  return {
    chain: vault.chain,
    chainId: vault.chainId,
    wallet,
    operator,
    steps,
    ready: steps.every((step) => step.done),
  }
}

/**
 * The setup as JSON: the steps, and the pending ones as one EIP-5792 `wallet_sendCalls` batch.
 *
 * @param setup - From {@link readOperatorSetup}.
 * @returns A JSON-safe object (bigints as decimal strings).
 */
export function operatorSetupJson(setup: OperatorSetup) {
  const pending = setup.steps.filter((step) => !step.done)
  return {
    chain: setup.chain,
    chainId: setup.chainId,
    wallet: setup.wallet,
    operator: setup.operator,
    warning:
      'Unsigned transactions only: nothing here signs or sends. Review them and send them from the wallet, in order.',
    ready: setup.ready,
    steps: setup.steps.map((step, index) => ({
      step: index + 1,
      action: step.action,
      description: step.description,
      done: step.done,
      transaction: toJsonSafe(step.transaction),
    })),
    calls: {
      version: '2.0.0',
      chainId: toHex(setup.chainId),
      from: setup.wallet,
      atomicRequired: false,
      calls: pending.map(({ transaction }) => ({
        to: transaction.to,
        data: transaction.data,
        value: '0x0',
      })),
    },
  }
}

/**
 * The setup for a person: each step, done or with the transaction to send.
 *
 * @param setup - From {@link readOperatorSetup}.
 * @returns Lines of text, ending with a newline.
 */
export function operatorSetupText(setup: OperatorSetup): string {
  const lines = [
    `x402-vault sweep --setup: wallet ${setup.wallet} on ${setup.chain}, operator ${setup.operator}`,
    setup.ready
      ? 'Every step is done: the operator key can sweep the wallet.'
      : 'The wallet sends these itself, in order (unsigned: nothing here signs or sends):',
  ]
  setup.steps.forEach((step, index) => {
    lines.push(`  ${index + 1}. ${step.description}${step.done ? ': done' : ''}`)
    if (!step.done) {
      lines.push(
        `     to    ${step.transaction.to}`,
        `     data  ${step.transaction.data}`,
        '     value 0',
      )
    }
  })
  lines.push(
    'Then run the sweeper with the operator key only (it pays gas and holds no money):',
    `  SWEEPER_PRIVATE_KEY=0x… x402-vault sweep --watch --wallet ${setup.wallet}`,
  )
  return `${lines.join('\n')}\n`
}
