import { describe, expect, it } from 'vitest'
import { VaultPreconditionError } from '../../src/index.js'
import { previewRedeem, previewWithdrawNet } from '../../src/sdk/internal/shareMath.js'
import { sharesForAmount } from '../../src/sdk/internal/withdrawPreflight.js'

/**
 * A vault where the live `previewWithdrawNet` quotes `W − 1` shares for the whole position, which nets
 * 1 base unit short (the fee on the yield is rounded up, the assets of the shares down): found by searching the model, kept here as a fixed case.
 */
const vault = { totalAssets: 101_000_007n, totalShares: 100_000_007n }
const wallet = { shares: 33_333_335n, costBasis: 33_333_335n }
const state = { vault, wallet, feeBps: 1_000n }

describe('the shares a withdrawal by amount burns (planWithdraw, withdraw)', () => {
  it('takes every share when the quote for everything is W − 1, 1 unit short', () => {
    const everything = previewRedeem(wallet.shares, vault, wallet)
    const quote = previewWithdrawNet(everything, vault, wallet)
    expect(quote).toEqual({ shares: wallet.shares - 1n })
    expect(previewRedeem(wallet.shares - 1n, vault, wallet)).toBe(everything - 1n)

    const shares = sharesForAmount(wallet.shares - 1n, everything, state)
    expect(shares).toBe(wallet.shares)
    expect(previewRedeem(shares, vault, wallet)).toBeGreaterThanOrEqual(everything)
  })

  it('burns one share fewer than a quote that pays a unit over, and keeps a quote that pays exactly', () => {
    // The closed form aims at amount + 1: here its quote pays 10.000001 USDC for 10.
    const amount = 10_000_000n
    const quote = previewWithdrawNet(amount, vault, wallet) as { shares: bigint }
    expect(previewRedeem(quote.shares, vault, wallet)).toBe(amount + 1n)
    const shares = sharesForAmount(quote.shares, amount, state)
    expect(shares).toBe(quote.shares - 1n)
    expect(previewRedeem(shares, vault, wallet)).toBe(amount)

    const exact = 12_345_678n
    const exactQuote = previewWithdrawNet(exact, vault, wallet) as { shares: bigint }
    expect(previewRedeem(exactQuote.shares, vault, wallet)).toBe(exact)
    expect(sharesForAmount(exactQuote.shares, exact, state)).toBe(exactQuote.shares)
  })

  it('refuses, in USDC, an amount that even every share does not pay', () => {
    const everything = previewRedeem(wallet.shares, vault, wallet)
    let error: unknown
    try {
      sharesForAmount(wallet.shares, everything + 1n, state)
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(VaultPreconditionError)
    expect(error).toMatchObject({ code: 'UNSERVICEABLE_AMOUNT' })
    expect((error as Error).message).toContain('at most 33.630363 USDC')
  })
})
