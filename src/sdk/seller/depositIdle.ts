import type { Address, Hash } from 'viem'
import {
  confirmDeposit,
  type DepositMethod,
  type SentDeposit,
  sendDepositIn,
} from '../actions/deposit.js'
import type { VaultContext } from '../context.js'
import { VaultError, VaultTransactionError } from '../errors/classes.js'
import { depositChecksFor } from '../internal/depositPreflight.js'
import {
  readSweepDecision,
  resolveSweepSettings,
  type SweepOptions,
  type SweepSettings,
} from '../internal/sweep.js'
import { runExclusive, type WriteSlot } from '../internal/writeQueue.js'
import type { WaitOptions } from '../transactions.js'
import type { NoDepositReason } from './decideSweep.js'

export type DepositIdleParameters = SweepOptions & WaitOptions

/** The amounts a sweep decided on, in base units. */
export type SweepAmounts = {
  /** The merchant wallet. */
  wallet: Address
  /** Its USDC balance when the sweep read it. */
  balance: bigint
  /** USDC kept liquid (`reserve`). */
  reserveFloor: bigint
  /** `balance − reserveFloor`, 0 when negative. */
  idle: bigint
  /** The router's `MIN_DEPOSIT`. */
  minDeposit: bigint
}

/** What a sweep did: the deposit, or why there was none. */
export type DepositIdleResult = SweepAmounts &
  (
    | {
        deposited: true
        /** USDC deposited: all of `idle`. */
        amount: bigint
        txHash: Hash
        sharesMinted: bigint
        blockNumber: bigint
        method: DepositMethod
      }
    | { deposited: false; reason: NoDepositReason }
  )

/** The steps of a sweep, in order: where a failed sweep stopped. */
export type SweepStep = 'balance-read' | 'deposit' | 'receipt'

/**
 * Sweeps the merchant wallet now (PRODUCT.md §5.3): reads its USDC balance and the vault (pause,
 * minimum deposit, TVL cap and what the deposit needs) in one round trip, applies the sweep rule, and
 * when it says so deposits all of the idle USDC and waits for the receipt.
 *
 * The rule: `reserveFloor = reserve`; `idle = balance − reserveFloor` (0 if negative); a deposit of
 * all of `idle` happens when `idle ≥ max(minIdleThreshold, protocol minimum)`, deposits are not paused
 * and the TVL cap has room for it.
 *
 * It runs as one unit in the sending account's write queue, so it never races another write from this
 * process (a sweep of `attachToResourceServer` included). Another process sending with the same key at
 * the same moment makes it fail with `NONCE_CONFLICT` (retryable, nothing sent) or be refused before
 * sending because the balance moved; sweeping again then deposits what is left, if anything.
 *
 * @param ctx - The vault client, with a wallet client whose account sends the deposit.
 * @param params - `minIdleThreshold`, `reserve` (default 0), as bigint base units or decimal USDC
 *   strings; `wallet` (default: the wallet client's account); `confirmations`, `timeout`.
 * @returns `{ deposited: true, amount, txHash, sharesMinted, … }`, or `{ deposited: false, reason }`
 *   (`below-threshold`, `below-protocol-minimum`, `paused`, `tvl-cap`); both with the wallet,
 *   balance, reserve floor, idle amount and protocol minimum.
 * @throws {VaultValidationError} `INVALID_AMOUNT`, `INVALID_ADDRESS`; {VaultPreconditionError}
 *   `WALLET_NOT_REGISTERED` (see `ensureInitializedAndWait`); RPC, contract and transaction errors as
 *   `depositAndWait` throws them.
 * @example
 * const result = await vault.depositIdle({ minIdleThreshold: '10', reserve: '50' })
 * if (result.deposited) console.log(`deposited ${formatUsdc(result.amount)} USDC in ${result.txHash}`)
 * else console.log(`nothing to deposit: ${result.reason}`)
 */
export async function depositIdle(
  ctx: VaultContext,
  params: DepositIdleParameters,
): Promise<DepositIdleResult> {
  const settings = resolveSweepSettings(ctx, params)
  return runExclusive(ctx, undefined, (slot) => sweepIn(slot, ctx, settings, undefined, params))
}

const isHashEqual = (a: Hash, b: Hash) => a.toLowerCase() === b.toLowerCase()

/** A sweep that deposited. */
export type IdleDepositResult = Extract<DepositIdleResult, { deposited: true }>

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
 * The body of {@link depositIdle}, for a caller that holds the sending account's write slot: read →
 * decide → deposit → receipt as one unit, or only the receipt when `progress` has a sent deposit.
 *
 * @param slot - The sending account's write slot.
 * @param ctx - The vault client, with a wallet client.
 * @param settings - The checked sweep options.
 * @param progress - Updated as the sweep goes (see {@link SweepProgress}).
 * @param wait - `confirmations`, `timeout`.
 * @returns As `depositIdle`.
 */
export async function sweepIn(
  slot: WriteSlot,
  ctx: VaultContext,
  settings: SweepSettings,
  progress: SweepProgress = { step: 'balance-read', sent: undefined },
  wait: WaitOptions = {},
): Promise<DepositIdleResult> {
  if (!progress.sent) {
    progress.step = 'balance-read'
    const { checks, decision } = await readSweepDecision(ctx, settings)
    const amounts: SweepAmounts = {
      wallet: settings.wallet,
      balance: decision.balance,
      reserveFloor: decision.reserveFloor,
      idle: decision.idle,
      minDeposit: checks.minDeposit,
    }
    if (!decision.deposit) return { ...amounts, deposited: false, reason: decision.reason }

    progress.step = 'deposit'
    const deposit = await sendDepositIn(
      slot,
      ctx,
      { amount: decision.amount, wallet: settings.wallet },
      depositChecksFor(checks, decision.amount),
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
      'NONCE_CONFLICT',
      `Deposit ${sent.hash} was replaced by ${confirmed.txHash}, sent with the same nonce by another sender (another process with the same key?). Read the balance again before sweeping.`,
      { txHash: sent.hash, replacedBy: confirmed.txHash },
      undefined,
      { retryable: true },
    )
  }
  return {
    ...progress.sent.amounts,
    deposited: true,
    amount: confirmed.usdcAmount,
    txHash: confirmed.txHash,
    sharesMinted: confirmed.sharesMinted,
    blockNumber: confirmed.blockNumber,
    method: confirmed.method,
  }
}
