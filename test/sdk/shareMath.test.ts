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
  VIRTUAL_OFFSET,
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

describe('share math: shares minted and assets paid both round down, against the caller', () => {
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

  it('previewRedeem never falls as the shares grow (what the search for the fewest shares relies on)', () => {
    fc.assert(
      fc.property(states, fc.double({ min: 0, max: 1, noNaN: true }), ({ vault, wallet }, at) => {
        const shares = BigInt(Math.floor(at * Number(wallet.shares)))
        if (shares >= wallet.shares) return
        expect(previewRedeem(shares + 1n, vault, wallet)).toBeGreaterThanOrEqual(
          previewRedeem(shares, vault, wallet),
        )
      }),
      { numRuns: 5_000 },
    )
  })

  it('every amount up to the withdrawable maximum gets the fewest shares that pay it, never more than the quote', () => {
    fc.assert(
      fc.property(states, fc.double({ min: 0, max: 1, noNaN: true }), ({ vault, wallet }, at) => {
        const max = previewRedeem(wallet.shares, vault, wallet)
        if (max === 0n) return
        const desired = 1n + BigInt(Math.floor(at * Number(max - 1n)))
        const quote = previewWithdrawNet(desired, vault, wallet)
        expect('shares' in quote).toBe(true)
        if (!('shares' in quote)) return
        const shares = sharesDeliveringNet(quote.shares, desired, vault, wallet) as bigint
        expect(shares).toBeDefined()
        expect(shares).toBeLessThanOrEqual(wallet.shares)
        expect(previewRedeem(shares, vault, wallet)).toBeGreaterThanOrEqual(desired)
        if (desired === max) {
          // Everything the position pays takes every share: no dust is left.
          expect(shares).toBe(wallet.shares)
        } else {
          expect(previewRedeem(shares - 1n, vault, wallet)).toBeLessThan(desired)
          // The quote, or the share the live formula can miss at the maximum.
          const checked = previewRedeem(quote.shares, vault, wallet) >= desired
          expect(shares).toBeLessThanOrEqual(checked ? quote.shares : wallet.shares)
        }
      }),
      { numRuns: 2_000 },
    )
  })
})

/** `⌈(A+V)/(S+V)⌉`: the most base units one more share adds to a share count's value. */
const sharePriceCeil = (vault: VaultTotals) =>
  (vault.totalAssets + 2n * VIRTUAL_OFFSET + vault.totalShares - 1n) /
  (vault.totalShares + VIRTUAL_OFFSET)

/**
 * The bounds docs/sdk.md#rounding states, on the pure share math, over prices per share from 0.5 to
 * just under 2 base units (1 at launch, about 1.04 after a year at 4 %), positions in profit (the fee
 * applies) and at a loss. The devnet test (test/sdk/rounding.devnet.test.ts) checks them on chain.
 */
describe('rounding bounds (docs/sdk.md#rounding)', () => {
  it('by amount: the fewest shares pay the amount plus at most ⌈price⌉ − 1 units (1 below a price of 2); the closed form up to 2 more', () => {
    const over = { ours: new Map<bigint, number>(), quote: new Map<bigint, number>() }
    const count = (map: Map<bigint, number>, key: bigint) => map.set(key, (map.get(key) ?? 0) + 1)
    fc.assert(
      fc.property(states, fc.double({ min: 0, max: 1, noNaN: true }), ({ vault, wallet }, at) => {
        const max = previewRedeem(wallet.shares, vault, wallet)
        if (max === 0n) return
        const desired = 1n + BigInt(Math.floor(at * Number(max - 1n)))
        const quote = previewWithdrawNet(desired, vault, wallet) as { shares: bigint }
        const shares = sharesDeliveringNet(quote.shares, desired, vault, wallet) as bigint
        const paid = previewRedeem(shares, vault, wallet)
        expect(paid - desired).toBeGreaterThanOrEqual(0n)
        expect(paid - desired).toBeLessThanOrEqual(sharePriceCeil(vault) - 1n)
        count(over.ours, paid - desired)
        const quoted = previewRedeem(quote.shares, vault, wallet)
        if (quoted >= desired) count(over.quote, quoted - desired)
      }),
      { numRuns: 5_000, seed: 29 },
    )
    // The closed form's `t = d + 1` and its rounding up: 1–2 units over, more often than not.
    expect(Math.max(...[...over.quote.keys()].map(Number))).toBe(2)
    expect(over.ours.get(0n) ?? 0).toBeGreaterThan(over.quote.get(0n) ?? 0)
  })

  /** A deposit of `amount` into `vault`, the venue keeping `amount − venueLoss` of it (§4.3 step 7). */
  function deposit(vault: VaultTotals, amount: bigint, venueLoss: bigint) {
    const minted = assetsToShares(amount, vault)
    const after = {
      totalAssets: vault.totalAssets + amount - venueLoss,
      totalShares: vault.totalShares + minted,
    }
    return { minted, after }
  }

  const depositCase = fc.record({
    state: states,
    amount: fc.bigInt({ min: 10_000_000n, max: 10n ** 12n }),
    venueLoss: fc.bigInt({ min: 0n, max: 2n }),
    fresh: fc.boolean(),
  })

  it('a deposit adds the amount to the position less 0–2 units, venue rounding of up to 2 units included', () => {
    const seen = new Set<bigint>()
    fc.assert(
      fc.property(depositCase, ({ state: { vault, wallet }, amount, venueLoss, fresh }) => {
        const held = fresh ? 0n : wallet.shares
        const { minted, after } = deposit(vault, amount, venueLoss)
        if (minted === 0n) return // the router reverts ZeroAmount
        const before = sharesToAssets(held, vault)
        const lost = before + amount - sharesToAssets(held + minted, after)
        expect(lost).toBeGreaterThanOrEqual(0n)
        expect(lost).toBeLessThanOrEqual(2n)
        seen.add(lost)
      }),
      { numRuns: 5_000, seed: 29 },
    )
    expect([...seen].sort()).toEqual([0n, 1n, 2n])
  })

  it('depositing and then withdrawing those shares gives back the deposit less 0–2 units, with no fee', () => {
    fc.assert(
      fc.property(depositCase, ({ state: { vault }, amount, venueLoss }) => {
        const { minted, after } = deposit(vault, amount, venueLoss)
        if (minted === 0n) return
        const back = previewRedeem(minted, after, { shares: minted, costBasis: amount })
        expect(amount - back).toBeGreaterThanOrEqual(0n)
        expect(amount - back).toBeLessThanOrEqual(2n)
        // What comes back is at most what went in: no yield, no fee.
        expect(back).toBe(sharesToAssets(minted, after))
      }),
      { numRuns: 5_000, seed: 29 },
    )
  })
})
