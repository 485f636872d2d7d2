import type { Address } from 'viem'
import { readContract } from 'viem/actions'
import { usdcAbi } from '../abis/index.js'
import type { VaultContext } from '../context.js'
import { guard } from '../internal/read.js'
import { validateWallet } from '../internal/validate.js'

/**
 * A wallet's USDC allowance to a spender (the router unless said otherwise).
 *
 * @param ctx - The vault client.
 * @param params - `wallet`, optional `spender`.
 * @returns USDC base units.
 * @example
 * await vault.getUsdcAllowance({ wallet })
 */
export function getUsdcAllowance(
  ctx: VaultContext,
  params: { wallet: Address; spender?: Address | undefined },
): Promise<bigint> {
  const wallet = validateWallet(params.wallet)
  const spender =
    params.spender === undefined ? ctx.addresses.router : validateWallet(params.spender, 'spender')
  return guard(ctx, 'USDC allowance read', () =>
    readContract(ctx.publicClient, {
      address: ctx.addresses.usdc,
      abi: usdcAbi,
      functionName: 'allowance',
      args: [wallet, spender],
    }),
  )
}
