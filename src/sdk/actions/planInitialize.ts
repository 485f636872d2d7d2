import type { Address } from 'viem'
import type { VaultChainName } from '../chains.js'
import type { VaultContext } from '../context.js'
import { validateWallet } from '../internal/validate.js'
import { buildInitializeTransaction, type InitializeTransaction } from '../transactions.js'
import { isRegistered } from './isRegistered.js'

export type PlanInitializeParameters = {
  /** The wallet to register; it must send the transaction itself. */
  wallet: Address
}

/** An unsigned `router.initialize()` for a wallet. */
export type InitializePlan = {
  chain: VaultChainName
  chainId: number
  wallet: Address
  /** `true` when the wallet is already registered: sending the transaction would revert. */
  alreadyRegistered: boolean
  transaction: InitializeTransaction
}

/**
 * Plans the registration of a wallet (`router.initialize()`, sent by the wallet), without signing.
 * One RPC round trip, to report whether it is already registered.
 *
 * @param ctx - The vault client (no wallet client needed).
 * @param params - `wallet`.
 * @returns The plan with its unsigned transaction.
 * @example
 * const plan = await vault.planInitialize({ wallet })
 * if (!plan.alreadyRegistered) {
 *   // send plan.transaction from the wallet
 * }
 */
export async function planInitialize(
  ctx: VaultContext,
  params: PlanInitializeParameters,
): Promise<InitializePlan> {
  const wallet = validateWallet(params.wallet)
  const alreadyRegistered = await isRegistered(ctx, { wallet })
  return {
    chain: ctx.chain,
    chainId: ctx.chainId,
    wallet,
    alreadyRegistered,
    transaction: buildInitializeTransaction(ctx),
  }
}
