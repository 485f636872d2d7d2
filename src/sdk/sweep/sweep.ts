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
import { isHashEqual } from '../internal/waitForNonceSlot.js'
import { runExclusive, type WriteSlot } from '../internal/writeQueue.js'
import type { WaitOptions } from '../transactions.js'
import { decideSweep, type NoIdleDepositReason, type SweepDecision } from './decideSweep.js'
import type { MerchantSettlement } from './settlementRecord.js'

/*
 * A sweep makes an idle deposit: it reads the merchant wallet's USDC balance and the vault, applies
 * the sweep rule (`decideSweep`), and when the rule says so deposits all of the idle USDC and waits
 * for the receipt. `sweep` (below), the sweepers (`attachToResourceServer` and its `sweep()`,
 * `x402-vault sweep --watch`) and the buyer's redeposit all run this one sweep, `sweepIn`; they differ
 * only in how it is started, retried and reported.
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
   * newest). `[]` for `vault.sweep`, which knows of no settlements.
   */
  settlements: MerchantSettlement[]
}

/** A sweep that deposited nothing, and why. */
export type NoIdleDeposit = SweepAmounts & { deposited: false; reason: NoIdleDepositReason }

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

/** What `sweep` takes: the sweep's options, and how its receipt is awaited. */
export type SweepParameters = SweepOptions & WaitOptions

/**
 * Sweeps the merchant wallet now, with the options given: reads its USDC balance and the vault
 * (pause, minimum deposit, TVL cap and what the deposit needs) in one round trip, applies the sweep
 * rule, and when it says so deposits all of the idle USDC and waits for the receipt.
 *
 * The rule: `reserveFloor = reserve`; `idleAmount = walletBalance − reserveFloor` (0 if negative); a
 * deposit of all of `idleAmount` happens when `idleAmount ≥ max(minIdleThreshold, protocol minimum)`,
 * deposits are not paused and the TVL cap has room for it.
 *
 * How it differs from the `sweep()` of an attached sweeper (`attachToResourceServer`): this one
 * takes its options here and knows of no settlements (its deposit's `settlements` is `[]`) and no
 * observers; the sweeper's takes no arguments, sweeps with the sweeper's own options, reports its
 * deposit (with the settlements it covers) to `onIdleDeposit` as well, and returns the same thing.
 * Both make one attempt, reject on failure, and run in the same per-account queue.
 *
 * It runs as one unit in the sending account's write queue, so it never races another write from this
 * process (a sweep of `attachToResourceServer` included). Another process sending with the same key at
 * the same moment makes it fail with `NONCE_CONFLICT` (retryable, nothing sent) or be refused before
 * sending because the balance moved; sweeping again then deposits what is left, if anything.
 *
 * @param ctx - The vault client, with a wallet client whose account sends the deposit.
 * @param params - `minIdleThreshold`, `reserve` (default 0), as bigint base units or decimal USDC
 *   strings; `wallet` (default: the wallet client's account); `confirmations`, `timeout`.
 * @returns An `IdleDeposit` (`{ deposited: true, idleAmount, txHash, sharesMinted, … }`) or a
 *   `NoIdleDeposit` (`{ deposited: false, reason }`, the reason `below-threshold`,
 *   `below-protocol-minimum`, `reserve-above-balance`, `paused` or `tvl-cap`); both with the wallet, its balance, the reserve
 *   floor, the idle amount and the protocol minimum.
 * @throws {VaultValidationError} `INVALID_AMOUNT`, `INVALID_ADDRESS`; {VaultPreconditionError}
 *   `WALLET_NOT_REGISTERED` (see `ensureInitializedAndWait`); RPC, contract and transaction errors as
 *   `depositAndWait` throws them.
 * @example
 * const result = await vault.sweep({ minIdleThreshold: '10', reserve: '50' })
 * if (result.deposited) console.log(`deposited ${formatUsdc(result.idleAmount)} USDC in ${result.txHash}`)
 * else console.log(`nothing to deposit: ${result.reason}`)
 */
export async function sweep(ctx: VaultContext, params: SweepParameters): Promise<SweepResult> {
  const settings = resolveSweepSettings(ctx, params)
  return runExclusive(ctx, undefined, (slot) =>
    sweepIn(slot, ctx, settings, undefined, { wait: params }),
  )
}

/**
 * The former name of {@link sweep}, the same function, kept for this beta.
 *
 * @deprecated Use `sweep`: a sweep makes an idle deposit.
 */
export const depositIdle: typeof sweep = sweep

/**
 * The former name of {@link SweepParameters}, kept for this beta.
 *
 * @deprecated Use `SweepParameters`.
 */
export type DepositIdleParameters = SweepParameters
