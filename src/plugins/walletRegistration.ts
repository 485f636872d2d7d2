import type { Address } from 'viem'
import { type VaultClient, VaultError, VaultTransactionError } from '../index.js'
import { sweepGasText } from '../sdk/shared.js'

/**
 * Registers the merchant wallet with the vault router unless it is (`ensureInitializedAndWait`).
 * Several instances starting at once may collide on it; the one that loses finds the wallet registered
 * on a second look.
 *
 * @param vault - The vault client, whose key sends the registration.
 * @param wallet - The merchant wallet (`payTo`).
 * @param sender - The vault client's key, named when it has no ETH for gas.
 * @throws {VaultTransactionError} `INSUFFICIENT_FUNDS_FOR_GAS`, saying where to send how much ETH; the
 *   SDK's errors otherwise.
 * @example
 * await ensureWalletRegistered(vault, payTo, vault.walletClient?.account?.address)
 */
export async function ensureWalletRegistered(
  vault: VaultClient,
  wallet: Address,
  sender: Address | undefined,
): Promise<void> {
  try {
    await vault.ensureInitializedAndWait({ wallet })
  } catch (error) {
    const collided =
      error instanceof VaultError &&
      (error.code === 'NONCE_CONFLICT' || error.code === 'WALLET_ALREADY_REGISTERED')
    if (error instanceof VaultError && error.code === 'INSUFFICIENT_FUNDS_FOR_GAS') {
      throw new VaultTransactionError(
        `Registering ${wallet} with the vault router failed: ${sender} has no ETH for gas. ${gasAdvice(vault, sender)}`,
        { code: 'INSUFFICIENT_FUNDS_FOR_GAS', details: { account: sender }, cause: error },
      )
    }
    if (!collided) throw error
    await vault.ensureInitializedAndWait({ wallet })
  }
}

/** Which address needs ETH, and roughly how much. */
function gasAdvice(vault: VaultClient, sender: Address | undefined): string {
  return `Send ETH on ${vault.chain} to ${sender}, the key that sends the registration and every sweep: a sweep uses about ${sweepGasText} gas (0.00001 ETH or less at Base's usual fees); 0.001 ETH lasts about a hundred sweeps.`
}
