import type { Address, Hash } from 'viem'

/**
 * A settlement that paid the merchant in the vault's USDC: what a sweeper records, and what an
 * `IdleDeposit` lists as covered (`merchantSettlementOf` reads one from x402's after-settle hook).
 */
export type MerchantSettlement = {
  txHash: Hash
  /**
   * USDC received, in base units (for `upto`, what was actually settled; for `batch-settlement`, what the
   * chain shows the settle moved to the merchant).
   */
  amount: bigint
  payer: Address | undefined
  scheme: 'exact' | 'upto' | 'batch-settlement'
}

/** What a sweeper holds in memory: the settlement hashes it remembers to drop duplicates, and its queue. */
export type SweeperMemory = {
  /** Settlement hashes remembered; at most `maxTrackedSettlements`. */
  trackedSettlements: number
  /** Settlements recorded and not yet covered by a deposit; at most `maxTrackedSettlements`. */
  pendingSettlements: number
  maxTrackedSettlements: number
}

/**
 * The merchant settlements a sweeper has seen: each transaction hash once, and the settlements that no
 * deposit has covered yet, which a sweep takes and puts back unless it deposits. Both are bounded by
 * `max`: the oldest are forgotten first, so a long-running process holds at most `max` of each.
 */
export class SettlementRecord {
  /** Settlement hashes seen, oldest first (a Set keeps insertion order). */
  private readonly seen = new Set<string>()
  /** Settlements recorded and not taken by a sweep, oldest first. */
  private pending: MerchantSettlement[] = []

  /** @param max - How many hashes, and how many pending settlements, are kept at most. */
  constructor(private readonly max: number) {}

  /**
   * Records a settlement unless its transaction hash was seen before.
   *
   * @returns `false` for a duplicate (nothing recorded).
   */
  add(settlement: MerchantSettlement): boolean {
    if (this.seen.has(settlement.txHash)) return false
    this.seen.add(settlement.txHash)
    if (this.seen.size > this.max) this.seen.delete(this.seen.values().next().value as string)
    this.pending.push(settlement)
    if (this.pending.length > this.max) this.pending.shift()
    return true
  }

  /** Takes every pending settlement, oldest first: a sweep covers them if it deposits. */
  take(): MerchantSettlement[] {
    const taken = this.pending
    this.pending = []
    return taken
  }

  /** Returns settlements a sweep took but did not deposit, ahead of newer ones. */
  putBack(taken: MerchantSettlement[]): void {
    if (taken.length === 0) return
    this.pending = [...taken, ...this.pending].slice(-this.max)
  }

  memory(): SweeperMemory {
    return {
      trackedSettlements: this.seen.size,
      pendingSettlements: this.pending.length,
      maxTrackedSettlements: this.max,
    }
  }
}
