import type { Address } from 'viem'
import { multicall } from 'viem/actions'
import { routerAbi } from '../abis/index.js'
import type { VaultChainName } from '../chains.js'
import type { VaultContext } from '../context.js'
import { VaultValidationError } from '../errors/classes.js'
import { guard, multicallOptions, resultValue } from '../internal/read.js'
import { validateWallet } from '../internal/validate.js'
import { buildSetOperatorTransaction, type SetOperatorTransaction } from '../transactions.js'

export type PlanSetOperatorParameters = {
  /** The wallet that will send the transaction: the router's registered wallet. */
  wallet: Address
  /** The account to allow (or revoke), such as a sweeping key that holds no money. */
  operator: Address
  /** `true` (default) to allow, `false` to revoke. */
  approved?: boolean | undefined
}

/** An unsigned `router.setOperator(operator, approved)` for a wallet. */
export type SetOperatorPlan = {
  chain: VaultChainName
  chainId: number
  wallet: Address
  operator: Address
  approved: boolean
  /** Whether the wallet is registered: the router refuses `setOperator` from one that is not. */
  registered: boolean
  /** Whether the operator already has the `approved` state: sending it changes nothing. */
  alreadySet: boolean
  transaction: SetOperatorTransaction
}

/**
 * Plans `router.setOperator(operator, approved)` for a wallet, without signing (one RPC round trip,
 * to report whether the wallet is registered and the operator already set). An operator may deposit
 * the wallet's USDC under the wallet's allowance to the router, and withdraw; the USDC only ever
 * moves between the wallet and the vault, so an operator key that only pays gas can sweep.
 *
 * @param ctx - The vault client (no wallet client needed).
 * @param params - `wallet`, `operator`, `approved` (default `true`).
 * @returns The plan with its unsigned transaction.
 * @throws {VaultValidationError} `INVALID_ADDRESS`, or `INVALID_ARGUMENT` when the operator is the
 *   wallet itself.
 * @example
 * const plan = await vault.planSetOperator({ wallet, operator: sweeper.address })
 * if (!plan.alreadySet) {
 *   // send plan.transaction from the wallet (after registering it: plan.registered)
 * }
 */
export async function planSetOperator(
  ctx: VaultContext,
  params: PlanSetOperatorParameters,
): Promise<SetOperatorPlan> {
  const wallet = validateWallet(params.wallet)
  const operator = validateWallet(params.operator, 'operator')
  const approved = params.approved ?? true
  if (typeof approved !== 'boolean') {
    throw new VaultValidationError('approved must be true or false.', {
      code: 'INVALID_ARGUMENT',
      details: { field: 'approved' },
    })
  }
  if (operator === wallet) {
    throw new VaultValidationError('operator must be another account than the wallet.', {
      code: 'INVALID_ARGUMENT',
      details: { field: 'operator' },
    })
  }
  const { router } = ctx.addresses
  const action = 'Operator plan'
  const [registered, isOperator] = await guard(ctx, action, () =>
    multicall(ctx.publicClient, {
      ...multicallOptions,
      contracts: [
        { address: router, abi: routerAbi, functionName: 'authorizedWallets', args: [wallet] },
        { address: router, abi: routerAbi, functionName: 'isOperator', args: [wallet, operator] },
      ],
    }),
  )
  return {
    chain: ctx.chain,
    chainId: ctx.chainId,
    wallet,
    operator,
    approved,
    registered: resultValue(ctx, registered, action),
    alreadySet: resultValue(ctx, isOperator, action) === approved,
    transaction: buildSetOperatorTransaction(ctx, operator, approved),
  }
}
