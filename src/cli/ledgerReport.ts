import type { Address } from 'viem'
import {
  formatUsdc,
  type LedgerEntry,
  type LedgerTokenSummary,
  type LedgerTotals,
  type VaultLedger,
} from '../index.js'
import {
  entryType,
  isoTime,
  kindLabels,
  mark,
  shortAddress,
  signedAmount,
  signedShares,
  tokenFlows,
  tokenLabels,
} from './ledgerFormat.js'
import { uPlotSources } from './uPlotSources.js'

/** The totals the page shows, in order: the key (also in the ledger's JSON) and the label. */
const totalRows: [keyof LedgerTotals, string][] = [
  ['receivedX402', 'Revenue: received through x402'],
  ['receivedSelf', 'Self-payments (not revenue)'],
  ['receivedOther', 'Received otherwise'],
  ['deposited', 'Deposited (sweeps)'],
  ['withdrawn', 'Withdrawn (after fees)'],
  ['feesPaid', 'Fees paid on yield'],
  ['sentSelf', 'Paid to itself'],
  ['channelDeposits', 'Deposited into x402 channels'],
  ['channelRefunds', 'Refunded by x402 channels'],
  ['sentOther', 'Sent otherwise'],
  ['currentValue', 'Position value now'],
  ['yieldEarned', 'Yield earned'],
]

/**
 * The ledger as one self-contained HTML page: the tokens it names, the totals, a chart over time of the
 * wallet's USDC and the position's value with each settlement, sweep and withdrawal marked, the
 * reconciliation and the table of entries. It fits a phone's width and a laptop's without sideways
 * scrolling, and prints on A4 with every column. Styles, the chart library and the data are inline, and
 * the page's content security policy forbids any request.
 *
 * @param ledger - A ledger read with `positionHistory`, for the position's line.
 * @returns The page.
 */
export function ledgerHtml(ledger: VaultLedger): string {
  const uPlot = uPlotSources()
  const labels = tokenLabels(ledger)
  const label = (token: Address) => escapeHtml(labels.get(token) ?? token)
  const vaultToken = ledger.tokens[0] as LedgerTokenSummary
  const symbol = label(vaultToken.token)
  const title = `Ledger of ${ledger.wallet} on ${ledger.chain}`
  const totals = totalRows
    .map(
      ([key, name]) =>
        `<div><dt>${name}</dt><dd data-total="${key}">${formatUsdc(ledger.totals[key])}</dd></div>`,
    )
    .join('\n')
  const tokens = ledger.tokens
    .map(
      (token) =>
        `<li><strong>${label(token.token)}</strong>: ${token.vaultUsdc ? 'the vault’s USDC. Sweeps move it into the vault and withdrawals back; the totals, the chart and the position are in it.' : 'another USDC, received as payment and never swept; reconciled on its own.'} <code>${token.token}</code></li>`,
    )
    .join('\n')
  const rows = ledger.entries.map((entry) => entryRow(ledger, entry, labels)).join('\n')
  const balanceHeads = balanceColumns(ledger)
    .map((token) => `<th class="num">Balance after, ${label(token)}</th>`)
    .join('')
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
${uPlot.style}
${pageStyle}
</style>
</head>
<body>
<header>
<h1>x402-vault ledger</h1>
<p class="meta">Wallet <code>${ledger.wallet}</code> on ${escapeHtml(ledger.chain)} (chain id ${ledger.chainId}),
blocks ${ledger.opening.blockNumber + 1n} to ${ledger.closing.blockNumber}, ${isoTime(ledger.opening.timestamp)} to ${isoTime(ledger.closing.timestamp)} (UTC).
${ledger.reconciled ? 'Every balance reconciles.' : '<strong class="bad">Some balances do not reconcile.</strong>'}</p>
</header>
<main>
<section aria-labelledby="tokens-title">
<h2 id="tokens-title">Tokens</h2>
<ul class="tokens">
${tokens}
</ul>
</section>
<section aria-labelledby="totals-title">
<h2 id="totals-title">Totals (${symbol})</h2>
<dl class="totals" id="totals">
${totals}
</dl>
<p class="note">Self-payments are x402 settlements paid by the wallet itself, its operators or the addresses named with <code>--self</code>: the merchant’s own money, not revenue.</p>
</section>
<section aria-labelledby="chart-title">
<h2 id="chart-title">Over time (UTC)</h2>
<div id="chart" role="img" aria-label="The wallet's ${symbol} and the position's value over time"></div>
<p class="note">Both lines are steps: the wallet’s balance changes only at its entries; the position’s value is read at the opening, after each sweep and withdrawal, and at the closing, so the yield between two readings shows at the second.</p>
</section>
<section aria-labelledby="reconciliation-title">
<h2 id="reconciliation-title">Reconciliation</h2>
<table class="reconciliation stack" id="reconciliation">
<thead><tr><th>Balance</th><th class="num">Opening</th><th class="num">In</th><th class="num">Out</th><th class="num">Closing</th><th>State</th></tr></thead>
<tbody>
${reconciliationRows(ledger, labels)}
</tbody>
</table>
</section>
<section aria-labelledby="entries-title">
<h2 id="entries-title">Entries (${ledger.entries.length})</h2>
<table class="entries stack" id="entries">
<thead><tr><th>Time (UTC)</th><th>Type</th><th>Token</th><th class="num">Amount</th><th class="num">Fee</th><th class="num">Shares</th>${balanceHeads}<th>From / to</th><th>Transaction</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
</section>
</main>
<script type="application/json" id="ledger-data">${scriptJson(chartData(ledger, labels))}</script>
<script>
${uPlot.script}
</script>
<script>
${chartScript}
</script>
</body>
</html>
`
}

/** The tokens that have entries: each gets its own balance column, so no column mixes two assets. */
function balanceColumns(ledger: VaultLedger): Address[] {
  return ledger.tokens
    .map((t) => t.token)
    .filter((token) => ledger.entries.some((e) => e.token === token))
}

/** One table cell that names its column, for the stacked layout of a narrow screen. */
function cell(column: string, content: string, className = ''): string {
  const classes = className ? ` class="${className}"` : ''
  return `<td data-label="${escapeHtml(column)}"${classes}>${content}</td>`
}

function reconciliationRows(ledger: VaultLedger, labels: Map<Address, string>): string {
  const usdc = formatUsdc
  const parts = (items: [string, bigint][]) =>
    items
      .filter(([, value]) => value !== 0n)
      .map(([name, value]) => `${usdc(value)} ${name}`)
      .join(', ')
  const row = (
    name: string,
    opening: string,
    incoming: string,
    outgoing: string,
    closing: string,
    state: string,
  ) =>
    `<tr><th scope="row">${name}</th>${cell('Opening', opening, 'num')}${cell('In', incoming, 'num')}${cell('Out', outgoing, 'num')}${cell('Closing', closing, 'num')}${cell('State', state)}</tr>`
  const state = (balanced: boolean) =>
    `<span class="${balanced ? 'ok' : 'bad'}">${mark(balanced)}</span>`
  const flow = (total: string, detail: string) =>
    detail ? `${total}<small>${detail}</small>` : total
  const tokens = ledger.tokens.map((token) => {
    const flows = tokenFlows(token)
    return row(
      `Wallet ${escapeHtml(labels.get(token.token) ?? token.token)}`,
      usdc(token.openingBalance),
      flow(
        `+${usdc(flows.in)}`,
        parts([
          ['x402', token.receivedX402],
          ['self-payments', token.receivedSelf],
          ['other', token.receivedOther],
          ['withdrawn', token.withdrawn],
          ['channel refunds', token.channelRefunds],
        ]),
      ),
      flow(
        `−${usdc(flows.out)}`,
        parts([
          ['deposited', token.deposited],
          ['paid to itself', token.sentSelf],
          ['channel deposits', token.channelDeposits],
          ['other', token.sentOther],
        ]),
      ),
      usdc(token.closingBalance),
      state(token.balanced),
    )
  })
  const p = ledger.position
  return [
    ...tokens,
    row(
      'Position shares',
      usdc(p.openingShares),
      `+${usdc(p.sharesMinted)}`,
      `−${usdc(p.sharesBurned)}`,
      usdc(p.closingShares),
      state(p.balanced),
    ),
    row(
      'Position value',
      usdc(p.openingValue),
      flow(
        `+${usdc(p.deposited + p.yieldEarned)}`,
        parts([
          ['deposited', p.deposited],
          ['yield', p.yieldEarned],
        ]),
      ),
      flow(
        `−${usdc(p.withdrawn + p.feesPaid)}`,
        parts([
          ['withdrawn', p.withdrawn],
          ['fees', p.feesPaid],
        ]),
      ),
      usdc(p.closingValue),
      '<span class="ok">balanced by the yield</span>',
    ),
  ].join('\n')
}

function entryRow(ledger: VaultLedger, entry: LedgerEntry, labels: Map<Address, string>): string {
  const type = entryType(entry)
  const party =
    entry.counterparty === ledger.wallet
      ? 'this wallet'
      : `<code title="${entry.counterparty}">${shortAddress(entry.counterparty)}</code>`
  const balances = balanceColumns(ledger).map((token) =>
    cell(
      `Balance after, ${labels.get(token) ?? token}`,
      token === entry.token ? formatUsdc(entry.balanceAfter) : '',
      'num',
    ),
  )
  return `<tr class="${entry.kind}">${[
    cell('Time (UTC)', isoTime(entry.timestamp).replace('T', ' ').replace('Z', '')),
    cell('Type', type, 'type'),
    cell('Token', escapeHtml(labels.get(entry.token) ?? entry.token)),
    cell('Amount', formatUsdc(signedAmount(entry)), 'num'),
    cell('Fee', entry.fee > 0n ? formatUsdc(entry.fee) : '', 'num'),
    cell('Shares', entry.shares > 0n ? formatUsdc(signedShares(entry)) : '', 'num'),
    ...balances,
    cell('From / to', party),
    cell(
      'Transaction',
      `<code title="${entry.txHash}">${entry.txHash.slice(0, 6)}…${entry.txHash.slice(-4)}</code>`,
    ),
  ].join('')}</tr>`
}

/**
 * The chart's data, aligned as uPlot takes it: one time axis (seconds), the wallet's balance of the
 * vault's USDC and the position's value, each known at every time (the last value read at or before it,
 * drawn as steps), and a marker series per kind of entry.
 */
function chartData(ledger: VaultLedger, labels: Map<Address, string>) {
  const vaultEntries = ledger.entries.filter((e) => e.token === ledger.usdc)
  const times = [
    ledger.opening.timestamp,
    ledger.closing.timestamp,
    ...vaultEntries.map((e) => e.timestamp),
    ...ledger.positionHistory.map((p) => p.timestamp),
  ]
  const xs = [...new Set(times.map(Number))].sort((a, b) => a - b)
  const toUsdc = (value: bigint) => Number(formatUsdc(value))
  const kinds = ['x402', 'self-payment', 'sweep', 'withdrawal'] as const
  let balance = ledger.tokens[0]?.openingBalance ?? 0n
  let value = ledger.positionHistory[0]?.value ?? ledger.position.openingValue
  let nextEntry = 0
  let nextPoint = 0
  const wallet: number[] = []
  const position: number[] = []
  const markers = Object.fromEntries(kinds.map((kind) => [kind, [] as (number | null)[]]))
  for (const x of xs) {
    const seen = new Set<string>()
    while (nextEntry < vaultEntries.length && Number(vaultEntries[nextEntry]?.timestamp) <= x) {
      const entry = vaultEntries[nextEntry] as LedgerEntry
      balance = entry.balanceAfter
      seen.add(entry.kind)
      nextEntry++
    }
    const history = ledger.positionHistory
    while (nextPoint < history.length && Number(history[nextPoint]?.timestamp) <= x) {
      value = history[nextPoint]?.value ?? value
      nextPoint++
    }
    wallet.push(toUsdc(balance))
    position.push(toUsdc(value))
    for (const kind of kinds) markers[kind]?.push(seen.has(kind) ? toUsdc(balance) : null)
  }
  const count = (kind: string) => vaultEntries.filter((e) => e.kind === kind).length
  return {
    symbol: labels.get(ledger.usdc) ?? 'USDC',
    x: xs,
    wallet,
    position,
    markers: kinds.map((kind) => ({
      kind,
      label: kindLabels[kind],
      count: count(kind),
      values: markers[kind],
    })),
  }
}

/** JSON inside a `<script>` element: `<` escaped, so no `</script>` can end it early. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replaceAll('<', '\\u003c')
}

function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
}

const pageStyle = `
:root { color-scheme: light; --ink: #1d2433; --muted: #5b6478; --line: #e3e6ee; --wallet: #2563eb; --position: #059669; --x402: #7c3aed; --self-payment: #64748b; --sweep: #d97706; --withdrawal: #dc2626; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #f7f8fb; }
header, main { max-width: 1240px; margin: 0 auto; padding: 0 20px; }
header { padding-top: 24px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 20px 0 10px; }
.meta { color: var(--muted); margin: 0; }
.note { color: var(--muted); font-size: 13px; margin: 10px 0 0; }
code { font: 13px ui-monospace, SFMono-Regular, Menlo, monospace; overflow-wrap: anywhere; }
section { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 4px 20px 16px; margin-top: 18px; }
.tokens { margin: 0; padding-left: 20px; }
.totals { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 12px; margin: 0; }
.totals div { border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; }
.totals dt { color: var(--muted); font-size: 13px; }
.totals dd { margin: 2px 0 0; font-size: 20px; font-variant-numeric: tabular-nums; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
thead th { color: var(--muted); font-weight: 600; font-size: 13px; }
.num { text-align: right; }
td.num { white-space: nowrap; }
td small { display: block; color: var(--muted); font-size: 12px; white-space: normal; }
.entries { font-size: 13px; }
.entries code { font-size: 12px; }
@media screen and (min-width: 1001px) {
  .entries td:first-child, .entries td code { white-space: nowrap; }
}
.entries tr.x402 .type { color: var(--x402); }
.entries tr.self-payment .type { color: var(--self-payment); font-style: italic; }
.entries tr.sweep .type { color: var(--sweep); }
.entries tr.withdrawal .type { color: var(--withdrawal); }
.ok { color: var(--position); }
.bad { color: var(--withdrawal); font-weight: 600; }
#chart { min-height: 300px; }
.u-legend { font-size: 13px; }
@media screen and (max-width: 1000px) {
  header, main { padding: 0 10px; }
  section { padding: 4px 12px 12px; }
  .stack thead { display: none; }
  .stack, .stack tbody, .stack tr, .stack th, .stack td { display: block; width: 100%; }
  .stack tr { border-bottom: 1px solid var(--line); padding: 8px 0; }
  .stack th, .stack td { border: 0; padding: 2px 0; text-align: left; }
  .stack td { display: flex; justify-content: space-between; gap: 12px; white-space: normal; }
  .stack td:empty { display: none; }
  .stack td::before { content: attr(data-label); color: var(--muted); font-size: 13px; flex: none; }
  .stack td small { text-align: right; }
  .stack td.num { flex-wrap: wrap; }
}
@page { size: A4; margin: 12mm 10mm; }
@media print {
  body { background: #fff; font-size: 9pt; }
  header, main { max-width: none; padding: 0; }
  section { border: 0; padding: 0; margin-top: 10px; break-inside: auto; }
  h1 { font-size: 15pt; }
  h2 { font-size: 11pt; margin: 10px 0 4px; }
  .totals { grid-template-columns: repeat(5, 1fr); gap: 4px; }
  .totals div { padding: 3px 5px; break-inside: avoid; }
  .totals dt { font-size: 7pt; }
  .totals dd { font-size: 10pt; }
  .note { font-size: 7.5pt; }
  th, td { padding: 2px 3px; }
  thead th { font-size: 7pt; }
  .entries { font-size: 7pt; }
  .entries code, code { font-size: 7pt; }
  .reconciliation { font-size: 8pt; break-inside: avoid; }
  td small { font-size: 7pt; }
  tr { break-inside: avoid; }
  #chart { min-height: 0; }
  .uplot, .u-wrap { width: 100% !important; }
  .u-wrap { height: auto !important; }
  .u-wrap canvas { width: 100% !important; height: auto !important; position: static !important; }
  .u-over, .u-under, .u-cursor-x, .u-cursor-y, .u-cursor-pt { display: none !important; }
  .u-legend { font-size: 7pt; }
}
`

/** Draws the chart from the page's data with uPlot; the rest of the page needs no script. */
const chartScript = `
(function () {
  var data = JSON.parse(document.getElementById('ledger-data').textContent);
  var box = document.getElementById('chart');
  var css = getComputedStyle(document.documentElement);
  var color = function (name) { return css.getPropertyValue('--' + name).trim(); };
  var money = function (u, v) { return v == null ? '' : v.toLocaleString('en-US', { maximumFractionDigits: 6 }); };
  var steps = uPlot.paths.stepped({ align: 1 });
  var marker = function (m) {
    return { label: m.label, stroke: color(m.kind), fill: color(m.kind), width: 0, paths: function () { return null; },
      points: { show: true, size: 9, stroke: color(m.kind), fill: color(m.kind) },
      value: function () { return m.count + (m.count === 1 ? ' entry' : ' entries'); } };
  };
  var markers = data.markers.filter(function (m) { return m.count > 0 || m.kind === 'x402'; });
  var last = data.x.length - 1;
  var width = function () { return Math.max(200, box.clientWidth); };
  var options = {
    width: width(),
    height: 300,
    tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'); },
    scales: { x: { time: true } },
    axes: [
      { space: 90 },
      { label: data.symbol, size: 70, values: function (u, vs) { return vs.map(function (v) { return money(u, v); }); } }
    ],
    series: [
      { label: 'Time (UTC)', value: '{YYYY}-{MM}-{DD} {HH}:{mm}:{ss}' },
      { label: 'Wallet ' + data.symbol, stroke: color('wallet'), width: 2, paths: steps, value: money },
      { label: 'Position value', stroke: color('position'), width: 2, paths: steps, value: money }
    ].concat(markers.map(marker)),
    hooks: {
      // Away from the chart, the legend shows the closing values rather than blanks.
      ready: [function (u) { u.setLegend({ idx: last }); }],
      setCursor: [function (u) { if (u.cursor.idx == null) u.setLegend({ idx: last }); }]
    }
  };
  var series = [data.x, data.wallet, data.position].concat(markers.map(function (m) { return m.values; }));
  var plot = new uPlot(options, series, box);
  window.addEventListener('resize', function () { plot.setSize({ width: width(), height: 300 }); });
})();
`
