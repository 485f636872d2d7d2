import type { Address } from 'viem'
import type { VaultContext } from '../context.js'
import { readSweepDecision, resolveSweepSettings, type SweepOptions } from '../internal/sweep.js'
import type { SweepDecision } from './decideSweep.js'

/** What a sweep would do now, with the numbers it decides on (base units). */
export type DepositIdlePreview = SweepDecision & {
  wallet: Address
  /** The router's `MIN_DEPOSIT`. */
  minDeposit: bigint
  /** Whether the router knows the wallet; a deposit needs it (`ensureInitializedAndWait`). */
  registered: boolean
}

/**
 * Tells what `depositIdle` would do now, without sending anything: one RPC round trip, then the sweep
 * rule of PRODUCT.md §5.2. Works with a read-only client when `wallet` is given.
 *
 * @param ctx - The vault client.
 * @param params - `wallet` (default: the wallet client's account), `minIdleThreshold`, `reserve`
 *   (bigint base units or decimal USDC strings).
 * @returns The decision (`deposit` and `amount`, or the `reason`), the balance, reserve and idle
 *   amounts, the protocol minimum and whether the wallet is registered.
 * @throws {VaultValidationError} `INVALID_AMOUNT`, `INVALID_ADDRESS`; {VaultRpcError} on RPC trouble.
 * @example
 * const preview = await vault.previewDepositIdle({ minIdleThreshold: '10', reserve: '50' })
 * if (preview.deposit) console.log(`would deposit ${formatUsdc(preview.amount)} USDC`)
 */
export async function previewDepositIdle(
  ctx: VaultContext,
  params: SweepOptions,
): Promise<DepositIdlePreview> {
  const settings = resolveSweepSettings(ctx, params)
  const { checks, decision } = await readSweepDecision(ctx, settings)
  return {
    ...decision,
    wallet: settings.wallet,
    minDeposit: checks.minDeposit,
    registered: checks.registered,
  }
}
