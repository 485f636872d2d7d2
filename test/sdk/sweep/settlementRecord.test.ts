/** The sweeper's record of settlements: each hash once, the pending ones taken and put back, both capped. */
import type { Hash } from 'viem'
import { describe, expect, it } from 'vitest'
import type { MerchantSettlement } from '../../../src/index.js'
import { SettlementRecord } from '../../../src/sdk/sweep/settlementRecord.js'

const settlement = (n: number): MerchantSettlement => ({
  txHash: `0x${n.toString(16).padStart(64, '0')}` as Hash,
  amount: BigInt(n),
  payer: undefined,
  scheme: 'exact',
})
const ids = (settlements: MerchantSettlement[]) => settlements.map((s) => Number(s.amount))

describe('SettlementRecord', () => {
  it('records each transaction hash once', () => {
    const record = new SettlementRecord(10)
    expect(record.add(settlement(1))).toBe(true)
    expect(record.add(settlement(1))).toBe(false)
    expect(record.add(settlement(2))).toBe(true)
    expect(ids(record.take())).toEqual([1, 2])
    // Taken is not forgotten: the hash still counts as seen.
    expect(record.add(settlement(1))).toBe(false)
  })

  it('remembers at most max hashes and pending settlements, the newest', () => {
    const record = new SettlementRecord(3)
    for (let n = 1; n <= 5; n++) record.add(settlement(n))
    expect(record.memory()).toEqual({
      trackedSettlements: 3,
      pendingSettlements: 3,
      maxTrackedSettlements: 3,
    })
    expect(ids(record.take())).toEqual([3, 4, 5])
    expect(record.memory()).toMatchObject({ trackedSettlements: 3, pendingSettlements: 0 })
    // The oldest hashes were forgotten, so they count again; the newest are still known.
    expect(record.add(settlement(1))).toBe(true)
    expect(record.add(settlement(5))).toBe(false)
  })

  it('puts back what a sweep took ahead of newer settlements, within the cap', () => {
    const record = new SettlementRecord(4)
    record.add(settlement(1))
    record.add(settlement(2))
    const taken = record.take()
    record.add(settlement(3))
    record.add(settlement(4))
    record.add(settlement(5))
    record.putBack(taken)
    // Oldest first, and only the newest 4.
    expect(ids(record.take())).toEqual([2, 3, 4, 5])
    record.putBack([])
    expect(record.memory().pendingSettlements).toBe(0)
  })
})
