/**
 * The ledger's books, without a chain: `reconcileLedger` runs each token's balance through its entries,
 * totals them by kind, and says whether every token and the position reconcile. A missing or extra
 * entry is what an incomplete scan would leave: the books must say they do not balance.
 */
import type { Address, Hash } from 'viem'
import { describe, expect, it } from 'vitest'
import { parseUsdc } from '../../src/index.js'
import { reconcileLedger } from '../../src/sdk/ledger/reconcile.js'
import type { Balances, LedgerEntry } from '../../src/sdk/ledger/types.js'

const usdc = '0x00000000000000000000000000000000000000a1' as Address
const testUsdc = '0x00000000000000000000000000000000000000a2' as Address
const router = '0x00000000000000000000000000000000000000b1' as Address
const buyer = '0x00000000000000000000000000000000000000c1' as Address

let block = 10n
function entry(
  fields: Pick<LedgerEntry, 'kind' | 'direction' | 'amount'> & Partial<LedgerEntry>,
): Omit<LedgerEntry, 'balanceAfter'> {
  block += 1n
  return {
    blockNumber: block,
    timestamp: block * 2n,
    txHash: `0x${block.toString(16).padStart(64, '0')}` as Hash,
    logIndex: 0,
    token: usdc,
    counterparty: fields.kind === 'sweep' || fields.kind === 'withdrawal' ? router : buyer,
    x402Method: fields.kind === 'x402' ? 'eip3009' : null,
    x402Scheme: fields.kind === 'x402' ? 'exact' : null,
    authorizedAmount: fields.kind === 'x402' ? fields.amount : null,
    vouchers: null,
    shares: 0n,
    fee: 0n,
    yieldRealised: 0n,
    ...fields,
  }
}

function balances(
  blockNumber: bigint,
  [vault, test]: [bigint, bigint],
  position: Balances['position'],
): Balances {
  return {
    blockNumber,
    timestamp: blockNumber * 2n,
    balances: [vault, test],
    symbols: ['USDC', 'USDC'],
    position,
  }
}

const u = parseUsdc
const entries = [
  entry({ kind: 'x402', direction: 'in', amount: u('2') }),
  entry({ kind: 'x402', direction: 'in', amount: u('0.75'), token: testUsdc }),
  entry({ kind: 'transfer-in', direction: 'in', amount: u('5') }),
  entry({ kind: 'self-payment', direction: 'in', amount: u('0.3') }),
  entry({ kind: 'self-payment', direction: 'out', amount: u('0.3') }),
  entry({ kind: 'sweep', direction: 'out', amount: u('6'), shares: 5_000_000n }),
  entry({
    kind: 'withdrawal',
    direction: 'in',
    amount: u('3'),
    shares: 2_400_000n,
    fee: 10_000n,
    yieldRealised: 100_000n,
  }),
  entry({ kind: 'transfer-out', direction: 'out', amount: u('1') }),
]
// 10 + 2 + 5 + 0.3 − 0.3 − 6 + 3 − 1 = 13; the test token 1 + 0.75.
const opening = balances(10n, [u('10'), u('1')], { shares: 0n, value: 0n, costBasis: 0n })
const closing = balances(block, [u('13'), u('1.75')], {
  shares: 2_600_000n,
  value: u('3.2'),
  costBasis: u('3.1'),
})

describe('reconcileLedger', () => {
  it('runs each token’s balance through its entries and balances every token and the position', () => {
    const books = reconcileLedger({ tokens: [usdc, testUsdc], opening, closing, entries })
    expect(books.entries.map((e) => e.balanceAfter)).toEqual([
      u('12'),
      u('1.75'),
      u('17'),
      u('17.3'),
      u('17'),
      u('11'),
      u('14'),
      u('13'),
    ])
    expect(books.tokens.map((t) => [t.token, t.vaultUsdc, t.balanced])).toEqual([
      [usdc, true, true],
      [testUsdc, false, true],
    ])
    expect(books.tokens[1]).toMatchObject({ receivedX402: u('0.75'), deposited: 0n })
    expect(books.totals).toEqual({
      receivedX402: u('2'),
      receivedSelf: u('0.3'),
      sentSelf: u('0.3'),
      receivedOther: u('5'),
      deposited: u('6'),
      withdrawn: u('3'),
      feesPaid: 10_000n,
      channelDeposits: 0n,
      channelRefunds: 0n,
      sentOther: u('1'),
      currentValue: u('3.2'),
      // 3.2 now + 3 taken out + 0.01 in fees − 6 put in.
      yieldEarned: u('0.21'),
    })
    expect(books.position).toMatchObject({
      sharesMinted: 5_000_000n,
      sharesBurned: 2_400_000n,
      closingShares: 2_600_000n,
      closingCostBasis: u('3.1'),
      yieldRealised: 100_000n,
      balanced: true,
    })
    expect(books.reconciled).toBe(true)
  })

  it('an entry the scan missed leaves its token unbalanced, and the ledger not reconciled', () => {
    const missing = entries.filter((e) => e.kind !== 'transfer-out')
    const books = reconcileLedger({ tokens: [usdc, testUsdc], opening, closing, entries: missing })
    expect(books.tokens.map((t) => t.balanced)).toEqual([false, true])
    expect(books.reconciled).toBe(false)
  })

  it('a batch settle is revenue; a channel deposit goes out and its refund comes back, each in its own total', () => {
    const channelEntries = [
      ...entries,
      entry({ kind: 'channel-deposit', direction: 'out', amount: u('0.01') }),
      entry({
        kind: 'x402',
        direction: 'in',
        amount: u('0.005'),
        x402Method: null,
        x402Scheme: 'batch-settlement',
        authorizedAmount: null,
        vouchers: 3,
      }),
      entry({ kind: 'channel-refund', direction: 'in', amount: u('0.004') }),
    ]
    // 13 − 0.01 + 0.005 + 0.004 = 12.999
    const after = { ...closing, balances: [u('12.999'), u('1.75')] }
    const books = reconcileLedger({
      tokens: [usdc, testUsdc],
      opening,
      closing: after,
      entries: channelEntries,
    })
    expect(books.entries.slice(-3).map((e) => e.balanceAfter)).toEqual([
      u('12.99'),
      u('12.995'),
      u('12.999'),
    ])
    expect(books.totals).toMatchObject({
      receivedX402: u('2.005'),
      channelDeposits: u('0.01'),
      channelRefunds: u('0.004'),
      sentOther: u('1'),
    })
    expect(books.reconciled).toBe(true)
    // Without the refund row the books do not balance.
    const missing = reconcileLedger({
      tokens: [usdc, testUsdc],
      opening,
      closing: after,
      entries: channelEntries.filter((e) => e.kind !== 'channel-refund'),
    })
    expect(missing.reconciled).toBe(false)
  })

  it('shares the position cannot account for leave it unbalanced', () => {
    const extraShares = { ...closing, position: { ...closing.position, shares: 2_600_001n } }
    const books = reconcileLedger({
      tokens: [usdc, testUsdc],
      opening,
      closing: extraShares,
      entries,
    })
    expect(books.tokens.every((t) => t.balanced)).toBe(true)
    expect(books.position.balanced).toBe(false)
    expect(books.reconciled).toBe(false)
  })
})
