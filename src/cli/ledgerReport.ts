import { formatUsdc, type LedgerEntry, type VaultLedger } from '../index.js'
import { isoTime, kindLabels, signedAmount, signedShares } from './ledgerFormat.js'
import { uPlotSources } from './uPlotSources.js'

/** The totals the page shows, in order: the key (also in the ledger's JSON) and the label. */
const totalRows = [
  ['receivedX402', 'Received through x402'],
  ['receivedOther', 'Received otherwise'],
  ['deposited', 'Deposited (sweeps)'],
  ['withdrawn', 'Withdrawn'],
  ['feesPaid', 'Fees paid'],
  ['sentOther', 'Sent otherwise'],
  ['positionValue', 'Position value now'],
  ['yieldEarned', 'Yield earned'],
] as const

/**
 * The ledger as one self-contained HTML page: the totals, a chart over time of the wallet's USDC and the
 * position's value with each settlement, sweep and withdrawal marked, and the table of entries. Styles,
 * the chart library and the data are inline, and the page's content security policy forbids any request.
 *
 * @param ledger - A ledger read with `positionHistory`, for the position's line.
 * @returns The page.
 */
export function ledgerHtml(ledger: VaultLedger): string {
  const uPlot = uPlotSources()
  const vaultToken = ledger.tokens[0]
  const symbol = vaultToken?.symbol || 'USDC'
  const title = `Ledger of ${ledger.wallet} on ${ledger.chain}`
  const totals = totalRows
    .map(
      ([key, label]) =>
        `<div><dt>${label}</dt><dd data-total="${key}">${formatUsdc(ledger.totals[key])}</dd></div>`,
    )
    .join('\n')
  const reconciled = (balanced: boolean) =>
    balanced ? '<span class="ok">reconciled</span>' : '<span class="bad">does not reconcile</span>'
  const reconciliation = ledger.tokens
    .map(
      (token) =>
        `<tr><th>${escapeHtml(token.vaultUsdc ? `Wallet ${token.symbol || 'USDC'}` : `${token.symbol || 'Token'} ${token.token}`)}</th><td>${formatUsdc(token.openingBalance)}</td><td>+${formatUsdc(token.receivedX402 + token.receivedOther + token.withdrawn)}</td><td>−${formatUsdc(token.deposited + token.sentOther)}</td><td>${formatUsdc(token.closingBalance)}</td><td>${reconciled(token.balanced)}</td></tr>`,
    )
    .concat(
      `<tr><th>Position shares</th><td>${formatUsdc(ledger.position.openingShares)}</td><td>+${formatUsdc(ledger.position.sharesMinted)}</td><td>−${formatUsdc(ledger.position.sharesBurnt)}</td><td>${formatUsdc(ledger.position.closingShares)}</td><td>${reconciled(ledger.position.balanced)}</td></tr>`,
      `<tr><th>Position value</th><td>${formatUsdc(ledger.position.openingValue)}</td><td>+${formatUsdc(ledger.position.deposited)} deposited, ${formatUsdc(ledger.position.yieldEarned)} yield</td><td>−${formatUsdc(ledger.position.withdrawn)} withdrawn, ${formatUsdc(ledger.position.feesPaid)} fees</td><td>${formatUsdc(ledger.position.closingValue)}</td><td></td></tr>`,
    )
    .join('\n')
  const rows = ledger.entries.map((entry) => entryRow(ledger, entry)).join('\n')
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
blocks ${ledger.opening.blockNumber + 1n} to ${ledger.closing.blockNumber}, ${isoTime(ledger.opening.timestamp)} to ${isoTime(ledger.closing.timestamp)}.
${ledger.reconciled ? 'Every balance reconciles.' : '<strong class="bad">Some balances do not reconcile.</strong>'}</p>
</header>
<main>
<section aria-labelledby="totals-title">
<h2 id="totals-title">Totals (${escapeHtml(symbol)})</h2>
<dl class="totals" id="totals">
${totals}
</dl>
</section>
<section aria-labelledby="chart-title">
<h2 id="chart-title">Over time</h2>
<div id="chart" role="img" aria-label="The wallet's ${escapeHtml(symbol)} and the position's value over time"></div>
</section>
<section aria-labelledby="reconciliation-title">
<h2 id="reconciliation-title">Reconciliation</h2>
<table class="reconciliation">
<thead><tr><th></th><th>Opening</th><th>In</th><th>Out</th><th>Closing</th><th></th></tr></thead>
<tbody>
${reconciliation}
</tbody>
</table>
</section>
<section aria-labelledby="entries-title">
<h2 id="entries-title">Entries (${ledger.entries.length})</h2>
<table class="entries" id="entries">
<thead><tr><th>Time (UTC)</th><th>Type</th><th>Amount</th><th>Fee</th><th>Shares</th><th>Balance after</th><th>From / to</th><th>Transaction</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
</section>
</main>
<script type="application/json" id="ledger-data">${scriptJson(chartData(ledger))}</script>
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

function entryRow(ledger: VaultLedger, entry: LedgerEntry): string {
  const other = entry.token !== ledger.usdc
  const token = other
    ? ` ${escapeHtml(ledger.tokens.find((t) => t.token === entry.token)?.symbol || 'token')}*`
    : ''
  const type =
    entry.kind === 'x402' ? `x402 settlement (${entry.x402Method})` : kindLabels[entry.kind]
  return `<tr class="${entry.kind}"><td>${isoTime(entry.timestamp).replace('T', ' ').replace('Z', '')}</td><td>${type}</td><td class="num">${formatUsdc(signedAmount(entry))}${token}</td><td class="num">${entry.fee > 0n ? formatUsdc(entry.fee) : ''}</td><td class="num">${entry.shares > 0n ? formatUsdc(signedShares(entry)) : ''}</td><td class="num">${formatUsdc(entry.balanceAfter)}</td><td><code title="${entry.counterparty}">${entry.counterparty.slice(0, 8)}…${entry.counterparty.slice(-6)}</code></td><td><code title="${entry.txHash}">${entry.txHash.slice(0, 10)}…</code></td></tr>`
}

/**
 * The chart's data, aligned as uPlot takes it: one time axis (seconds), the wallet's balance of the
 * vault's USDC as a step line, the position's value where it was read, and a marker series per kind.
 */
function chartData(ledger: VaultLedger) {
  const vaultEntries = ledger.entries.filter((e) => e.token === ledger.usdc)
  const times = [
    ledger.opening.timestamp,
    ledger.closing.timestamp,
    ...vaultEntries.map((e) => e.timestamp),
    ...ledger.positionHistory.map((p) => p.timestamp),
  ]
  const xs = [...new Set(times.map(Number))].sort((a, b) => a - b)
  const toUsdc = (value: bigint) => Number(formatUsdc(value))
  let balance = ledger.tokens[0]?.openingBalance ?? 0n
  let next = 0
  const wallet: number[] = []
  const markers = { x402: [], sweep: [], withdrawal: [] } as Record<string, (number | null)[]>
  for (const x of xs) {
    const seen = new Set<string>()
    while (next < vaultEntries.length && Number(vaultEntries[next]?.timestamp) <= x) {
      const entry = vaultEntries[next] as LedgerEntry
      balance = entry.balanceAfter
      seen.add(entry.kind)
      next++
    }
    wallet.push(toUsdc(balance))
    for (const kind of Object.keys(markers)) {
      markers[kind]?.push(seen.has(kind) ? toUsdc(balance) : null)
    }
  }
  const values = new Map(ledger.positionHistory.map((p) => [Number(p.timestamp), toUsdc(p.value)]))
  const position = xs.map((x) => values.get(x) ?? null)
  return {
    symbol: ledger.tokens[0]?.symbol || 'USDC',
    x: xs,
    wallet,
    position,
    x402: markers.x402,
    sweep: markers.sweep,
    withdrawal: markers.withdrawal,
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
:root { color-scheme: light; --ink: #1d2433; --muted: #5b6478; --line: #e3e6ee; --wallet: #2563eb; --position: #059669; --x402: #7c3aed; --sweep: #d97706; --withdrawal: #dc2626; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #f7f8fb; }
header, main { max-width: 1100px; margin: 0 auto; padding: 0 24px; }
header { padding-top: 24px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 10px; }
.meta { color: var(--muted); margin: 0; }
code { font: 13px ui-monospace, SFMono-Regular, Menlo, monospace; }
section { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 4px 20px 16px; margin-top: 18px; }
.totals { display: grid; grid-template-columns: repeat(auto-fill, minmax(220px, 1fr)); gap: 12px; margin: 0; }
.totals div { border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; }
.totals dt { color: var(--muted); font-size: 13px; }
.totals dd { margin: 2px 0 0; font-size: 20px; font-variant-numeric: tabular-nums; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); white-space: nowrap; }
thead th { color: var(--muted); font-weight: 600; font-size: 13px; }
.num { text-align: right; }
.entries { font-size: 14px; }
.entries tr.x402 td:nth-child(2) { color: var(--x402); }
.entries tr.sweep td:nth-child(2) { color: var(--sweep); }
.entries tr.withdrawal td:nth-child(2) { color: var(--withdrawal); }
.ok { color: var(--position); }
.bad { color: var(--withdrawal); }
#chart { min-height: 340px; }
`

/** Draws the chart from the page's data with uPlot; the rest of the page needs no script. */
const chartScript = `
(function () {
  var data = JSON.parse(document.getElementById('ledger-data').textContent);
  var box = document.getElementById('chart');
  var css = getComputedStyle(document.documentElement);
  var color = function (name) { return css.getPropertyValue('--' + name).trim(); };
  var money = function (u, v) { return v == null ? '' : v.toLocaleString('en-US', { maximumFractionDigits: 6 }); };
  var marker = function (label, name) {
    return { label: label, stroke: color(name), fill: color(name), width: 0, paths: function () { return null; },
      points: { show: true, size: 9, stroke: color(name), fill: color(name) }, value: money };
  };
  var options = {
    width: Math.max(320, box.clientWidth),
    height: 340,
    scales: { x: { time: true } },
    axes: [{}, { label: data.symbol, size: 70, values: function (u, vs) { return vs.map(function (v) { return money(u, v); }); } }],
    series: [
      { label: 'Time (local)' },
      { label: 'Wallet ' + data.symbol, stroke: color('wallet'), width: 2, paths: uPlot.paths.stepped({ align: 1 }), value: money },
      { label: 'Position value', stroke: color('position'), width: 2, spanGaps: true, value: money },
      marker('x402 settlement', 'x402'),
      marker('Sweep', 'sweep'),
      marker('Withdrawal', 'withdrawal')
    ]
  };
  var plot = new uPlot(options, [data.x, data.wallet, data.position, data.x402, data.sweep, data.withdrawal], box);
  window.addEventListener('resize', function () { plot.setSize({ width: Math.max(320, box.clientWidth), height: 340 }); });
})();
`
