import type { Address } from 'viem'
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
  'self-payment': 'self-payment',
  'transfer-in': 'transfer in',
  sweep: 'sweep',
  withdrawal: 'withdrawal',
  'channel-deposit': 'channel deposit',
  'channel-refund': 'channel refund',
  'transfer-out': 'transfer out',
}

/**
 * An entry's type as the table and the page show it: its kind, and for an x402 settlement its scheme,
 * how it was paid, the most an `upto` buyer authorized, the vouchers a batch settle paid:
 * `x402 settlement (upto, permit2, of at most 0.1)`, `x402 settlement (batch-settlement, 5 vouchers)`.
 */
export function entryType(entry: LedgerEntry): string {
  const details = [
    entry.x402Scheme,
    entry.x402Method,
    entry.x402Scheme === 'upto' && entry.authorizedAmount !== null
      ? `of at most ${formatUsdc(entry.authorizedAmount)}`
      : null,
    entry.vouchers === null ? null : `${entry.vouchers} voucher${entry.vouchers === 1 ? '' : 's'}`,
  ].filter((detail) => detail !== null)
  return details.length > 0
    ? `${kindLabels[entry.kind]} (${details.join(', ')})`
    : kindLabels[entry.kind]
}

/** An address shortened for reading, its first 6 and last 4 characters: `0x7099…79C8`. */
export function shortAddress(address: string): string {
  return `${address.slice(0, 6)}…${address.slice(-4)}`
}

/**
 * Each token's name in the ledger's listings (the CSV's `token` column, the text, the page): its symbol
 * where no other token of the ledger has the same one, else the symbol with the short address, so that
 * grouping by name never adds two assets together (`USDC (0x036C…CF7e)`).
 */
export function tokenLabels(ledger: VaultLedger): Map<Address, string> {
  const symbol = (t: LedgerTokenSummary) => t.symbol || 'token'
  const count = (name: string) => ledger.tokens.filter((t) => symbol(t) === name).length
  return new Map(
    ledger.tokens.map((t) => [
      t.token,
      count(symbol(t)) === 1 ? symbol(t) : `${symbol(t)} (${shortAddress(t.token)})`,
    ]),
  )
}

/** An entry's amount from the wallet's side: positive in, negative out. */
export function signedAmount(entry: LedgerEntry): bigint {
  return entry.direction === 'in' ? entry.amount : -entry.amount
}

/** The shares' base units as the commands' JSON gives every integer: a decimal string. */
const sharesJson = (value: bigint) => value.toString()
/** The ledger's fields that count shares, not USDC. */
const shareFields = new Set(['openingShares', 'closingShares', 'sharesMinted', 'sharesBurned'])

/** An entry's share change from the wallet's side: minted by a sweep, negative when burnt. */
export function signedShares(entry: LedgerEntry): bigint {
  return entry.kind === 'withdrawal' ? -entry.shares : entry.shares
}

/** A block as the commands' JSON gives it: its number and time as decimal strings, and the time in ISO-8601. */
function blockJson(blockNumber: bigint, timestamp: bigint) {
  return {
    blockNumber: blockNumber.toString(),
    blockTimestamp: timestamp.toString(),
    time: isoTime(timestamp),
  }
}

/**
 * The ledger as JSON, in the commands' vocabulary (docs/operations.md): USDC amounts as `{ usdc, atomic }`,
 * shares, block numbers and times as decimal strings of base units and seconds, times also in ISO-8601.
 */
export function ledgerJson(ledger: VaultLedger): object {
  const labels = tokenLabels(ledger)
  const amounts = <T extends object>(record: T) =>
    Object.fromEntries(
      Object.entries(record).map(([key, value]) => [
        key,
        typeof value !== 'bigint'
          ? value
          : shareFields.has(key)
            ? sharesJson(value)
            : usdcJson(value),
      ]),
    )
  return {
    chain: ledger.chain,
    chainId: ledger.chainId,
    wallet: ledger.wallet,
    usdc: ledger.usdc,
    opening: blockJson(ledger.opening.blockNumber, ledger.opening.timestamp),
    closing: blockJson(ledger.closing.blockNumber, ledger.closing.timestamp),
    reconciled: ledger.reconciled,
    totals: amounts(ledger.totals),
    tokens: ledger.tokens.map((token) => ({
      ...amounts(token),
      label: labels.get(token.token),
    })),
    position: amounts(ledger.position),
    entries: ledger.entries.map((entry) => ({
      ...blockJson(entry.blockNumber, entry.timestamp),
      txHash: entry.txHash,
      logIndex: entry.logIndex,
      kind: entry.kind,
      direction: entry.direction,
      x402Method: entry.x402Method,
      x402Scheme: entry.x402Scheme,
      authorizedAmount: entry.authorizedAmount === null ? null : usdcJson(entry.authorizedAmount),
      vouchers: entry.vouchers,
      token: entry.token,
      counterparty: entry.counterparty,
      amount: usdcJson(entry.amount),
      fee: usdcJson(entry.fee),
      yieldRealised: usdcJson(entry.yieldRealised),
      shares: sharesJson(entry.shares),
      balanceAfter: usdcJson(entry.balanceAfter),
    })),
    positionHistory: ledger.positionHistory.map((point) => ({
      ...blockJson(point.blockNumber, point.timestamp),
      shares: sharesJson(point.shares),
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
  'x402_scheme',
  'authorized_amount',
  'vouchers',
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
 * side (money in positive, out negative), so the `amount` column of one `token` sums to the change in
 * its balance. `log_index` is the token `Transfer`'s that moved the amount.
 */
export function ledgerCsv(ledger: VaultLedger): string {
  const labels = tokenLabels(ledger)
  const rows = ledger.entries.map((entry) => [
    isoTime(entry.timestamp),
    entry.blockNumber.toString(),
    entry.txHash,
    String(entry.logIndex),
    kindLabels[entry.kind],
    entry.x402Method ?? '',
    entry.x402Scheme ?? '',
    entry.authorizedAmount === null ? '' : formatUsdc(entry.authorizedAmount),
    entry.vouchers === null ? '' : String(entry.vouchers),
    labels.get(entry.token) ?? entry.token,
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
  const labels = tokenLabels(ledger)
  const label = (token: Address) => labels.get(token) ?? token
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
      entryType(entry),
      signed(signedAmount(entry)),
      usdc(entry.balanceAfter),
      label(entry.token),
      entry.kind === 'withdrawal' ? `fee ${usdc(entry.fee)}` : '',
      entry.counterparty === ledger.wallet ? 'this wallet' : shortAddress(entry.counterparty),
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
    lines.push('  (balance: the wallet’s balance of the row’s token after it)', '')
  }
  const { totals, position } = ledger
  const vaultToken = ledger.tokens[0] as LedgerTokenSummary
  const rows: [string, bigint][] = [
    ['received through x402', totals.receivedX402],
    ['self-payments (not revenue)', totals.receivedSelf],
    ['received otherwise', totals.receivedOther],
    ['deposited (sweeps)', totals.deposited],
    ['withdrawn', totals.withdrawn],
    ['fees paid', totals.feesPaid],
    ['paid to itself', totals.sentSelf],
    ['deposited into channels', totals.channelDeposits],
    ['refunded by channels', totals.channelRefunds],
    ['sent otherwise', totals.sentOther],
    ['position value now', totals.currentValue],
    ['yield earned', totals.yieldEarned],
  ]
  const width = Math.max(...rows.map(([name]) => name.length))
  lines.push(
    `Totals (${label(vaultToken.token)}, the vault's)`,
    ...rows.map(([name, value]) => `  ${name.padEnd(width)}  ${usdc(value)}`),
    '',
    'Reconciliation (opening + in − out = closing)',
    ...ledger.tokens.map((token) => `  ${reconciliationLine(token, label(token.token))}`),
    `  position   ${usdc(position.openingValue)} + ${usdc(position.deposited)} deposited + ${usdc(position.yieldEarned)} yield − ${usdc(position.withdrawn)} withdrawn − ${usdc(position.feesPaid)} fees = ${usdc(position.closingValue)}`,
    `  shares     ${formatUsdc(position.openingShares)} + ${formatUsdc(position.sharesMinted)} − ${formatUsdc(position.sharesBurned)} = ${formatUsdc(position.closingShares)}  ${mark(position.balanced)}`,
  )
  for (const token of ledger.tokens.slice(1)) {
    lines.push(
      '',
      `Other token: ${label(token.token)} ${token.token}, received as payment and never swept`,
      `  received through x402        ${usdc(token.receivedX402)}`,
      `  self-payments (not revenue)  ${usdc(token.receivedSelf)}`,
      `  received otherwise           ${usdc(token.receivedOther)}`,
      `  paid to itself               ${usdc(token.sentSelf)}`,
      `  deposited into channels      ${usdc(token.channelDeposits)}`,
      `  refunded by channels         ${usdc(token.channelRefunds)}`,
      `  sent otherwise               ${usdc(token.sentOther)}`,
    )
  }
  return `${lines.join('\n')}\n`
}

/** The money in a token's reconciliation: everything in, and everything out. */
export function tokenFlows(token: LedgerTokenSummary): { in: bigint; out: bigint } {
  return {
    in:
      token.receivedX402 +
      token.receivedSelf +
      token.receivedOther +
      token.withdrawn +
      token.channelRefunds,
    out: token.deposited + token.sentSelf + token.channelDeposits + token.sentOther,
  }
}

/** One token's reconciliation as a line: `wallet USDC  1000 + 21.25 − 40 = 981.25  reconciled`. */
function reconciliationLine(token: LedgerTokenSummary, name: string): string {
  const flows = tokenFlows(token)
  return `wallet ${name}  ${formatUsdc(token.openingBalance)} + ${formatUsdc(flows.in)} − ${formatUsdc(flows.out)} = ${formatUsdc(token.closingBalance)}  ${mark(token.balanced)}`
}

/** The word for a reconciliation's state, in every form of the ledger. */
export function mark(balanced: boolean): string {
  return balanced ? 'reconciled' : 'DOES NOT RECONCILE'
}
