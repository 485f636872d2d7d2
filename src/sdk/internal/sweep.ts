import type { Address } from 'viem'
import type { VaultContext } from '../context.js'
import { VaultConfigError } from '../errors/classes.js'
import { decideSweep, type SweepDecision } from '../seller/decideSweep.js'
import { readSweepChecks, type SweepChecks, tvlHeadroomOf } from './depositPreflight.js'
import { validateUsdcOption, validateWallet } from './validate.js'

/** The options every sweep takes, as given: amounts as bigint base units or decimal USDC strings. */
export type SweepOptions = {
  /** The merchant wallet to sweep. Default: the wallet client's account. */
  wallet?: Address | undefined
  /** Deposit only once the idle USDC reaches this (and the protocol minimum). `0n` leaves only the minimum. */
  minIdleThreshold: bigint | string
  /** USDC kept liquid in the wallet. Default 0. */
  reserve?: bigint | string | undefined
}

/** {@link SweepOptions}, checked: base units and a checksummed wallet. */
export type SweepSettings = { wallet: Address; minIdleThreshold: bigint; reserve: bigint }

/**
 * Checks a sweep's options.
 *
 * @throws {VaultValidationError} `INVALID_AMOUNT`, `INVALID_ADDRESS`; {VaultConfigError}
 *   `ACCOUNT_REQUIRED` when no wallet is given and the client has no account.
 */
export function resolveSweepSettings(ctx: VaultContext, options: SweepOptions): SweepSettings {
  const given = options?.wallet ?? ctx.walletClient?.account?.address
  if (given === undefined) {
    throw new VaultConfigError(
      'No wallet to sweep: pass `wallet`, or give the vault client a wallet client with an account.',
      { code: 'ACCOUNT_REQUIRED' },
    )
  }
  return {
    wallet: validateWallet(given),
    minIdleThreshold: validateUsdcOption(options.minIdleThreshold, 'minIdleThreshold'),
    reserve: validateUsdcOption(options.reserve ?? 0n, 'reserve'),
  }
}

/**
 * Reads the wallet and the vault in one round trip and applies the sweep rule (`decideSweep`).
 *
 * @returns The checks (which a deposit reuses) and the decision.
 */
export async function readSweepDecision(
  ctx: VaultContext,
  settings: SweepSettings,
): Promise<{ checks: SweepChecks; decision: SweepDecision }> {
  const checks = await readSweepChecks(ctx, settings.wallet, 'Sweep read')
  const decision = decideSweep({
    balance: checks.usdcBalance,
    reserve: settings.reserve,
    minIdleThreshold: settings.minIdleThreshold,
    minDeposit: checks.minDeposit,
    depositsPaused: checks.paused,
    tvlHeadroom: tvlHeadroomOf(checks),
  })
  return { checks, decision }
}
