import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  assetsToShares,
  feeOnYield,
  previewRedeem,
  previewWithdrawNet,
  sharesDeliveringNet,
  sharesToAssets,
  type VaultTotals,
  type WalletHoldings,
} from '../../src/sdk/internal/shareMath.js'

/** A vault and one wallet in it: W ≤ S, assets from a price of 0.5 to 2 USDC per share. */
const states = fc
  .record({
    totalShares: fc.bigInt({ min: 1n, max: 10n ** 14n }),
    walletPart: fc.bigInt({ min: 1n, max: 1_000_000n }),
    priceMillis: fc.bigInt({ min: 500n, max: 2_000n }),
    costBasisMillis: fc.bigInt({ min: 0n, max: 2_500n }),
  })
  .map(({ totalShares, walletPart, priceMillis, costBasisMillis }) => {
    const shares = (totalShares * walletPart) / 1_000_000n || 1n
    const vault: VaultTotals = { totalShares, totalAssets: (totalShares * priceMillis) / 1_000n }
    const wallet: WalletHoldings = { shares, costBasis: (shares * costBasisMillis) / 1_000n }
    return { vault, wallet }
  })

describe('share math (PROTOCOL.md §4.1–§4.2)', () => {
  it('mints 1:1 into an empty vault and caps redemption at the assets held', () => {
    const empty = { totalAssets: 0n, totalShares: 0n }
    expect(assetsToShares(10_000_000n, empty)).toBe(10_000_000n)
    // Below a price of 1 the virtual offset would give more than the vault holds: capped at A.
    const underwater = { totalAssets: 5n, totalShares: 10n }
    expect(sharesToAssets(10n, underwater)).toBe(5n)
  })

  it('rounds the fee up and charges none without yield', () => {
    expect(feeOnYield(0n)).toBe(0n)
    expect(feeOnYield(1n)).toBe(1n)
    expect(feeOnYield(10n)).toBe(1n)
    expect(feeOnYield(11n)).toBe(2n)
  })

  it('previewWithdrawNet reverts as the router does', () => {
    const vault = { totalAssets: 100_000_000n, totalShares: 100_000_000n }
    const wallet = { shares: 100_000_000n, costBasis: 100_000_000n }
    expect(previewWithdrawNet(0n, vault, wallet)).toEqual({ error: 'ZeroAmount' })
    expect(previewWithdrawNet(1n, vault, { shares: 0n, costBasis: 0n })).toEqual({
      error: 'NoPositionToWithdraw',
    })
    expect(previewWithdrawNet(1n, { totalAssets: 0n, totalShares: 1n }, wallet)).toEqual({
      error: 'PositionRoundsToZero',
    })
    expect(previewWithdrawNet(100_000_001n, vault, wallet)).toEqual({
      error: 'UnserviceableNet',
      desired: 100_000_001n,
      maxDeliverable: 100_000_000n,
    })
  })

  it('can quote W − 1 shares at d = maxDeliverable, 1 unit short; sharesDeliveringNet corrects it', () => {
    let shortAtWMinusOne = 0
    fc.assert(
      fc.property(states, ({ vault, wallet }) => {
        const max = previewRedeem(wallet.shares, vault, wallet)
        const quote = previewWithdrawNet(max, vault, wallet)
        if (!('shares' in quote) || previewRedeem(quote.shares, vault, wallet) >= max) return
        if (quote.shares === wallet.shares - 1n) shortAtWMinusOne++
        const corrected = sharesDeliveringNet(quote.shares, max, vault, wallet) as bigint
        expect(corrected).toBeGreaterThan(quote.shares)
        expect(corrected).toBeLessThanOrEqual(wallet.shares)
        expect(previewRedeem(corrected, vault, wallet)).toBeGreaterThanOrEqual(max)
      }),
      { numRuns: 2_000, seed: 7 },
    )
    expect(shortAtWMinusOne).toBeGreaterThan(0)
  })

  it('every amount up to the withdrawable maximum gets shares that pay at least that amount', () => {
    fc.assert(
      fc.property(states, fc.double({ min: 0, max: 1, noNaN: true }), ({ vault, wallet }, at) => {
        const max = previewRedeem(wallet.shares, vault, wallet)
        if (max === 0n) return
        const desired = 1n + BigInt(Math.floor(at * Number(max - 1n)))
        const quote = previewWithdrawNet(desired, vault, wallet)
        expect('shares' in quote).toBe(true)
        if (!('shares' in quote)) return
        const shares = sharesDeliveringNet(quote.shares, desired, vault, wallet)
        expect(shares).toBeDefined()
        expect(shares as bigint).toBeLessThanOrEqual(wallet.shares)
        expect(previewRedeem(shares as bigint, vault, wallet)).toBeGreaterThanOrEqual(desired)
      }),
      { numRuns: 1_000 },
    )
  })
})
