import { readContract } from 'viem/actions'
import { routerAbi } from '../abis/index.js'
import type { VaultContext } from '../context.js'
import { guard } from '../internal/read.js'
import { validateAmount } from '../internal/validate.js'

/**
 * Shares a deposit of `amount` USDC would mint now (`router.previewDeposit`).
 *
 * @param ctx - The vault client.
 * @param params - `amount` in base units.
 * @returns Shares (base units).
 * @example
 * await vault.previewDeposit({ amount: 10_000_000n })
 */
export function previewDeposit(ctx: VaultContext, params: { amount: bigint }): Promise<bigint> {
  const amount = validateAmount(params.amount)
  return guard(ctx, 'previewDeposit', () =>
    readContract(ctx.publicClient, {
      address: ctx.addresses.router,
      abi: routerAbi,
      functionName: 'previewDeposit',
      args: [amount],
    }),
  )
}
