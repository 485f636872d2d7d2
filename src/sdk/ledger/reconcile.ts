import type { Address } from 'viem'
import type {
  Balances,
  LedgerEntry,
  LedgerEntryKind,
  LedgerPosition,
  LedgerTokenSummary,
  VaultLedger,
} from './types.js'

const sum = (values: bigint[]) => values.reduce((total, value) => total + value, 0n)

/**
 * Balances the books: each entry's balance after it, each token's and the position's reconciliation
 * (opening plus everything in minus everything out is the closing balance; the position's shares the
 * same, with the yield earned as the balancing figure of its value), and the totals. Reads nothing.
 *
 * @param books - The tokens (the vault's USDC first), the balances at the opening and closing blocks, and
 *   the entries between them, oldest first.
 * @returns The ledger's entries, totals, token summaries, position and whether all reconcile.
 */
export function reconcileLedger({
  tokens,
  opening,
  closing,
  entries: drafts,
}: {
  tokens: Address[]
  opening: Balances
  closing: Balances
  entries: Omit<LedgerEntry, 'balanceAfter'>[]
}): Pick<VaultLedger, 'entries' | 'totals' | 'tokens' | 'position' | 'reconciled'> {
  const [usdc] = tokens as [Address]
  const running = new Map(tokens.map((token, i) => [token, opening.balances[i] ?? 0n]))
  const entries: LedgerEntry[] = drafts.map((draft) => {
    const before = running.get(draft.token) ?? 0n
    const balanceAfter = draft.direction === 'in' ? before + draft.amount : before - draft.amount
    running.set(draft.token, balanceAfter)
    return { ...draft, balanceAfter }
  })

  const tokenSummaries = tokens.map((token, i): LedgerTokenSummary => {
    const of = (kind: LedgerEntryKind, direction?: 'in' | 'out') =>
      sum(
        entries
          .filter(
            (e) =>
              e.kind === kind &&
              e.token === token &&
              (direction === undefined || e.direction === direction),
          )
          .map((e) => e.amount),
      )
    const summary = {
      token,
      symbol: closing.symbols[i] ?? '',
      vaultUsdc: token === usdc,
      openingBalance: opening.balances[i] ?? 0n,
      closingBalance: closing.balances[i] ?? 0n,
      receivedX402: of('x402'),
      receivedSelf: of('self-payment', 'in'),
      receivedOther: of('transfer-in'),
      deposited: of('sweep'),
      withdrawn: of('withdrawal'),
      sentSelf: of('self-payment', 'out'),
      channelDeposits: of('channel-deposit'),
      channelRefunds: of('channel-refund'),
      sentOther: of('transfer-out'),
    }
    const expected =
      summary.openingBalance +
      summary.receivedX402 +
      summary.receivedSelf +
      summary.receivedOther +
      summary.withdrawn +
      summary.channelRefunds -
      summary.deposited -
      summary.channelDeposits -
      summary.sentSelf -
      summary.sentOther
    return { ...summary, balanced: expected === summary.closingBalance }
  })
  const vaultToken = tokenSummaries[0] as LedgerTokenSummary
  const withdrawals = entries.filter((e) => e.kind === 'withdrawal')
  const feesPaid = sum(withdrawals.map((e) => e.fee))
  const sharesMinted = sum(entries.filter((e) => e.kind === 'sweep').map((e) => e.shares))
  const sharesBurned = sum(withdrawals.map((e) => e.shares))
  const yieldEarned =
    closing.position.value +
    vaultToken.withdrawn +
    feesPaid -
    vaultToken.deposited -
    opening.position.value
  const position: LedgerPosition = {
    openingValue: opening.position.value,
    closingValue: closing.position.value,
    openingShares: opening.position.shares,
    closingShares: closing.position.shares,
    sharesMinted,
    sharesBurned,
    closingCostBasis: closing.position.costBasis,
    deposited: vaultToken.deposited,
    withdrawn: vaultToken.withdrawn,
    feesPaid,
    yieldEarned,
    yieldRealised: sum(withdrawals.map((e) => e.yieldRealised)),
    balanced: opening.position.shares + sharesMinted - sharesBurned === closing.position.shares,
  }
  return {
    entries,
    totals: {
      receivedX402: vaultToken.receivedX402,
      receivedSelf: vaultToken.receivedSelf,
      sentSelf: vaultToken.sentSelf,
      receivedOther: vaultToken.receivedOther,
      deposited: vaultToken.deposited,
      withdrawn: vaultToken.withdrawn,
      feesPaid,
      channelDeposits: vaultToken.channelDeposits,
      channelRefunds: vaultToken.channelRefunds,
      sentOther: vaultToken.sentOther,
      currentValue: closing.position.value,
      yieldEarned,
    },
    tokens: tokenSummaries,
    position,
    reconciled: position.balanced && tokenSummaries.every((t) => t.balanced),
  }
}
