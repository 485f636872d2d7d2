import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { decideSweep } from '../../../src/sdk/sweep/decideSweep.js'

const usdc = (value: number) => BigInt(Math.round(value * 1e6))
const base = {
  reserve: usdc(5),
  minIdleThreshold: usdc(10),
  minDeposit: usdc(10),
  depositsPaused: false,
  tvlHeadroom: null,
}

describe('decideSweep (the sweep rule)', () => {
  it('deposits all of balance − reserve when it reaches max(threshold, protocol minimum)', () => {
    expect(decideSweep({ ...base, walletBalance: usdc(25) })).toEqual({
      deposit: true,
      walletBalance: usdc(25),
      reserveFloor: usdc(5),
      idleAmount: usdc(20),
    })
    expect(decideSweep({ ...base, walletBalance: usdc(15) })).toMatchObject({
      deposit: true,
      idleAmount: usdc(10),
    })
  })

  it('says why it deposits nothing', () => {
    expect(decideSweep({ ...base, walletBalance: usdc(14.999999) })).toMatchObject({
      deposit: false,
      reason: 'below-threshold',
      idleAmount: usdc(9.999999),
    })
    expect(decideSweep({ ...base, minIdleThreshold: 1n, walletBalance: usdc(14) })).toMatchObject({
      deposit: false,
      reason: 'below-protocol-minimum',
    })
    expect(decideSweep({ ...base, walletBalance: usdc(3) })).toMatchObject({
      deposit: false,
      reason: 'reserve-above-balance',
      idleAmount: 0n,
    })
    // Not the vault's minimum, whatever the threshold: the reserve keeps everything.
    expect(decideSweep({ ...base, minIdleThreshold: 0n, walletBalance: usdc(3) })).toMatchObject({
      deposit: false,
      reason: 'reserve-above-balance',
    })
    expect(decideSweep({ ...base, walletBalance: usdc(5) })).toMatchObject({
      deposit: false,
      reason: 'below-threshold',
      idleAmount: 0n,
    })
    expect(decideSweep({ ...base, walletBalance: usdc(100), depositsPaused: true })).toMatchObject({
      deposit: false,
      reason: 'paused',
    })
    expect(decideSweep({ ...base, walletBalance: usdc(100), tvlHeadroom: usdc(94) })).toMatchObject(
      {
        deposit: false,
        reason: 'tvl-cap',
      },
    )
  })

  it('deposits exactly balance − reserve or nothing, so the reserve is never touched', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 15n }),
        fc.bigInt({ min: 0n, max: 10n ** 12n }),
        fc.bigInt({ min: 0n, max: 10n ** 9n }),
        (balance, reserve, minIdleThreshold) => {
          const decision = decideSweep({
            ...base,
            walletBalance: balance,
            reserve,
            minIdleThreshold,
          })
          const deposited = decision.deposit ? decision.idleAmount : 0n
          const kept = balance - deposited
          // Either nothing moved, or what stays liquid is at least the reserve.
          expect(kept === balance || kept >= reserve).toBe(true)
          expect(decision.idleAmount).toBe(balance > reserve ? balance - reserve : 0n)
          if (decision.deposit) {
            expect(decision.idleAmount).toBe(balance - reserve)
            expect(decision.idleAmount).toBeGreaterThanOrEqual(minIdleThreshold)
            expect(decision.idleAmount).toBeGreaterThanOrEqual(base.minDeposit)
          }
        },
      ),
    )
  })
})
