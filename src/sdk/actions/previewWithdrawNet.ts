import type { Address } from 'viem'
import { readContract } from 'viem/actions'
import { routerAbi } from '../abis/index.js'
import type { VaultContext } from '../context.js'
import { guard } from '../internal/read.js'
import { validateAmount, validateWallet } from '../internal/validate.js'

/**
 * Shares to burn so the wallet receives at least `amount` USDC after the fee (`router.previewWithdrawNet`).
 *
 * @param ctx - The vault client.
 * @param params - `amount` (USDC base units) and `wallet`.
 * @returns Shares (base units).
 * @throws {VaultContractError} `NO_POSITION`, `UNSERVICEABLE_AMOUNT`, … as the router reverts.
 * @example
 * await vault.previewWithdrawNet({ amount: 5_000_000n, wallet })
 */
export function previewWithdrawNet(
  ctx: VaultContext,
  params: { amount: bigint; wallet: Address },
): Promise<bigint> {
  const amount = validateAmount(params.amount)
  const wallet = validateWallet(params.wallet)
  return guard(ctx, 'previewWithdrawNet', () =>
    readContract(ctx.publicClient, {
      address: ctx.addresses.router,
      abi: routerAbi,
      functionName: 'previewWithdrawNet',
      args: [amount, wallet],
    }),
  )
}
