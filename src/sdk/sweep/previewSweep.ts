import type { VaultContext } from '../context.js'
import type { SweepDecision } from './decideSweep.js'
import {
  readSweepDecision,
  resolveSweepSettings,
  type SweepAmounts,
  type SweepOptions,
} from './sweep.js'

/** What a sweep would do now, with the numbers it decides on (base units). */
export type SweepPreview = SweepDecision &
  Pick<SweepAmounts, 'wallet' | 'minDeposit'> & {
    /** Whether the router knows the wallet; a deposit needs it (`ensureInitializedAndWait`). */
    registered: boolean
  }

/**
 * Tells what `sweep` would do now, without sending anything: one RPC round trip, then the sweep
 * rule (see `decideSweep`). Works with a read-only client when `wallet` is given.
 *
 * @param ctx - The vault client.
 * @param params - `wallet` (default: the wallet client's account), `minIdleThreshold`, `reserve`
 *   (bigint base units or decimal USDC strings).
 * @returns The decision (`deposit: true`, which would deposit all of `idleAmount`, or `deposit:
 *   false` and the `reason`), the wallet's balance, the reserve floor, the idle amount, the protocol
 *   minimum and whether the wallet is registered.
 * @throws {VaultValidationError} `INVALID_AMOUNT`, `INVALID_ADDRESS`; {VaultRpcError} on RPC trouble.
 * @example
 * const preview = await vault.previewSweep({ minIdleThreshold: '10', reserve: '50' })
 * if (preview.deposit) console.log(`would deposit ${formatUsdc(preview.idleAmount)} USDC`)
 */
export async function previewSweep(ctx: VaultContext, params: SweepOptions): Promise<SweepPreview> {
  const settings = resolveSweepSettings(ctx, params)
  const { checks, decision } = await readSweepDecision(ctx, settings)
  return {
    ...decision,
    wallet: settings.wallet,
    minDeposit: checks.minDeposit,
    registered: checks.registered,
  }
}

/**
 * The former name of {@link previewSweep}, the same function, kept for this beta.
 *
 * @deprecated Use `previewSweep`.
 */
export const previewDepositIdle: typeof previewSweep = previewSweep

/**
 * The former name of {@link SweepPreview}, kept for this beta.
 *
 * @deprecated Use `SweepPreview`.
 */
export type DepositIdlePreview = SweepPreview
