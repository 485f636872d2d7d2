import type { Address } from 'viem'
import { multicall } from 'viem/actions'
import { routerAbi, shareTokenAbi, usdcAbi } from '../abis/index.js'
import type { VaultChainName, VaultNetwork } from '../chains.js'
import type { VaultContext } from '../context.js'
import type { Field } from '../field.js'
import {
  blockNumberCall,
  blockOf,
  blockTimestampCall,
  fieldOf,
  guard,
  multicallOptions,
} from '../internal/read.js'
import { validateWallet } from '../internal/validate.js'

/** A wallet's position at one block. Amounts are base units (6 decimals). */
export type VaultPosition = {
  chain: VaultChainName
  chainId: number
  network: VaultNetwork
  wallet: Address
  blockNumber: bigint
  blockTimestamp: bigint
  /** Whether the router accepts deposits and withdrawals from this wallet. */
  registered: Field<boolean>
  /** USDC in the wallet (not in the vault). */
  liquidUsdc: Field<bigint>
  /** The wallet's USDC allowance to the router. */
  allowance: Field<bigint>
  /** Shares the wallet holds. */
  shares: Field<bigint>
  /** USDC deposited and not yet withdrawn (cost basis). */
  deposited: Field<bigint>
  /** What the shares are worth now, in USDC (before the fee on yield). */
  currentValue: Field<bigint>
  /** `currentValue − deposited`, floored at 0, before the 10 % fee on yield. */
  accruedYield: Field<bigint>
}

/**
 * Reads a wallet's position in one RPC round trip (one Multicall3 `aggregate3`, one block): liquid
 * USDC, router allowance, shares, cost basis, current value, accrued yield, registration.
 *
 * @param ctx - The vault client.
 * @param wallet - Any address (no wallet client needed).
 * @returns The position; a sub-read that reverts is `Unavailable` in its field.
 * @example
 * const position = await vault.getPosition('0x…')
 */
export async function getPosition(ctx: VaultContext, wallet: Address): Promise<VaultPosition> {
  const owner = validateWallet(wallet)
  const { router, usdc, shareToken } = ctx.addresses
  const action = 'Position read'
  const [bn, ts, registered, balance, allowance, shares, position] = await guard(ctx, action, () =>
    multicall(ctx.publicClient, {
      ...multicallOptions,
      contracts: [
        blockNumberCall,
        blockTimestampCall,
        { address: router, abi: routerAbi, functionName: 'authorizedWallets', args: [owner] },
        { address: usdc, abi: usdcAbi, functionName: 'balanceOf', args: [owner] },
        { address: usdc, abi: usdcAbi, functionName: 'allowance', args: [owner, router] },
        { address: shareToken, abi: shareTokenAbi, functionName: 'balanceOf', args: [owner] },
        { address: router, abi: routerAbi, functionName: 'getPosition', args: [owner] },
      ],
    }),
  )
  const { blockNumber, blockTimestamp } = blockOf(ctx, bn, ts, action)
  return {
    chain: ctx.chain,
    chainId: ctx.chainId,
    network: ctx.network,
    wallet: owner,
    blockNumber,
    blockTimestamp,
    registered: fieldOf(ctx, registered),
    liquidUsdc: fieldOf(ctx, balance),
    allowance: fieldOf(ctx, allowance),
    shares: fieldOf(ctx, shares),
    deposited: fieldOf(ctx, position, ([deposited]) => deposited),
    currentValue: fieldOf(ctx, position, ([, value]) => value),
    accruedYield: fieldOf(ctx, position, ([, , accrued]) => accrued),
  }
}
