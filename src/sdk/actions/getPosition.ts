import type { Address } from 'viem'
import { multicall } from 'viem/actions'
import { feeCollectorAbi, routerAbi, shareTokenAbi, usdcAbi } from '../abis/index.js'
import type { VaultChainName, VaultNetwork } from '../chains.js'
import type { VaultContext } from '../context.js'
import { type Field, isUnavailable } from '../field.js'
import {
  blockNumberCall,
  blockOf,
  blockTimestampCall,
  fieldOf,
  guard,
  multicallOptions,
  withdrawCapacityCall,
  withMorphoReachability,
} from '../internal/read.js'
import { feeOnYield } from '../internal/shareMath.js'
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
  /**
   * What withdrawing every share pays now, net of the fee (the router's `previewRedeem(shares)`).
   * Withdrawing this amount by USDC works.
   */
  withdrawableUsdc: Field<bigint>
}

/**
 * Reads a wallet's position in one RPC round trip (one Multicall3 `aggregate3`, one block): liquid
 * USDC, router allowance, shares, cost basis, current value, accrued yield, registration, and what a
 * full withdrawal pays now (`withdrawableUsdc`).
 *
 * `withdrawableUsdc` is the router's `previewRedeem(shares)`, computed from the same block: redeeming
 * every share returns the whole position value with the whole cost basis as principal, so it is
 * `currentValue − ceil(FEE_BPS × accruedYield / 10000)` (the fee is charged on yield only, rounded up
 * in the vault's favour), with `FEE_BPS` read in the same multicall. A second round trip to ask the router would need the share balance first.
 *
 * @param ctx - The vault client.
 * @param params - `wallet`: any address (no wallet client needed).
 * @returns The position; a sub-read that reverts is `Unavailable` in its field.
 * @example
 * const position = await vault.getPosition({ wallet: '0x…' })
 */
export async function getPosition(
  ctx: VaultContext,
  params: { wallet: Address },
): Promise<VaultPosition> {
  const owner = validateWallet(params.wallet)
  const { router, usdc, shareToken } = ctx.addresses
  const action = 'Position read'
  const [bn, ts, registered, balance, allowance, shares, position, feeBps, capacity] = await guard(
    ctx,
    action,
    () =>
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
          { address: ctx.addresses.feeCollector, abi: feeCollectorAbi, functionName: 'FEE_BPS' },
          withdrawCapacityCall(ctx),
        ],
      }),
  )
  const { blockNumber, blockTimestamp } = blockOf(ctx, bn, ts, action)
  const decode = withMorphoReachability(ctx, capacity)
  const fee = fieldOf(decode, feeBps)
  return {
    chain: ctx.chain,
    chainId: ctx.chainId,
    network: ctx.network,
    wallet: owner,
    blockNumber,
    blockTimestamp,
    registered: fieldOf(decode, registered),
    liquidUsdc: fieldOf(decode, balance),
    allowance: fieldOf(decode, allowance),
    shares: fieldOf(decode, shares),
    deposited: fieldOf(decode, position, ([deposited]) => deposited),
    currentValue: fieldOf(decode, position, ([, value]) => value),
    accruedYield: fieldOf(decode, position, ([, , accrued]) => accrued),
    withdrawableUsdc: isUnavailable(fee)
      ? fee
      : fieldOf(decode, position, ([, value, accrued]) => value - feeOnYield(accrued, fee)),
  }
}
