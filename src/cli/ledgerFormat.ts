import {
  formatUsdc,
  type LedgerEntry,
  type LedgerEntryKind,
  type LedgerTokenSummary,
  type VaultLedger,
} from '../index.js'
import { usdcJson } from './format.js'

/** A block time as ISO-8601 in UTC, to the second: `2026-01-31T12:00:00Z`. */
export function isoTime(seconds: bigint): string {
  return new Date(Number(seconds) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z')
}

/** How each kind of entry is named in the table, the CSV and the page. */
export const kindLabels: Record<LedgerEntryKind, string> = {
  x402: 'x402 settlement',
  'transfer-in': 'transfer in',
  sweep: 'sweep',
  withdrawal: 'withdrawal',
  'transfer-out': 'transfer out',
}

/** The token's name in a listing: its symbol, with the vault's USDC marked apart from any other USDC. */
function tokenName(ledger: VaultLedger, token: string): string {
  const summary = ledger.tokens.find((t) => t.token === token)
  if (!summary) return token
  return summary.vaultUsdc ? summary.symbol || 'USDC' : `${summary.symbol || 'token'} ${token}`
}

/** An entry's amount from the wallet's side: positive in, negative out. */
export function signedAmount(entry: LedgerEntry): bigint {
  return entry.direction === 'in' ? entry.amount : -entry.amount
}

/** An entry's share change from the wallet's side: minted by a sweep, negative when burnt. */
export function signedShares(entry: LedgerEntry): bigint {
  return entry.kind === 'withdrawal' ? -entry.shares : entry.shares
}

/**
 * The ledger as JSON: amounts as decimal USDC strings with their base units beside them, block numbers
 * as decimal strings, times as ISO-8601.
 */
export function ledgerJson(ledger: VaultLedger): object {
  const amounts = <T extends object>(record: T) =>
    Object.fromEntries(
      Object.entries(record).map(([key, value]) => [
        key,
        typeof value === 'bigint' ? usdcJson(value) : value,
      ]),
    )
  return {
    chain: ledger.chain,
    chainId: ledger.chainId,
    wallet: ledger.wallet,
    usdc: ledger.usdc,
    opening: {
      blockNumber: ledger.opening.blockNumber.toString(),
      time: isoTime(ledger.opening.timestamp),
    },
    closing: {
      blockNumber: ledger.closing.blockNumber.toString(),
      time: isoTime(ledger.closing.timestamp),
    },
    reconciled: ledger.reconciled,
    totals: amounts(ledger.totals),
    tokens: ledger.tokens.map((token) => amounts(token)),
    position: amounts(ledger.position),
    entries: ledger.entries.map((entry) => ({
      time: isoTime(entry.timestamp),
      blockNumber: entry.blockNumber.toString(),
      txHash: entry.txHash,
      logIndex: entry.logIndex,
      kind: entry.kind,
      direction: entry.direction,
      x402Method: entry.x402Method,
      token: entry.token,
      counterparty: entry.counterparty,
      amount: usdcJson(entry.amount),
      fee: usdcJson(entry.fee),
      yieldRealised: usdcJson(entry.yieldRealised),
      shares: usdcJson(entry.shares),
      balanceAfter: usdcJson(entry.balanceAfter),
    })),
    positionHistory: ledger.positionHistory.map((point) => ({
      time: isoTime(point.timestamp),
      blockNumber: point.blockNumber.toString(),
      shares: usdcJson(point.shares),
      value: usdcJson(point.value),
    })),
  }
}

/** The CSV's columns, in order. */
export const csvColumns = [
  'time',
  'block',
  'transaction',
  'log_index',
  'type',
  'x402_method',
  'token',
  'token_address',
  'counterparty',
  'amount',
  'fee',
  'yield_realised',
  'shares',
  'balance_after',
] as const

/**
 * The entries as CSV (RFC 4180) for a spreadsheet: one header row, then one row per entry, oldest first.
 * Times are ISO-8601 in UTC; amounts are decimal strings in the token's units, signed from the wallet's
 * side (money in positive, out negative), so the `amount` column sums to the change in balance.
 */
export function ledgerCsv(ledger: VaultLedger): string {
  const rows = ledger.entries.map((entry) => [
    isoTime(entry.timestamp),
    entry.blockNumber.toString(),
    entry.txHash,
    String(entry.logIndex),
    kindLabels[entry.kind],
    entry.x402Method ?? '',
    ledger.tokens.find((t) => t.token === entry.token)?.symbol ?? '',
    entry.token,
    entry.counterparty,
    formatUsdc(signedAmount(entry)),
    formatUsdc(entry.fee),
    formatUsdc(entry.yieldRealised),
    formatUsdc(signedShares(entry)),
    formatUsdc(entry.balanceAfter),
  ])
  return [[...csvColumns], ...rows].map((row) => row.map(csvField).join(',')).join('\r\n')
}

/** One CSV field, quoted when it must be; a leading formula character is defused for spreadsheets. */
function csvField(value: string): string {
  const safe = /^[=+@\t\r]/.test(value) ? `'${value}` : value
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe
}

/** The ledger as text for a terminal: the entries, the totals and the reconciliation. */
export function ledgerText(ledger: VaultLedger): string {
  const usdc = (value: bigint) => formatUsdc(value)
  const signed = (value: bigint) => (value > 0n ? `+${usdc(value)}` : usdc(value))
  const short = (address: string) => `${address.slice(0, 6)}…${address.slice(-4)}`
  const lines = [
    `x402-vault ledger: ${ledger.wallet} on ${ledger.chain}`,
    `  blocks ${ledger.opening.blockNumber + 1n}–${ledger.closing.blockNumber} (${isoTime(ledger.opening.timestamp)} to ${isoTime(ledger.closing.timestamp)})`,
    '',
  ]
  if (ledger.entries.length === 0) {
    lines.push('  no payments, sweeps, withdrawals or transfers in these blocks', '')
  } else {
    const table = ledger.entries.map((entry) => [
      isoTime(entry.timestamp),
      entry.kind === 'x402' ? `x402 (${entry.x402Method})` : kindLabels[entry.kind],
      signed(signedAmount(entry)),
      entry.token === ledger.usdc ? usdc(entry.balanceAfter) : '',
      entry.token === ledger.usdc ? '' : tokenName(ledger, entry.token),
      entry.kind === 'withdrawal' ? `fee ${usdc(entry.fee)}` : '',
      short(entry.counterparty),
      entry.txHash,
    ])
    const header = ['time', 'type', 'amount', 'balance', 'token', 'fee', 'from/to', 'transaction']
    const widths = header.map((title, i) =>
      Math.max(title.length, ...table.map((row) => (row[i] ?? '').length)),
    )
    const numeric = new Set([2, 3])
    const render = (row: string[]) =>
      `  ${row
        .map((cell, i) =>
          numeric.has(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0),
        )
        .join('  ')
        .trimEnd()}`
    lines.push(render(header), ...table.map(render), '')
  }
  const { totals, position } = ledger
  const vaultToken = ledger.tokens[0] as LedgerTokenSummary
  const rows: [string, bigint][] = [
    ['received through x402', totals.receivedX402],
    ['received otherwise', totals.receivedOther],
    ['deposited (sweeps)', totals.deposited],
    ['withdrawn', totals.withdrawn],
    ['fees paid', totals.feesPaid],
    ['sent otherwise', totals.sentOther],
    ['position value now', totals.positionValue],
    ['yield earned', totals.yieldEarned],
  ]
  const width = Math.max(...rows.map(([label]) => label.length))
  lines.push(
    `Totals (${vaultToken.symbol || 'USDC'}, the vault's)`,
    ...rows.map(([label, value]) => `  ${label.padEnd(width)}  ${usdc(value)}`),
    '',
    'Reconciliation (opening + in − out = closing)',
    `  wallet     ${usdc(vaultToken.openingBalance)} + ${usdc(vaultToken.receivedX402 + vaultToken.receivedOther + vaultToken.withdrawn)} − ${usdc(vaultToken.deposited + vaultToken.sentOther)} = ${usdc(vaultToken.closingBalance)}  ${mark(vaultToken.balanced)}`,
    `  position   ${usdc(position.openingValue)} + ${usdc(position.deposited)} deposited + ${usdc(position.yieldEarned)} yield − ${usdc(position.withdrawn)} withdrawn − ${usdc(position.feesPaid)} fees = ${usdc(position.closingValue)}`,
    `  shares     ${usdc(position.openingShares)} + ${usdc(position.sharesMinted)} − ${usdc(position.sharesBurnt)} = ${usdc(position.closingShares)}  ${mark(position.balanced)}`,
  )
  for (const token of ledger.tokens.slice(1)) {
    lines.push(
      '',
      `Other token: ${tokenName(ledger, token.token)}`,
      `  received through x402  ${usdc(token.receivedX402)}`,
      `  received otherwise     ${usdc(token.receivedOther)}`,
      `  sent                   ${usdc(token.sentOther)}`,
      `  balance                ${usdc(token.openingBalance)} + ${usdc(token.receivedX402 + token.receivedOther)} − ${usdc(token.sentOther)} = ${usdc(token.closingBalance)}  ${mark(token.balanced)}`,
    )
  }
  return `${lines.join('\n')}\n`
}

function mark(balanced: boolean): string {
  return balanced ? 'reconciled' : 'DOES NOT RECONCILE'
}
