import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { VaultValidationError, vaultChains, x402UsdcPrice } from '../../../src/index.js'
import { x402UsdcAssets } from '../../../src/sdk/seller/x402UsdcPrice.js'

const devnetUsdc = '0x5FbDB2315678afecb367f032d93F642f64180aa3'

describe('x402UsdcPrice', () => {
  it('prices in Circle USDC with EIP-3009 metadata on base', () => {
    expect(x402UsdcPrice({ chain: 'base', amount: '0.01' })).toEqual({
      amount: '10000',
      asset: vaultChains.base.addresses.usdc,
      extra: { name: 'USD Coin', version: '2', assetTransferMethod: 'eip3009' },
    })
  })

  it("prices in the vault's test USDC through Permit2 on base-sepolia (it has no EIP-3009)", () => {
    expect(x402UsdcPrice({ chain: 'base-sepolia', amount: 1_500_000n })).toEqual({
      amount: '1500000',
      asset: vaultChains['base-sepolia'].addresses.usdc,
      extra: { assetTransferMethod: 'permit2' },
    })
  })

  it("prices in a configured USDC (the devnet's EIP-3009 token)", () => {
    const asset = {
      address: devnetUsdc.toLowerCase() as `0x${string}`,
      name: 'USD Coin',
      version: '2',
      assetTransferMethod: 'eip3009',
    } as const
    expect(x402UsdcPrice({ chain: 'base-sepolia', amount: '10', asset })).toEqual({
      amount: '10000000',
      asset: devnetUsdc,
      extra: { name: 'USD Coin', version: '2', assetTransferMethod: 'eip3009' },
    })
  })

  it('rejects zero, negative and malformed amounts with INVALID_AMOUNT', () => {
    for (const amount of ['0', '-1', '1e3', '0.0000001', '', ' 1', '0x10', 0n, -5n]) {
      expect(() => x402UsdcPrice({ chain: 'base', amount }), String(amount)).toThrow(
        VaultValidationError,
      )
      try {
        x402UsdcPrice({ chain: 'base', amount })
      } catch (error) {
        expect((error as VaultValidationError).code).toBe('INVALID_AMOUNT')
      }
    }
  })

  it('rejects an unknown chain and an EIP-3009 asset without its domain', () => {
    expect(() => x402UsdcPrice({ chain: 'optimism' as never, amount: '1' })).toThrow(
      /Unknown chain/,
    )
    expect(() =>
      x402UsdcPrice({
        chain: 'base',
        amount: '1',
        asset: { address: devnetUsdc, assetTransferMethod: 'eip3009' },
      }),
    ).toThrow(/name and version/)
    expect(() =>
      x402UsdcPrice({
        chain: 'base',
        amount: '1',
        asset: { address: devnetUsdc, assetTransferMethod: 'ach' as never },
      }),
    ).toThrow(/assetTransferMethod/)
  })

  it('keeps every valid amount exact in base units', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 30n }), (amount) => {
        const price = x402UsdcPrice({ chain: 'base', amount })
        expect(BigInt(price.amount)).toBe(amount)
        expect(price.asset).toBe(x402UsdcAssets.base.address)
        expect(price.extra).toEqual({
          name: 'USD Coin',
          version: '2',
          assetTransferMethod: 'eip3009',
        })
      }),
    )
  })
})
