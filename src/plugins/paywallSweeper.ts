import type { Address } from 'viem'
import type { Sweeper, VaultClient } from '../index.js'
import { checkSweepOperator } from './operatorCheck.js'
import type { CreatePaywallOptions } from './paywallOptions.js'
import type { PaywallSettlements } from './paywallSettlements.js'
import { ensureWalletRegistered } from './walletRegistration.js'

/**
 * Starts the paywall's in-process sweeper: checks that the vault client's key can deposit for `payTo`,
 * registers `payTo` with the router unless it is, and attaches the sweeper to the settlements the chain
 * shows (not to the facilitator's every claim). Its `idle()` also waits for the settlement checks in
 * flight, whose sales it has yet to hear of.
 *
 * @param vault - The vault client, whose key sends the registration and the sweeps.
 * @param payTo - The merchant wallet.
 * @param sweep - `createPaywall`'s sweep options.
 * @param settlements - The paywall's settlement checks, which the sweeper hears from.
 * @returns The sweeper.
 * @throws {VaultPreconditionError} `NOT_AUTHORISED` for a key that cannot deposit for `payTo`;
 *   {VaultTransactionError} `INSUFFICIENT_FUNDS_FOR_GAS`; the SDK's errors.
 * @example
 * const sweeper = await startPaywallSweeper(vault, payTo, { minIdleThreshold: '10' }, settlements)
 */
export async function startPaywallSweeper(
  vault: VaultClient,
  payTo: Address,
  sweep: Exclude<CreatePaywallOptions['sweep'], false>,
  settlements: PaywallSettlements,
): Promise<Sweeper> {
  // The address that sends the sweeps' transactions and pays their gas.
  const sender: Address | undefined = vault.walletClient?.account?.address
  await checkSweepOperator(vault, payTo, sender)
  await ensureWalletRegistered(vault, payTo, sender)
  const attached = vault.attachToResourceServer(settlements.sweeperTarget, {
    ...sweep,
    wallet: payTo,
  })
  return {
    ...attached,
    idle: async () => {
      await settlements.idle()
      await attached.idle()
    },
  }
}
