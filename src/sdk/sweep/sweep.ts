import type { Address, Hash } from 'viem'
import {
  confirmDeposit,
  type DepositMethod,
  type SentDeposit,
  sendDepositIn,
} from '../actions/deposit.js'
import type { VaultContext } from '../context.js'
import { VaultConfigError, VaultError, VaultTransactionError } from '../errors/classes.js'
import {
  depositChecksFor,
  readSweepChecks,
  type SweepChecks,
} from '../internal/depositPreflight.js'
import { tvlHeadroom } from '../internal/shareMath.js'
import { validateUsdcOption, validateWallet } from '../internal/validate.js'
import type { WriteSlot } from '../internal/writeQueue.js'
import type { WaitOptions } from '../transactions.js'
import { decideSweep, type NoDepositReason, type SweepDecision } from './decideSweep.js'
import type { MerchantSettlement } from './settlementRecord.js'

/*
 * A sweep makes an idle deposit: it reads the merchant wallet's USDC balance and the vault, applies
 * the sweep rule (`decideSweep`), and when the rule says so deposits all of the idle USDC and waits
 * for the receipt. `depositIdle`, the sweeper of `attachToResourceServer` and its `depositIdle()` all
 * run this one sweep; they differ only in how it is started, retried and reported.
 */

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

/** The amounts a sweep decided on, in USDC base units (show them with `formatUsdc`). */
export type SweepAmounts = {
  /** The merchant wallet. */
  wallet: Address
  /** Its USDC balance when the sweep read it. */
  walletBalance: bigint
  /** USDC kept liquid in the wallet: the `reserve` option. */
  reserveFloor: bigint
  /** `walletBalance − reserveFloor`, 0 when negative. A deposit moves all of it. */
  idleAmount: bigint
  /** The router's minimum deposit (`MIN_DEPOSIT`). */
  minDeposit: bigint
}

/** A sweep's confirmed deposit: all of `idleAmount` went into the vault in `txHash`. */
export type IdleDeposit = SweepAmounts & {
  deposited: true
  txHash: Hash
  /** Vault shares the deposit minted to the wallet. */
  sharesMinted: bigint
  /** The block the deposit was mined in. */
  blockNumber: bigint
  /** `depositWithPermit` (one transaction, no allowance needed) or `deposit`. */
  method: DepositMethod
  /**
   * The merchant settlements this deposit covers: those an attached sweeper recorded since its
   * previous deposit and before this sweep read the balance (at most `maxTrackedSettlements`, the
   * newest). `[]` for `vault.depositIdle`, which knows of no settlements.
   */
  settlements: MerchantSettlement[]
}

/** A sweep that deposited nothing, and why. */
export type NoIdleDeposit = SweepAmounts & { deposited: false; reason: NoDepositReason }

/** What a sweep did: the deposit, or why there was none. */
export type SweepResult = IdleDeposit | NoIdleDeposit

/** The steps of a sweep, in order: where a failed sweep stopped. */
export type SweepStep = 'balance-read' | 'deposit' | 'receipt'

/**
 * Where a sweep is, updated as it goes: the step it is in, and its deposit once sent. A caller keeps
 * it to tell where a failed sweep stopped, and passes it again to wait for a sent deposit's receipt
 * once more instead of sweeping anew.
 */
export type SweepProgress = {
  step: SweepStep
  /** The deposit sent, with the amounts it was decided on. */
  sent: { amounts: SweepAmounts; deposit: SentDeposit } | undefined
}

/**
 * Checks a sweep's options.
 *
 * @param ctx - The vault client (its wallet client's account is the default wallet).
 * @param options - The sweep's options, as given.
 * @returns The settings in base units, with a checksummed wallet.
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
 * @param ctx - The vault client.
 * @param settings - The checked sweep options.
 * @returns The checks (which a deposit reuses) and the decision.
 */
export async function readSweepDecision(
  ctx: VaultContext,
  settings: SweepSettings,
): Promise<{ checks: SweepChecks; decision: SweepDecision }> {
  const checks = await readSweepChecks(ctx, settings.wallet, 'Sweep read')
  const decision = decideSweep({
    walletBalance: checks.usdcBalance,
    reserve: settings.reserve,
    minIdleThreshold: settings.minIdleThreshold,
    minDeposit: checks.minDeposit,
    depositsPaused: checks.paused,
    tvlHeadroom: tvlHeadroom(checks.tvlCap, checks.totalAssets),
  })
  return { checks, decision }
}

/** How {@link sweepIn} waits for its receipt, and what it runs right before it sends. */
export type SweepInOptions = {
  wait?: WaitOptions | undefined
  beforeSend?: (() => void | Promise<void>) | undefined
}

const isHashEqual = (a: Hash, b: Hash) => a.toLowerCase() === b.toLowerCase()

/**
 * One sweep, for a caller that holds the sending account's write slot: read → decide → deposit →
 * receipt as one unit, or only the receipt when `progress` has a sent deposit.
 *
 * @param slot - The sending account's write slot.
 * @param ctx - The vault client, with a wallet client.
 * @param settings - The checked sweep options.
 * @param progress - Updated as the sweep goes (see {@link SweepProgress}).
 * @param options - `wait` (`confirmations`, `timeout` of the receipt wait) and `beforeSend`, run right
 *   before the deposit is sent (a throw stops the sweep there, before anything is sent).
 * @returns The deposit (with no `settlements`: the caller knows which it covers), or why there was none.
 */
export async function sweepIn(
  slot: WriteSlot,
  ctx: VaultContext,
  settings: SweepSettings,
  progress: SweepProgress = { step: 'balance-read', sent: undefined },
  options: SweepInOptions = {},
): Promise<SweepResult> {
  const { wait = {}, beforeSend } = options
  if (!progress.sent) {
    progress.step = 'balance-read'
    const { checks, decision } = await readSweepDecision(ctx, settings)
    const amounts: SweepAmounts = {
      wallet: settings.wallet,
      walletBalance: decision.walletBalance,
      reserveFloor: decision.reserveFloor,
      idleAmount: decision.idleAmount,
      minDeposit: checks.minDeposit,
    }
    if (!decision.deposit) return { ...amounts, deposited: false, reason: decision.reason }

    progress.step = 'deposit'
    await beforeSend?.()
    const deposit = await sendDepositIn(
      slot,
      ctx,
      { amount: decision.idleAmount, wallet: settings.wallet },
      depositChecksFor(checks, decision.idleAmount),
    )
    progress.sent = { amounts, deposit }
  }
  progress.step = 'receipt'
  const sent = progress.sent.deposit
  const confirmed = await confirmDeposit(ctx, sent, wait).catch((error: unknown) => {
    // Replaced by another sender's transaction: waiting again cannot help; read again instead.
    if (error instanceof VaultError && error.code === 'NONCE_CONFLICT') progress.sent = undefined
    throw error
  })
  if (!isHashEqual(confirmed.txHash, sent.hash)) {
    // Another sender with this key sent the same deposit with a higher fee, and theirs was mined: the
    // deposit is theirs to report. This sweep is then a collision, to read again from the start.
    progress.sent = undefined
    throw new VaultTransactionError(
      `Deposit ${sent.hash} was replaced by ${confirmed.txHash}, sent with the same nonce by another sender (another process with the same key?). Read the balance again before sweeping.`,
      {
        code: 'NONCE_CONFLICT',
        details: { txHash: sent.hash, replacedBy: confirmed.txHash },
        retryable: true,
      },
    )
  }
  return {
    ...progress.sent.amounts,
    deposited: true,
    txHash: confirmed.txHash,
    sharesMinted: confirmed.sharesMinted,
    blockNumber: confirmed.blockNumber,
    method: confirmed.method,
    settlements: [],
  }
}
