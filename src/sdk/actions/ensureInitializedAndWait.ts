import { type Address, type Hash, isAddressEqual } from 'viem'
import type { VaultContext } from '../context.js'
import { VaultPreconditionError } from '../errors/classes.js'
import { validateWallet } from '../internal/validate.js'
import { runExclusive } from '../internal/writeQueue.js'
import type { WaitOptions } from '../transactions.js'
import { registerAndWaitIn } from './initialize.js'
import { isRegistered } from './isRegistered.js'

export type EnsureInitializedParameters = {
  /** The wallet that must be registered. Default: the wallet client's account. */
  wallet?: Address | undefined
} & WaitOptions

/** The outcome of `ensureInitializedAndWait`. */
export type EnsureInitializedResult = {
  wallet: Address
  /** `true` when nothing had to be done. */
  alreadyRegistered: boolean
  /** The registration transaction, when one was sent. */
  txHash: Hash | null
}

/**
 * Makes sure a wallet is registered with the router, idempotently: await it once for the merchant
 * wallet before use. Registered → returns without a transaction. Not registered and the wallet client's
 * account is that wallet → sends `initialize()` and waits for the receipt. Otherwise throws
 * `WALLET_NOT_REGISTERED` (only the wallet itself can register).
 *
 * @param ctx - The vault client.
 * @param params - `wallet` (default: the wallet client's account), `confirmations`, `timeout`.
 * @returns `{ wallet, alreadyRegistered, txHash }`.
 * @example
 * await vault.ensureInitializedAndWait({ wallet: merchant.address })
 */
export async function ensureInitializedAndWait(
  ctx: VaultContext,
  params: EnsureInitializedParameters = {},
): Promise<EnsureInitializedResult> {
  const accountAddress = accountAddressOf(ctx)
  const walletInput = params.wallet ?? accountAddress
  if (walletInput === undefined) {
    throw new VaultPreconditionError(
      'No wallet given and the vault client has no wallet client account: pass `wallet`.',
      { code: 'WALLET_NOT_REGISTERED' },
    )
  }
  const wallet = validateWallet(walletInput)
  if (accountAddress && isAddressEqual(accountAddress, wallet)) {
    // Checked and sent in one write slot: two concurrent calls send one initialize().
    return runExclusive(ctx, accountAddress, async (slot) => {
      if (await isRegistered(ctx, { wallet })) return registered(wallet)
      const { txHash } = await registerAndWaitIn(slot, ctx, params)
      return { wallet, alreadyRegistered: false, txHash }
    })
  }
  if (await isRegistered(ctx, { wallet })) return registered(wallet)
  throw new VaultPreconditionError(
    accountAddress
      ? `Wallet ${wallet} is not registered with the vault router, and the wallet client's account (${accountAddress}) cannot register it: a wallet registers itself. Send initialize() from ${wallet} (see planInitialize).`
      : `Wallet ${wallet} is not registered with the vault router, and there is no wallet client to register it. Send initialize() from ${wallet} (see planInitialize).`,
    {
      code: 'WALLET_NOT_REGISTERED',
      details: { wallet, ...(accountAddress ? { account: accountAddress } : {}) },
    },
  )
}

function registered(wallet: Address): EnsureInitializedResult {
  return { wallet, alreadyRegistered: true, txHash: null }
}

function accountAddressOf(ctx: VaultContext): Address | undefined {
  const account = ctx.walletClient?.account
  return account?.address
}
