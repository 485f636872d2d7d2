import { type Address, isAddressEqual } from 'viem'
import { type VaultClient, VaultPreconditionError } from '../index.js'

/**
 * Refuses a sweep that could never deposit: the vault client's key must be `payTo`'s own, or its
 * operator with the router approved to take `payTo`'s USDC. Otherwise every sweep would fail with
 * `INSUFFICIENT_ALLOWANCE` while the revenue piles up, so the paywall does not start. Both reads go
 * through the SDK (`planSetOperator`, `getUsdcAllowance`), so their errors are converted and redacted
 * as every SDK error is.
 *
 * @param vault - The vault client.
 * @param payTo - The merchant wallet.
 * @param sender - The vault client's key, which sends the sweeps (none: nothing to check).
 * @throws {VaultPreconditionError} `NOT_AUTHORISED`, naming what `payTo` has not done and how to fix it.
 * @example
 * await checkSweepOperator(vault, payTo, vault.walletClient?.account?.address)
 */
export async function checkSweepOperator(
  vault: VaultClient,
  payTo: Address,
  sender: Address | undefined,
): Promise<void> {
  if (sender === undefined || isAddressEqual(sender, payTo)) return
  const [plan, allowance] = await Promise.all([
    vault.planSetOperator({ wallet: payTo, operator: sender }),
    vault.getUsdcAllowance({ wallet: payTo }),
  ])
  const missing = [
    ...(plan.alreadySet ? [] : [`made ${sender} its operator`]),
    ...(allowance > 0n ? [] : [`approved the vault router ${vault.addresses.router}`]),
  ]
  if (missing.length === 0) return
  throw new VaultPreconditionError(
    `The sweep cannot deposit for payTo ${payTo}: the vault client's key is ${sender}, not payTo's, and payTo has not ${missing.join(' nor ')}. Build the vault client with payTo's key, or have payTo set ${sender} up as its operator (\`x402-vault sweep --setup --wallet ${payTo} --operator ${sender}\` prints the steps), or pass \`sweep: false\` and sweep elsewhere.`,
    { code: 'NOT_AUTHORISED', details: { wallet: payTo, account: sender } },
  )
}
