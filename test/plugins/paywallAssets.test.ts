/**
 * The second asset a paywall accepts so that a stock x402 buyer can pay: x402's default USDC where it
 * is not the vault's, unless the seller declines it. (Reading the vault's USDC is the SDK's
 * `readX402UsdcAsset`, tested on the devnet.)
 */
import { describe, expect, it } from 'vitest'
import { vaultChains, type X402UsdcAsset } from '../../src/index.js'
import { stockBuyerAsset } from '../../src/plugins/paywallAssets.js'

const circleTestUsdc = vaultChains['base-sepolia'].x402DefaultUsdc as X402UsdcAsset

describe('stockBuyerAsset', () => {
  it("is x402's default USDC where it is not the vault's, unless declined", () => {
    const vaultUsdc = vaultChains['base-sepolia'].addresses.usdc
    expect(stockBuyerAsset('base-sepolia', vaultUsdc, undefined)).toEqual(circleTestUsdc)
    expect(stockBuyerAsset('base-sepolia', vaultUsdc, true)).toEqual(circleTestUsdc)
    expect(stockBuyerAsset('base-sepolia', vaultUsdc, false)).toBeUndefined()
    // A private deployment whose USDC is that token, however the address is written.
    const lower = circleTestUsdc.address.toLowerCase() as `0x${string}`
    expect(stockBuyerAsset('base-sepolia', lower, undefined)).toBeUndefined()
    // On base the vault's USDC is x402's default.
    expect(stockBuyerAsset('base', vaultChains.base.addresses.usdc, true)).toBeUndefined()
  })
})
