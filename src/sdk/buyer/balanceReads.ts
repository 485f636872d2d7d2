/**
 * A read of the wallet's liquid USDC, and what it needs to be trusted: when it was sent, and where the
 * account's writes stood then (`writeEpoch`).
 */
export type BalanceRead = {
  readonly sentAt: number
  /** `undefined`: a write of the account was in progress, so the read is never trusted. */
  readonly writes: number | undefined
  /**
   * Payments released at or after this time count as unspent against it: for a read sent now, its own
   * time; for a read sent ahead, the release that sent it (see {@link BalanceReads}).
   */
  readonly countsFrom: number
  /** The balance, or `undefined` when the read failed. */
  readonly balance: Promise<bigint | undefined>
}

/**
 * How long a read sent ahead serves payments. A payment that arrives within this long after an earlier
 * one's outcome marks a payer that pays in a loop, for whom reading ahead pays off.
 */
export const readAheadFreshMs = 1_000
/** A read sent ahead is replaced, at the next payment's outcome, once it is this old. */
export const readAheadRefreshMs = 500

/**
 * The wallet's balance reads for the buyer's fast path (a payment the liquid USDC covers goes on with no
 * recall), and the read sent ahead.
 *
 * A payer that pays in a loop (its next payment arrives soon after an earlier one's outcome) would wait
 * for one balance read per payment before x402 signs, and spend the CPU of one RPC request on each. So
 * when a payment's outcome arrives, a read is sent ahead, and the loop's payments use it while it is
 * fresh ({@link readAheadFreshMs}); it is replaced every {@link readAheadRefreshMs}. As far as this
 * process can know, such a read is trusted no further than a fresh one would be:
 * - the payment whose outcome sent it counts as unspent, and so does every payment released after it:
 *   the read goes out the moment that payment's outcome arrives, when the RPC node the buyer reads may
 *   not show its settlement yet (the payments funded and not yet released count anyway);
 * - a write of the account in this process (a deposit, a redeposit, a recall, by any vault client) makes
 *   every read sent before it ends useless;
 * - when it leaves too little, the payment reads afresh, as a payer that does not loop always does.
 *
 * What a read sent ahead cannot see is a spend by another program from the same wallet since it was
 * sent (a second at most): the facilitator then refuses the payment and nothing moves, as it does for
 * a spend between a fresh read and the settlement.
 */
export class BalanceReads {
  /** Payments released lately, in time order: when, and how much. */
  private readonly releases: { at: number; amount: bigint }[] = []
  /** The newest read sent ahead that answered. */
  private ahead: BalanceRead | undefined
  /** A read sent ahead that has not answered yet. */
  private pending: BalanceRead | undefined
  private lastReleaseAt = Number.NEGATIVE_INFINITY
  /** Releases before this time are no longer listed. */
  private forgottenBefore = Number.NEGATIVE_INFINITY
  private looping = false
  private closed = false

  /**
   * @param read - Reads the wallet's liquid USDC.
   * @param writes - The account's write epoch (`writeEpoch`).
   */
  constructor(
    private readonly read: () => Promise<bigint>,
    private readonly writes: () => number | undefined,
  ) {}

  /**
   * Sends a read now. Its failure is an `undefined` balance.
   *
   * @returns The read.
   */
  send(): BalanceRead {
    return this.sendRead(performance.now())
  }

  /**
   * Marks a payment's arrival; returns the read sent ahead that it may use: the newest one that
   * answered while it is fresh, else the one on its way.
   *
   * @returns The read sent ahead, or `undefined`.
   */
  arrived(): BalanceRead | undefined {
    const now = performance.now()
    this.looping = now - this.lastReleaseAt <= readAheadFreshMs
    const fresh = (read: BalanceRead | undefined) =>
      read && now - read.sentAt <= readAheadFreshMs ? read : undefined
    return fresh(this.ahead) ?? fresh(this.pending)
  }

  /**
   * Marks a payment's release (its outcome arrived, or it was never signed). For a payer that pays in
   * a loop, sends a read ahead unless one is on its way or the last is younger than
   * {@link readAheadRefreshMs}.
   *
   * @param amount - The payment.
   * @param readAhead - Whether a read ahead could serve (no round runs or waits).
   */
  released(amount: bigint, readAhead: boolean): void {
    const now = performance.now()
    this.lastReleaseAt = now
    // In time order: what a read sent ahead and still fresh cannot count lies at the front. A read
    // that needs what is dropped (one on its way for seconds) is no longer trusted (`spendable`).
    this.forgottenBefore = now - 2 * readAheadFreshMs
    const kept = this.releases.findIndex((release) => release.at >= this.forgottenBefore)
    this.releases.splice(0, kept === -1 ? this.releases.length : kept)
    this.releases.push({ at: now, amount })
    if (!readAhead || !this.looping || this.closed || this.pending) return
    if (this.ahead && now - this.ahead.sentAt < readAheadRefreshMs) return
    const read = this.sendRead(now)
    this.pending = read
    void read.balance.then((balance) => {
      if (this.pending !== read) return
      this.pending = undefined
      if (balance !== undefined) this.ahead = read
    })
  }

  /**
   * What a read's balance leaves for payments now (to be compared in the same turn): the balance less
   * the payments released since its `countsFrom`, or `undefined` when a write of the account may have
   * moved the balance since it was sent (or when those releases are no longer all listed).
   *
   * @param read - A read that has answered.
   * @param balance - Its balance.
   * @returns The USDC payments can count on, or `undefined`.
   */
  spendable(read: BalanceRead, balance: bigint): bigint | undefined {
    if (read.writes === undefined || this.writes() !== read.writes) return undefined
    if (read.countsFrom < this.forgottenBefore) return undefined
    let unspent = 0n
    for (const release of this.releases) {
      if (release.at >= read.countsFrom) unspent += release.amount
    }
    return balance - unspent
  }

  /** Sends no more reads ahead. */
  close(): void {
    this.closed = true
    this.ahead = undefined
    this.pending = undefined
  }

  private sendRead(countsFrom: number): BalanceRead {
    return {
      sentAt: performance.now(),
      writes: this.writes(),
      countsFrom,
      balance: this.read().catch(() => undefined),
    }
  }
}
