import type { Address } from 'viem'
import { readContract } from 'viem/actions'
import { usdcAbi } from '../abis/index.js'
import type { VaultContext } from '../context.js'
import { guard } from '../internal/read.js'
import { validateWallet } from '../internal/validate.js'

/**
 * A wallet's USDC balance.
 *
 * @param ctx - The vault client.
 * @param params - `wallet`.
 * @returns USDC base units.
 * @example
 * await vault.getUsdcBalance({ wallet })
 */
export function getUsdcBalance(ctx: VaultContext, params: { wallet: Address }): Promise<bigint> {
  const wallet = validateWallet(params.wallet)
  return guard(ctx, 'USDC balance read', () =>
    readContract(ctx.publicClient, {
      address: ctx.addresses.usdc,
      abi: usdcAbi,
      functionName: 'balanceOf',
      args: [wallet],
    }),
  )
}
