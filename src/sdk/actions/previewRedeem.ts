import type { Address } from 'viem'
import { readContract } from 'viem/actions'
import { routerAbi } from '../abis/index.js'
import type { VaultContext } from '../context.js'
import { guard } from '../internal/read.js'
import { validateAmount, validateWallet } from '../internal/validate.js'

/**
 * USDC the wallet would receive for burning `shares`, net of the fee (`router.previewRedeem`).
 *
 * @param ctx - The vault client.
 * @param params - `shares` (base units) and `wallet` (its cost basis sets the fee).
 * @returns USDC base units.
 * @example
 * await vault.previewRedeem({ shares: 5_000_000n, wallet })
 */
export function previewRedeem(
  ctx: VaultContext,
  params: { shares: bigint; wallet: Address },
): Promise<bigint> {
  const shares = validateAmount(params.shares, 'shares')
  const wallet = validateWallet(params.wallet)
  return guard(ctx, 'previewRedeem', () =>
    readContract(ctx.publicClient, {
      address: ctx.addresses.router,
      abi: routerAbi,
      functionName: 'previewRedeem',
      args: [shares, wallet],
    }),
  )
}
