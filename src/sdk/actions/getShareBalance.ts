import type { Address } from 'viem'
import { readContract } from 'viem/actions'
import { shareTokenAbi } from '../abis/index.js'
import type { VaultContext } from '../context.js'
import { guard } from '../internal/read.js'
import { validateWallet } from '../internal/validate.js'

/**
 * A wallet's share balance.
 *
 * @param ctx - The vault client.
 * @param params - `wallet`.
 * @returns Shares (base units).
 * @example
 * await vault.getShareBalance({ wallet })
 */
export function getShareBalance(ctx: VaultContext, params: { wallet: Address }): Promise<bigint> {
  const wallet = validateWallet(params.wallet)
  return guard(ctx, 'Share balance read', () =>
    readContract(ctx.publicClient, {
      address: ctx.addresses.shareToken,
      abi: shareTokenAbi,
      functionName: 'balanceOf',
      args: [wallet],
    }),
  )
}
