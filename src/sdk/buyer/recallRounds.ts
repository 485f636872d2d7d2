import type { Address } from 'viem'
import { getUsdcBalance } from '../actions/getUsdcBalance.js'
import type { VaultContext } from '../context.js'
import type { VaultErrorCode } from '../errors/codes.js'
import { toVaultError } from '../errors/toVaultError.js'
import { sleep } from '../internal/sleep.js'
import { writeEpoch } from '../internal/writeQueue.js'
import { formatUsdc } from '../money.js'
import { type BalanceRead, BalanceReads } from './balanceReads.js'
import { PaymentFundingError } from './buyerErrors.js'
import type { BuyerPolicy } from './buyerPolicy.js'
import { type Recall, type RecallFailure, type RecallSettings, recallTo } from './recall.js'

/** What became of a payment that asked the vault for funding. */
export type FundingOutcome =
  /** The wallet's liquid USDC covers it (after a recall, if one was needed): x402 may sign. */
  | { kind: 'funded'; release: () => void }
  /** The recall failed, but the wallet's liquid USDC covers the payment all the same. */
  | { kind: 'liquid-despite-failure'; release: () => void; failure: RecallFailure }
  /** A recall for it would pass `maxPerWindow`. */
  | { kind: 'over-window'; needed: bigint }
  /** Neither the wallet nor the vault can fund it: abort before signing. */
  | { kind: 'abort'; error: PaymentFundingError }

/** A batch starts once no payment arrived for this long… */
const gatherQuietMs = 15
/**
 * …or at the latest this long after it could start, and never longer than a quarter of the last
 * recall: a batch's payments then wait little more than one recall, even after a slow one, and a
 * straggler left out waits at most for the next round.
 */
const gatherMaxMs = 100

type Waiter = { amount: bigint; resolve: (outcome: FundingOutcome) => void }

/** What the rounds report to the attachment. */
export type RecallRoundEvents = {
  recalled: (recall: Recall) => void
  /** A failed attempt that is tried again (`willRetry`), or a last failure some payment proceeded despite. */
  problem: (failure: RecallFailure, willRetry: boolean) => void
}

/** Codes of a withdrawal refused because the wallet's position is short (or absent). */
const fundsShortCodes = new Set<VaultErrorCode>([
  'INSUFFICIENT_SHARES',
  'UNSERVICEABLE_AMOUNT',
  'WALLET_NOT_REGISTERED',
  'NO_POSITION',
  'POSITION_ROUNDS_TO_ZERO',
])
/** Codes of a withdrawal refused because the vault cannot pay out now. */
const cannotDeliverCodes = new Set<VaultErrorCode>([
  'INSUFFICIENT_VAULT_LIQUIDITY',
  'MORPHO_UNREACHABLE',
  'NO_SAFE_VAULT',
  'STALE_ORACLE',
])

/**
 * Funds payments in rounds, one round at a time: a payment the wallet cannot cover joins a batch, which
 * starts once payments stop arriving for a moment (a burst's 402s come back over a few milliseconds),
 * and a payment that arrives while a round runs waits for the next one, which covers every payment that
 * arrived meanwhile with one recall. So a burst of payments from an empty wallet makes one or two
 * withdrawals, not one each.
 *
 * A round reads the wallet's balance and compares it with what it must hold: every payment funded
 * earlier and not yet released (x402 has not told its outcome), the round's payments, and the reserve.
 * When that is short it recalls the difference, exactly (`recallTo`). A payment stays committed from
 * the moment it is funded until it is released (its outcome, a failure to sign, or a timeout), so that
 * two rounds never count the same liquid USDC twice.
 */
export class RecallRounds {
  private queue: Waiter[] = []
  private running: Promise<void> | undefined
  /** USDC of payments funded and not yet released. */
  private committedTotal = 0n
  /** Payments funded and not yet released. */
  private committedCount = 0
  /** The balance reads of the fast path, and the read sent ahead. */
  private readonly reads: BalanceReads

  /**
   * @param ctx - The vault client.
   * @param wallet - The paying wallet (the vault client's account).
   * @param reserve - USDC kept liquid beyond the payments.
   * @param policy - The window cap.
   * @param settings - How a recall retries and waits, and whom it tells of retries.
   * @param events - Where recalls and problems go.
   * @param onRelease - Called when a payment is released.
   */
  constructor(
    private readonly ctx: VaultContext,
    private readonly wallet: Address,
    private readonly reserve: bigint,
    private readonly policy: BuyerPolicy,
    private readonly settings: RecallSettings,
    private readonly events: RecallRoundEvents,
    private readonly onRelease: () => void,
  ) {
    this.reads = new BalanceReads(
      () => getUsdcBalance(ctx, { wallet }),
      () => writeEpoch(ctx, wallet),
    )
  }

  /** Sends no more balance reads ahead (the attachment is detached). */
  close(): void {
    this.reads.close()
  }

  /** USDC and count of payments funded and not yet released, and whether a round runs or waits. */
  get state(): { committed: bigint; inFlight: number; busy: boolean } {
    return {
      committed: this.committedTotal,
      inFlight: this.committedCount,
      busy: this.running !== undefined || this.queue.length > 0,
    }
  }

  /** Resolves once no round runs or waits. */
  async idle(): Promise<void> {
    while (this.running) await this.running
  }

  /**
   * Asks for a payment's funding; resolves when it is decided. When no round runs or waits, a wallet
   * whose liquid USDC covers the payment (with those in flight and the reserve) is funded after one
   * balance read, with no wait (for a payer that pays in a loop, the read sent ahead when its last
   * payment's outcome arrived: see {@link BalanceReads}); otherwise the payment joins the next round.
   *
   * @param amount - The payment (base units).
   * @returns What became of it.
   */
  async fund(amount: bigint): Promise<FundingOutcome> {
    const ahead = this.reads.arrived()
    if (ahead && !this.running && this.covers(ahead, await ahead.balance, amount)) {
      return this.commit(amount)
    }
    if (!this.running) {
      const read = this.reads.send()
      if (this.covers(read, await read.balance, amount)) return this.commit(amount)
      // Not covered, or unknown: the round reads it again, in the write queue, with retries.
    }
    return new Promise((resolve) => {
      const now = Date.now()
      if (this.queue.length === 0) this.firstArrival = now
      this.lastArrival = now
      this.queue.push({ amount, resolve })
      this.running ??= this.drain().finally(() => {
        this.running = undefined
      })
    })
  }

  /** When the first payment of the waiting batch arrived, and the last one. */
  private firstArrival = 0
  private lastArrival = 0
  /** How long the last recall took: it bounds how long a batch gathers. */
  private lastRecallMs: number | undefined

  private async drain(): Promise<void> {
    let previousEnd = 0
    while (this.queue.length > 0) {
      await this.gather(previousEnd)
      await this.round(this.queue.splice(0))
      previousEnd = Date.now()
    }
  }

  /**
   * Waits until no payment has arrived for {@link gatherQuietMs}, or {@link gatherMaxMs} (at most a
   * quarter of the last recall's time) after the batch could start: a burst whose 402s come back over
   * a few milliseconds makes one batch, not several.
   */
  private async gather(previousEnd: number): Promise<void> {
    const maxMs = Math.min(gatherMaxMs, (this.lastRecallMs ?? Number.POSITIVE_INFINITY) / 4)
    for (;;) {
      const now = Date.now()
      const at = Math.min(
        this.lastArrival + gatherQuietMs,
        Math.max(this.firstArrival, previousEnd) + maxMs,
      )
      if (now >= at) return
      await sleep(at - now)
    }
  }

  private async round(batch: Waiter[]): Promise<void> {
    const started = performance.now()
    // Read outside the write queue first: a batch the wallet covers waits for no other write. When
    // the read fails, the recall reads it again in the queue (and retries): let it decide.
    const read = this.reads.send()
    const answer = await read.balance
    const balance = answer === undefined ? undefined : this.reads.spendable(read, answer)
    const base = this.committedTotal + this.reserve
    const remaining = this.policy.windowRemaining()
    const admitted: Waiter[] = []
    let target = base
    for (const waiter of batch) {
      const next = target + waiter.amount
      const shortfall = balance === undefined || next > balance ? next - (balance ?? 0n) : 0n
      if (remaining !== undefined && shortfall > remaining) {
        waiter.resolve({ kind: 'over-window', needed: shortfall })
        continue
      }
      admitted.push(waiter)
      target = next
    }
    if (admitted.length === 0) return
    if (balance !== undefined && balance >= target) {
      for (const waiter of admitted) waiter.resolve(this.commit(waiter.amount))
      return
    }
    const amounts = admitted.map((waiter) => waiter.amount)
    try {
      // Timed from the round's start: what its payments waited for, its first balance read included.
      const recall = await recallTo(this.settings, target, amounts, started)
      if (recall) {
        // The window counted it as it was sent (`countSend`): what was asked for, though the router
        // may pay a base unit more (rounding is the buyer's).
        this.lastRecallMs = recall.durationMs
        this.events.recalled(recall)
      }
      for (const waiter of admitted) waiter.resolve(this.commit(waiter.amount))
    } catch (thrown) {
      const failure = isRecallFailure(thrown)
        ? thrown
        : { step: 'withdraw' as const, error: toVaultError(thrown) }
      // A failure that stops every payment is theirs to tell (the cause of their error), not a problem
      // survived: it is reported only when a payment proceeds despite it.
      const proceeded = await this.settleFailedRound(admitted, failure, target - base)
      if (proceeded) this.events.problem(failure, false)
    }
  }

  /**
   * After a failed recall, each payment the wallet's liquid USDC still covers (reserve or not, in the
   * order they arrived) proceeds; the others abort with the reason.
   *
   * @returns Whether any payment proceeds.
   */
  private async settleFailedRound(
    admitted: Waiter[],
    failure: RecallFailure,
    paymentsTotal: bigint,
  ): Promise<boolean> {
    let balance: bigint | undefined
    try {
      balance = await getUsdcBalance(this.ctx, { wallet: this.wallet })
    } catch {
      // Unknown: no payment can be shown to be covered, so none proceeds.
    }
    let covered = this.committedTotal
    let proceeded = false
    for (const waiter of admitted) {
      covered += waiter.amount
      if (balance !== undefined && balance >= covered) {
        proceeded = true
        waiter.resolve({
          kind: 'liquid-despite-failure',
          release: this.commit(waiter.amount).release,
          failure,
        })
      } else {
        waiter.resolve({
          kind: 'abort',
          error: fundingError(waiter.amount, balance, paymentsTotal, failure),
        })
      }
    }
    return proceeded
  }

  /**
   * Whether a read's balance covers a payment now, with those in flight and the reserve. Checked and
   * committed in one turn after the read: no other payment can slip in between.
   */
  private covers(read: BalanceRead, balance: bigint | undefined, amount: bigint): boolean {
    if (this.running || balance === undefined) return false
    const spendable = this.reads.spendable(read, balance)
    return spendable !== undefined && spendable >= this.committedTotal + this.reserve + amount
  }

  private commit(amount: bigint): { kind: 'funded'; release: () => void } {
    this.committedTotal += amount
    this.committedCount += 1
    let released = false
    return {
      kind: 'funded',
      release: () => {
        if (released) return
        released = true
        this.committedTotal -= amount
        this.committedCount -= 1
        this.reads.released(amount, !this.running && this.queue.length === 0)
        this.onRelease()
      },
    }
  }
}

function isRecallFailure(value: unknown): value is RecallFailure {
  return typeof value === 'object' && value !== null && 'step' in value && 'error' in value
}

/** The typed error of a payment that neither the wallet nor the vault could fund. */
function fundingError(
  amount: bigint,
  walletBalance: bigint | undefined,
  paymentsTotal: bigint,
  failure: RecallFailure,
): PaymentFundingError {
  const { error } = failure
  const code = fundsShortCodes.has(error.code)
    ? 'BUYER_FUNDS_SHORT'
    : cannotDeliverCodes.has(error.code)
      ? 'VAULT_CANNOT_DELIVER'
      : 'RECALL_FAILED'
  const liquid =
    walletBalance === undefined ? 'an unknown amount' : `${formatUsdc(walletBalance)} USDC`
  const why =
    code === 'BUYER_FUNDS_SHORT'
      ? 'the wallet and its vault position together cannot fund it'
      : code === 'VAULT_CANNOT_DELIVER'
        ? 'the vault cannot pay out now'
        : `the recall failed at its ${failure.step} step`
  return new PaymentFundingError(
    `Payment of ${formatUsdc(amount)} USDC aborted before signing: the wallet holds ${liquid} and ${why} (${error.code}: ${error.message})`,
    {
      code,
      details: {
        amount,
        walletBalance,
        paymentsTotal,
        reason: error.code,
        step: failure.step,
      },
      cause: error,
      retryable: code === 'RECALL_FAILED' && error.retryable,
    },
  )
}
