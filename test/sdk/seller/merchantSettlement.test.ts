import { describe, expect, it } from 'vitest'
import { type SettlementHookContext, vaultChains } from '../../../src/index.js'
import { networkOf } from '../../../src/sdk/chains.js'
import { merchantSettlementOf } from '../../../src/sdk/seller/merchantSettlement.js'

const vault = { network: networkOf('base'), addresses: vaultChains.base.addresses }
const merchant = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'
const hash = `0x${'ab'.repeat(32)}`

function settlement(
  requirements: Partial<SettlementHookContext['requirements']> = {},
  result: Partial<SettlementHookContext['result']> = {},
): SettlementHookContext {
  return {
    requirements: {
      scheme: 'exact',
      network: 'eip155:8453',
      asset: vault.addresses.usdc.toLowerCase(),
      amount: '10000',
      payTo: merchant.toLowerCase(),
      ...requirements,
    },
    result: { success: true, transaction: hash, network: 'eip155:8453', ...result },
  }
}

describe('merchantSettlementOf', () => {
  it('accepts an exact settlement that paid the merchant in the vault USDC (case-insensitive)', () => {
    expect(merchantSettlementOf(vault, merchant, settlement())).toEqual({
      txHash: hash,
      amount: 10_000n,
      payer: undefined,
      scheme: 'exact',
    })
  })

  it('takes the settled amount of an upto settlement', () => {
    const context = settlement({ scheme: 'upto', amount: '500' }, { amount: '321' })
    expect(merchantSettlementOf(vault, merchant, context)).toMatchObject({
      amount: 321n,
      scheme: 'upto',
    })
  })

  it('takes a batch-settlement settle, the escrow paying the merchant what was claimed', () => {
    const context = {
      ...settlement({ scheme: 'batch-settlement', amount: '5000' }, { amount: '5000' }),
      paymentPayload: { payload: { type: 'settle' } },
    }
    expect(merchantSettlementOf(vault, merchant, context)).toEqual({
      txHash: hash,
      amount: 5_000n,
      payer: undefined,
      scheme: 'batch-settlement',
    })
  })

  it.each(['deposit', 'voucher', 'refund', 'claim'])(
    'ignores a batch-settlement %s: it moves the buyer’s money into or out of the escrow, or nothing',
    (type) => {
      const context = {
        ...settlement({ scheme: 'batch-settlement' }),
        paymentPayload: { payload: { type } },
      }
      expect(merchantSettlementOf(vault, merchant, context)).toEqual({ ignored: 'other-scheme' })
    },
  )

  it.each([
    ['not-successful', settlement({}, { success: false })],
    ['no-transaction', settlement({ scheme: 'batch-settlement' }, { transaction: '' })],
    ['no-transaction', settlement({}, { transaction: '0x1234' })],
    ['other-scheme', settlement({ scheme: 'batch-settlement' })],
    ['other-payee', settlement({ payTo: '0x0000000000000000000000000000000000000001' })],
    ['other-network', settlement({ network: 'eip155:84532' })],
    ['other-asset', settlement({ asset: vaultChains['base-sepolia'].addresses.usdc })],
  ] as const)('ignores a settlement: %s', (reason, context) => {
    expect(merchantSettlementOf(vault, merchant, context)).toEqual({ ignored: reason })
  })
})
