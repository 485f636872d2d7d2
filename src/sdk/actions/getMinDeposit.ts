import { readContract } from 'viem/actions'
import { routerAbi } from '../abis/index.js'
import type { VaultContext } from '../context.js'
import { guard } from '../internal/read.js'

/**
 * The router's minimum deposit (`MIN_DEPOSIT`, 10 USDC on the public deployments).
 *
 * @param ctx - The vault client.
 * @returns USDC base units.
 * @example
 * await vault.getMinDeposit() // 10_000_000n
 */
export function getMinDeposit(ctx: VaultContext): Promise<bigint> {
  return guard(ctx, 'MIN_DEPOSIT read', () =>
    readContract(ctx.publicClient, {
      address: ctx.addresses.router,
      abi: routerAbi,
      functionName: 'MIN_DEPOSIT',
    }),
  )
}
