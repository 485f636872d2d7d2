import type { Address } from 'viem'
import { readContract } from 'viem/actions'
import { routerAbi } from '../abis/index.js'
import type { VaultContext } from '../context.js'
import { guard } from '../internal/read.js'
import { validateWallet } from '../internal/validate.js'

/**
 * Whether the router has registered a wallet (`authorizedWallets`).
 *
 * @param ctx - The vault client.
 * @param params - `wallet`.
 * @returns `true` when registered.
 * @example
 * await vault.isRegistered({ wallet })
 */
export function isRegistered(ctx: VaultContext, params: { wallet: Address }): Promise<boolean> {
  const wallet = validateWallet(params.wallet)
  return guard(ctx, 'Registration read', () =>
    readContract(ctx.publicClient, {
      address: ctx.addresses.router,
      abi: routerAbi,
      functionName: 'authorizedWallets',
      args: [wallet],
    }),
  )
}
