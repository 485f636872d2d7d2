/**
 * `getLedger`, the SDK action, over a merchant history with a known answer made on a Base Sepolia devnet
 * (x402 through Permit2, a payment in Circle's test USDC beside the vault's, self-payments, sweeps, a
 * month of yield and two withdrawals): every entry with its balance after it, the totals, each token's
 * and the position's reconciliation, the position's history, what `selfPayers` changes, narrow log
 * ranges with their progress, and the parameters it refuses. The CLI's tests read the same action
 * through `x402-vault ledger` on both chains.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import type { Devnet } from '../../src/devnet/startDevnet.js'
import { type LedgerEntry, parseUsdc, type VaultLedger } from '../../src/index.js'
import { type DevnetClients, useDevnet } from '../support/devnet.js'
import { expectVaultError } from '../support/expectVaultError.js'
import {
  type ExpectedEntry,
  type MerchantHistory,
  makeMerchantHistory,
} from '../support/merchantHistory.js'

let devnet: Devnet
let t: DevnetClients
let history: MerchantHistory
useDevnet({ chain: 'base-sepolia' }, async (started, clients) => {
  devnet = started
  t = clients
  history = await makeMerchantHistory(devnet, t)
})

const sum = (values: bigint[]) => values.reduce((total, value) => total + value, 0n)
const wallet = () => devnet.accounts.merchant.address
/** An entry as the history recorded it: what the chain alone cannot be told apart from. */
const described = (entry: ExpectedEntry) => ({
  kind: entry.kind,
  direction: entry.direction,
  token: entry.token.toLowerCase(),
  txHash: entry.txHash,
  counterparty: entry.counterparty.toLowerCase(),
  x402Method: entry.x402Method,
  amount: entry.amount,
  shares: entry.shares,
  fee: entry.fee,
  yieldRealised: entry.yieldRealised,
})

describe('getLedger on the devnet', () => {
  let ledger: VaultLedger
  beforeAll(async () => {
    ledger = await t.readOnly.getLedger({
      wallet: wallet(),
      fromBlock: history.fromBlock,
      toBlock: history.toBlock,
      selfPayers: history.selfPayers,
      positionHistory: true,
    })
  })

  it('lists every movement of the history, in chain order, as it was paid', () => {
    expect(ledger.opening.blockNumber).toBe(history.fromBlock - 1n)
    expect(ledger.closing.blockNumber).toBe(history.toBlock)
    expect(ledger.entries.map(described)).toEqual(history.entries.map(described))
    const order = ledger.entries.map((entry) => [entry.blockNumber, entry.logIndex] as const)
    const sorted = [...order].sort(([a, i], [b, j]) => (a === b ? i - j : a < b ? -1 : 1))
    expect(order).toEqual(sorted)
    for (const entry of ledger.entries) {
      expect(entry.timestamp).toBeGreaterThanOrEqual(ledger.opening.timestamp)
      expect(entry.timestamp).toBeLessThanOrEqual(ledger.closing.timestamp)
    }
  })

  it('runs each token’s balance from the opening balance to the closing one, entry by entry', () => {
    expect(ledger.tokens.map((token) => token.token.toLowerCase())).toEqual(
      [devnet.addresses.usdc, devnet.tokens.circleTestUsdc as string].map((a) => a.toLowerCase()),
    )
    for (const token of ledger.tokens) {
      let balance = token.openingBalance
      for (const entry of ledger.entries.filter((e) => e.token === token.token)) {
        balance += entry.direction === 'in' ? entry.amount : -entry.amount
        expect(entry.balanceAfter).toBe(balance)
      }
      expect(balance).toBe(token.closingBalance)
      expect(token.balanced).toBe(true)
    }
    expect(ledger.reconciled).toBe(true)
  })

  it('totals the vault’s USDC by kind, the merchant’s own payments apart from revenue', () => {
    const usdc = devnet.addresses.usdc
    const of = (kind: LedgerEntry['kind'], direction?: 'in' | 'out') =>
      sum(
        history.entries
          .filter((e) => e.kind === kind && e.token === usdc)
          .filter((e) => direction === undefined || e.direction === direction)
          .map((e) => e.amount),
      )
    const fees = sum(history.entries.map((e) => e.fee))
    expect(ledger.totals).toEqual({
      receivedX402: of('x402'),
      receivedSelf: parseUsdc('0.6'),
      sentSelf: parseUsdc('0.3'),
      receivedOther: of('transfer-in'),
      deposited: of('sweep'),
      withdrawn: of('withdrawal'),
      feesPaid: fees,
      channelDeposits: 0n,
      channelRefunds: 0n,
      sentOther: of('transfer-out'),
      // Everything was withdrawn: the yield is what came back beyond what went in, fees included.
      currentValue: 0n,
      yieldEarned: of('withdrawal') + fees - of('sweep'),
    })
    expect(of('self-payment', 'in')).toBe(parseUsdc('0.6'))
  })

  it('reconciles the position: the shares minted and burnt, and the value’s balancing figure', () => {
    const sweeps = history.entries.filter((e) => e.kind === 'sweep')
    const withdrawals = history.entries.filter((e) => e.kind === 'withdrawal')
    expect(ledger.position).toMatchObject({
      openingShares: 0n,
      closingShares: 0n,
      openingValue: 0n,
      closingValue: 0n,
      sharesMinted: sum(sweeps.map((e) => e.shares)),
      sharesBurned: sum(withdrawals.map((e) => e.shares)),
      feesPaid: sum(withdrawals.map((e) => e.fee)),
      yieldRealised: sum(withdrawals.map((e) => e.yieldRealised)),
      balanced: true,
    })
    expect(ledger.position.sharesMinted).toBe(ledger.position.sharesBurned)
    expect(ledger.position.yieldEarned).toBeGreaterThan(0n)
  })

  it('positionHistory: the position at the opening, after each sweep and withdrawal, and at the closing', () => {
    const moves = [
      ...new Set(
        history.entries
          .filter((e) => e.kind === 'sweep' || e.kind === 'withdrawal')
          .map((e) => ledger.entries.find((entry) => entry.txHash === e.txHash)?.blockNumber),
      ),
    ].filter((block) => block !== history.toBlock)
    const points = ledger.positionHistory
    expect(points.map((point) => point.blockNumber)).toEqual([
      history.fromBlock - 1n,
      ...moves,
      history.toBlock,
    ])
    // After the first sweep the position holds exactly the shares it minted.
    const firstSweep = history.entries.find((e) => e.kind === 'sweep')
    expect(points[1]?.shares).toBe(firstSweep?.shares)
    expect(points.at(-1)).toMatchObject({ shares: 0n, value: 0n })
  })

  it('without selfPayers, the other wallet’s payment counts as revenue; the wallet and its operator still do not', async () => {
    const plain = await t.readOnly.getLedger({
      wallet: wallet(),
      fromBlock: history.fromBlock,
      toBlock: history.toBlock,
    })
    const [own] = history.selfPayers
    const fromOwn = plain.entries.filter((e) => e.counterparty === own)
    expect(fromOwn.map((e) => e.kind)).toEqual(['x402'])
    expect(plain.totals.receivedX402).toBe(ledger.totals.receivedX402 + parseUsdc('0.1'))
    expect(plain.totals.receivedSelf).toBe(parseUsdc('0.5'))
    expect(plain.reconciled).toBe(true)
    expect(plain.positionHistory).toEqual([])
  })

  it('reads in ranges of 3 blocks when asked, lists the same, and reports its progress to the last block', async () => {
    const progress: bigint[] = []
    const narrow = await t.readOnly.getLedger({
      wallet: wallet(),
      fromBlock: history.fromBlock,
      toBlock: history.toBlock,
      selfPayers: history.selfPayers,
      maxBlockRange: 3n,
      onProgress: ({ scannedBlocks, totalBlocks }) => {
        expect(totalBlocks).toBe(history.toBlock - history.fromBlock + 1n)
        progress.push(scannedBlocks)
      },
    })
    expect(narrow.entries).toEqual(ledger.entries)
    expect(narrow.totals).toEqual(ledger.totals)
    expect(progress.length).toBe(Math.ceil(Number(history.toBlock - history.fromBlock + 1n) / 3))
    expect(progress).toEqual([...progress].sort((a, b) => (a < b ? -1 : 1)))
    expect(progress.at(-1)).toBe(history.toBlock - history.fromBlock + 1n)
  })

  it('one block with nothing of the wallet’s: no entries, the balances unchanged, reconciled', async () => {
    const quiet = await t.readOnly.getLedger({
      wallet: wallet(),
      fromBlock: history.fromBlock - 1n,
      toBlock: history.fromBlock - 1n,
    })
    expect(quiet.entries).toEqual([])
    for (const token of quiet.tokens) expect(token.closingBalance).toBe(token.openingBalance)
    expect(quiet.reconciled).toBe(true)
  })

  it('refuses what it cannot read, before any request: the blocks and the wallet', async () => {
    await expectVaultError(
      t.readOnly.getLedger({ wallet: wallet(), fromBlock: 0n }),
      'INVALID_ARGUMENT',
    )
    const backwards = await expectVaultError(
      t.readOnly.getLedger({ wallet: wallet(), fromBlock: 10n, toBlock: 9n }),
      'INVALID_ARGUMENT',
    )
    expect(backwards.message).toBe('toBlock (9) is before fromBlock (10).')
    await expectVaultError(
      t.readOnly.getLedger({ wallet: wallet(), fromBlock: 1 as unknown as bigint }),
      'INVALID_ARGUMENT',
    )
    await expectVaultError(
      t.readOnly.getLedger({ wallet: '0x1234' as `0x${string}`, fromBlock: 1n }),
      'INVALID_ADDRESS',
    )
    await expectVaultError(
      t.readOnly.getLedger({
        wallet: wallet(),
        fromBlock: 1n,
        selfPayers: ['not an address' as `0x${string}`],
      }),
      'INVALID_ADDRESS',
    )
  })
})
