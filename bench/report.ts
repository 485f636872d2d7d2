import { cpus } from 'node:os'
import { mcpToolNames } from '../harness/mcpToolNames.js'
import type { Burst } from './burst.js'
import type { BuyerBench } from './buyer.js'
import type { ColdStart } from './coldStart.js'
import type { Measured } from './context.js'
import type { ImportTime } from './importTime.js'
import type { LedgerBench } from './ledger.js'
import type { ManyInstances } from './manyInstances.js'
import type { McpHttpLoad } from './mcpHttp.js'
import type { McpListing } from './mcpListing.js'
import type { NpxStart } from './npxStart.js'
import type { PaidRequestLatency } from './paidLatency.js'
import type { RoundTripsResult, RpcRoundTrips } from './roundTrips.js'
import type { SchemeGas } from './schemeGas.js'
import type { SchemeLatency } from './schemeLatency.js'
import type { SdkCall } from './sdkCalls.js'
import type { Sweep } from './sweep.js'
import type { X402Gas } from './x402Gas.js'

/** One budget (docs/performance.md) against its measured value. */
export type BudgetCheck = {
  name: string
  /** The measured value; `null` while not measured. */
  value: number | string | null
  /** The largest value within budget. */
  max: number
  unit: string
  /** `null` while not measured. */
  within: boolean | null
}

/** The report `npm run bench -- --json` prints: the budgets, then the details. */
export type BenchReport = {
  rpcRoundTrips: RpcRoundTrips
  paidRequestLatency: PaidRequestLatency | null
  burst: Burst | null
  mcpColdStartMs: number
  sdkImportMs: number
  nodeStartMs: number
  sweep: Sweep | null
  /** Why a value is `null`: what it needs before it can be measured. */
  notMeasured: Partial<
    Record<
      | 'paidRequestLatency'
      | 'burst'
      | 'sweep'
      | 'ledger'
      | 'x402Gas'
      | 'schemeGas'
      | 'schemeLatency'
      | 'buyer',
      string
    >
  >
  budgets: BudgetCheck[]
  /** The names of the budgets broken; the bench exits 1 when there is any. */
  overBudget: string[]
  /** The SDK calls under the tools, in process. */
  sdk: Record<string, SdkCall>
  /** `npx -y x402-vault@beta` from a local registry; `null` in a smoke run (the tests start it). */
  npxStart: NpxStart | null
  /** `x402-vault mcp --http` with the bearer token, 50 clients at once. */
  mcpHttp: McpHttpLoad
  /** `x402-vault mcp --http --public`, 50 clients at once, each by its own address: the same budgets. */
  mcpHttpPublic: McpHttpLoad
  /** `tools/list`: its size, the official v1 client's CPU in `listTools()`, the server's time. */
  mcpListing: McpListing
  /** One ledger scan over a busy stretch of chain. */
  ledger: LedgerBench | null
  /** The gas of an x402 payment on each path (EIP-3009, Permit2 approved once, Permit2 sponsored). */
  x402Gas: X402Gas | null
  /** Gas per paid request with `exact`, `upto` and `batch-settlement`: the same requests at 0.001 USDC. */
  schemeGas: SchemeGas | null
  /** The paid-request latency ratio with the paywall / x402's own middleware, for `upto` and `batch-settlement`. */
  schemeLatency: SchemeLatency | null
  /** The buyer side (`vault.attachToClient`): a recall's latency, recalls per burst, the liquid p50 ratio. */
  buyer: BuyerBench | null
  /** Four instances of one merchant: `sweep: false` with `--watch`, and each sweeping in-process; `null` in a smoke run. */
  manyInstances: ManyInstances | null
  details: {
    rpcMethods: RoundTripsResult['rpcMethods']
    mcpColdStartRunsMs: number[]
    /** `node -e 0` timed between the cold starts, the ratio, and spawn → a first `vault_status`. */
    mcpColdStart: Omit<ColdStart, 'medianMs' | 'runsMs'>
    importRunsMs: ImportTime['runs']
  }
  environment: {
    node: string
    cpus: number
    chain: string
    chainId: number
    smoke: boolean
  }
}

/** Everything the measurements returned. */
export type Measurements = {
  roundTrips: RoundTripsResult
  coldStart: ColdStart
  importTime: ImportTime
  paidRequestLatency: Measured<PaidRequestLatency>
  burst: Measured<Burst>
  sweep: Measured<Sweep>
  ledger: Measured<LedgerBench>
  sdk: Record<string, SdkCall>
  npxStart: NpxStart | null
  mcpHttp: McpHttpLoad
  mcpHttpPublic: McpHttpLoad
  mcpListing: McpListing
  x402Gas: Measured<X402Gas>
  schemeGas: Measured<SchemeGas>
  schemeLatency: Measured<SchemeLatency>
  buyer: Measured<BuyerBench>
  manyInstances: ManyInstances | null
}

/**
 * Assembles the report and checks every budget.
 *
 * @param measured - What the measurement modules returned.
 * @param environment - Where it ran.
 * @returns The report.
 * @example
 * const report = buildReport(measured, { node: process.version, … })
 */
export function buildReport(
  measured: Measurements,
  environment: Omit<BenchReport['environment'], 'cpus' | 'node'>,
): BenchReport {
  const { rpcRoundTrips, rpcMethods } = measured.roundTrips
  const notMeasured: BenchReport['notMeasured'] = {}
  const measuredValue = <T>(
    key: keyof BenchReport['notMeasured'],
    result: Measured<T>,
  ): T | null => {
    if ('notMeasured' in result) notMeasured[key] = result.notMeasured
    return result.value
  }
  const paidRequestLatency = measuredValue('paidRequestLatency', measured.paidRequestLatency)
  const burst = measuredValue('burst', measured.burst)
  const sweep = measuredValue('sweep', measured.sweep)
  const ledger = measuredValue('ledger', measured.ledger)
  const x402Gas = measuredValue('x402Gas', measured.x402Gas)
  const schemeGas = measuredValue('schemeGas', measured.schemeGas)
  const schemeLatency = measuredValue('schemeLatency', measured.schemeLatency)
  const buyer = measuredValue('buyer', measured.buyer)

  const budgets: BudgetCheck[] = [
    atMost('rpcRoundTrips.startup', rpcRoundTrips.startup, 2, 'round trips'),
    // Reads and plans alike: a plan's reads and its simulation travel in one JSON-RPC batch.
    ...mcpToolNames.map((tool) =>
      atMost(`rpcRoundTrips.${tool}`, rpcRoundTrips[tool], 1, 'round trips'),
    ),
    atMost('mcpColdStartMs', measured.coldStart.medianMs, 150, 'ms'),
    atMost('mcpColdStartRatio', measured.coldStart.ratio, 6, '× node -e 0'),
    atMost('mcpColdStartPrimaryBinMs', measured.coldStart.primaryBin.medianMs, 150, 'ms'),
    atMost('mcpColdStartPrimaryBinRatio', measured.coldStart.primaryBin.ratio, 6, '× node -e 0'),
    atMost('sdkImportMs', measured.importTime.sdkImportMs, 250, 'ms'),
    // Through a registry that serves the real metadata of every package the manifest names.
    atMost('npxStart.coldMs', measured.npxStart?.coldMs ?? null, 3000, 'ms'),
    atMost('npxStart.coldMaxMs', measured.npxStart?.coldMaxMs ?? null, 8000, 'ms'),
    atMost('npxStart.warmMs', measured.npxStart?.warmMs ?? null, 1500, 'ms'),
    ...(['mcpHttp', 'mcpHttpPublic'] as const).flatMap((key) => [
      atMost(`${key}.toolsList.serverP50Ms`, measured[key].toolsList.serverP50Ms, 2, 'ms'),
      atMost(`${key}.readTool.ratio`, measured[key].readTool.ratio, 1.5, '× its RPC round trip'),
    ]),
    atMost('mcpListing.bytes', measured.mcpListing.bytes, 25_000, 'bytes'),
    atMost('mcpListing.v1ListToolsCpuMs', measured.mcpListing.v1ListToolsCpuMs, 150, 'ms'),
    atMost('npxStart.installedMb', measured.npxStart?.installedMb ?? null, 10, 'MB'),
    atMost('paidRequestLatency.ratio', paidRequestLatency?.ratio ?? null, 1.05, '×'),
    atMost('schemeLatency.upto.ratio', schemeLatency?.upto.ratio ?? null, 1.05, '×'),
    atMost(
      'schemeLatency.batchSettlement.ratio',
      schemeLatency?.batchSettlement.ratio ?? null,
      1.05,
      '×',
    ),
    atMost('burst.depositTxs', burst?.depositTxs ?? null, 3, 'transactions'),
    atMost('burst.failedDeposits', burst?.failedDeposits ?? null, 0, 'transactions'),
    atMost('burst.unaccountedUnits', burst?.unaccountedUnits ?? null, 0, 'base units'),
    atMost('sweep.txPerSweep', sweep?.txPerSweep ?? null, 1, 'transactions'),
    atMost('buyer.liquidRatio', buyer?.liquidRatio ?? null, 1.05, '×'),
    atMost('buyer.recallsPerBurst', buyer?.recallsPerBurst ?? null, 2, 'withdrawals'),
    ...Object.entries(measured.sdk).map(([name, call]) =>
      atMost(`sdk.${name}`, call.roundTrips, call.budget, 'round trips'),
    ),
  ]
  return {
    rpcRoundTrips,
    paidRequestLatency,
    burst,
    mcpColdStartMs: measured.coldStart.medianMs,
    sdkImportMs: measured.importTime.sdkImportMs,
    nodeStartMs: measured.importTime.nodeStartMs,
    sweep,
    notMeasured,
    budgets,
    overBudget: budgets.filter((check) => check.within === false).map((check) => check.name),
    sdk: measured.sdk,
    npxStart: measured.npxStart,
    mcpHttp: measured.mcpHttp,
    mcpHttpPublic: measured.mcpHttpPublic,
    mcpListing: measured.mcpListing,
    ledger,
    x402Gas,
    schemeGas,
    schemeLatency,
    buyer,
    manyInstances: measured.manyInstances,
    details: {
      rpcMethods,
      mcpColdStartRunsMs: measured.coldStart.runsMs,
      mcpColdStart: (({ medianMs, runsMs, ...rest }) => rest)(measured.coldStart),
      importRunsMs: measured.importTime.runs,
    },
    environment: { node: process.version, cpus: cpus().length, ...environment },
  }
}

/** A budget check; a string value is a decimal count of base units. */
function atMost(
  name: string,
  value: number | string | null,
  max: number,
  unit: string,
): BudgetCheck {
  if (value === null) return { name, value, max, unit, within: null }
  // Base units are exact: compared as bigints, never as floats.
  const within = typeof value === 'string' ? BigInt(value) <= BigInt(max) : value <= max
  return { name, value, max, unit, within }
}

/**
 * The report as a human-readable table.
 *
 * @param report - From {@link buildReport}.
 * @returns Lines of text, ending with a newline.
 * @example
 * process.stdout.write(formatReport(report))
 */
export function formatReport(report: BenchReport): string {
  const { environment } = report
  const verdict = (check: BudgetCheck | undefined) =>
    !check || check.within === null ? '' : check.within ? 'ok' : 'OVER BUDGET'
  const checkNamed = (name: string) => report.budgets.find((check) => check.name === name)
  const budgetText = (check: BudgetCheck | undefined) =>
    check
      ? `≤ ${check.max}${check.unit === 'ms' ? ' ms' : check.unit.startsWith('×') ? '×' : ''}`
      : '—'

  const roundTrips = Object.entries(report.rpcRoundTrips).map(([key, value]) => {
    const check = checkNamed(`rpcRoundTrips.${key}`)
    return [key, String(value), budgetText(check), verdict(check)]
  })
  const cold = report.details.mcpColdStart
  const startupTimes: [string, string, BudgetCheck | undefined][] = [
    [
      'mcpColdStartMs (spawn → tools/list)',
      `${report.mcpColdStartMs} ms`,
      checkNamed('mcpColdStartMs'),
    ],
    [
      `  … ÷ node -e 0 (${cold.nodeMedianMs} ms beside it)`,
      `${cold.ratio}×`,
      checkNamed('mcpColdStartRatio'),
    ],
    ['  … spawn → a first vault_status answered', `${cold.firstCallMedianMs} ms`, undefined],
    [
      '  … through `x402-vault` with no sub-command',
      `${cold.primaryBin.medianMs} ms`,
      checkNamed('mcpColdStartPrimaryBinMs'),
    ],
    ['  … ÷ node -e 0', `${cold.primaryBin.ratio}×`, checkNamed('mcpColdStartPrimaryBinRatio')],
    [
      'sdkImportMs (fresh import of the SDK)',
      `${report.sdkImportMs} ms`,
      checkNamed('sdkImportMs'),
    ],
    ['nodeStartMs (node -e 0)', `${report.nodeStartMs} ms`, undefined],
  ]
  const startup = startupTimes.map(([name, value, check]) => [
    name,
    value,
    budgetText(check),
    verdict(check),
  ])
  const npx = report.npxStart
  const npxRows = npx
    ? [
        [
          `npxStart.coldMs (empty cache → tools/list, median of ${npx.coldRunsMs.length}; node -e 0: ${npx.nodeMs} ms)`,
          `${npx.coldMs} ms`,
          'npxStart.coldMs',
        ],
        ['  … the slowest of them', `${npx.coldMaxMs} ms`, 'npxStart.coldMaxMs'],
        [
          `npxStart.warmMs (same cache → tools/list, median of ${npx.warmRunsMs.length})`,
          `${npx.warmMs} ms`,
          'npxStart.warmMs',
        ],
        ['  … what a cold start fetched from the registry', describeFetched(npx.coldFetched), ''],
        [
          `  … the machine's load average (1 min), before / after`,
          `${npx.loadAverage.before} / ${npx.loadAverage.after}`,
          '',
        ],
        [
          'npxStart.installedMb (what npx installed)',
          `${npx.installedMb} MB`,
          'npxStart.installedMb',
        ],
      ].map(([name = '', value = '', budget = '']) => {
        const check = checkNamed(budget)
        return [name, value, check ? `≤ ${check.max} ${check.unit}` : '—', verdict(check)]
      })
    : [['npx -y x402-vault@beta', 'not run in a smoke run', '', '']]
  const loadRows = (key: 'mcpHttp' | 'mcpHttpPublic', label: string) => {
    const http = report[key]
    return [
      [
        `tools/list, ${label}: the server's time per request (p50; ${http.clients} clients at once)`,
        `${http.toolsList.serverP50Ms} ms`,
        `${key}.toolsList.serverP50Ms`,
      ],
      [
        '  … as the clients saw it (p50, mostly the wait in line)',
        `${http.toolsList.clientP50Ms} ms`,
        '',
      ],
      [
        `  vault_status p50 ÷ its RPC request's p50 (${http.readTool.p50Ms} ÷ ${http.readTool.rpcP50Ms} ms)`,
        `${http.readTool.ratio}×`,
        `${key}.readTool.ratio`,
      ],
    ]
  }
  const httpRows = [
    ...loadRows('mcpHttp', 'with the bearer token'),
    ...loadRows('mcpHttpPublic', 'public (each client by its address)'),
    [
      'tools/list size (the 2025-era answer, bytes)',
      `${report.mcpListing.bytes} B`,
      'mcpListing.bytes',
    ],
    [
      "  … the official v1 client's listTools CPU (median, fresh processes)",
      `${report.mcpListing.v1ListToolsCpuMs} ms`,
      'mcpListing.v1ListToolsCpuMs',
    ],
    [
      "  … the server's own time for those requests (median)",
      `${report.mcpListing.serverMs} ms`,
      '',
    ],
  ].map(([name = '', value = '', budget = '']) => {
    const check = checkNamed(budget)
    const unit = check?.unit === 'ms' ? ' ms' : check?.unit === 'bytes' ? ' B' : '×'
    return [name, value, check ? `≤ ${check.max}${unit}` : '—', verdict(check)]
  })
  const seller = (['paidRequestLatency', 'burst', 'sweep', 'ledger', 'buyer'] as const).map(
    (key) => [
      key,
      report[key] === null
        ? `not measured: ${report.notMeasured[key]}`
        : JSON.stringify(report[key]),
    ],
  )
  const pathNames: Record<keyof X402Gas, string> = {
    eip3009: 'EIP-3009 (Circle’s USDC, as on Base)',
    permit2: 'Permit2, approved once (Base Sepolia)',
    permit2Sponsored: 'Permit2, sponsored permit (first payment)',
  }
  const gas = report.x402Gas
    ? Object.entries(report.x402Gas).map(([path, { buyerOnce, facilitatorPerPayment }]) => [
        pathNames[path as keyof X402Gas],
        String(buyerOnce),
        '0',
        String(facilitatorPerPayment),
      ])
    : [[`not measured: ${report.notMeasured.x402Gas}`]]
  const latencyRows = schemeLatencyRows(report, checkNamed, budgetText, verdict)
  const schemeGas = report.schemeGas
  const part = ({ transactions, gas }: { transactions: number; gas: number }) =>
    `${transactions} tx, ${gas} gas`
  const schemeGasRows = schemeGas
    ? [
        [
          'exact',
          String(schemeGas.exact.gasPerRequest),
          `settlements: ${part(schemeGas.exact.settlements)}`,
        ],
        [
          `upto (charging ${schemeGas.upto.chargeUsdc})`,
          String(schemeGas.upto.gasPerRequest),
          `settlements: ${part(schemeGas.upto.settlements)}`,
        ],
        [
          'batch-settlement',
          String(schemeGas.batchSettlement.gasPerRequest),
          `deposits: ${part(schemeGas.batchSettlement.deposits)}; claims: ${part(schemeGas.batchSettlement.claims)}; settles: ${part(schemeGas.batchSettlement.settles)}`,
        ],
      ]
    : [[`not measured: ${report.notMeasured.schemeGas}`]]
  const many = report.manyInstances
  const shapeRow = (name: string, shape: ManyInstances['watch'] | ManyInstances['inProcess']) => [
    name,
    String(shape.settlements),
    String(shape.deposits),
    String(shape.failedOrConflictingSends),
    String(shape.rpcPerSettlement),
    shape.unaccountedUnits,
  ]
  const manyRows = many
    ? [
        [
          'shape',
          'settlements',
          'deposits',
          'failed or conflicting sends',
          'RPC per settlement',
          'unaccounted units',
        ],
        shapeRow(`${many.watch.instances} × sweep: false, one --watch`, many.watch),
        shapeRow(`${many.inProcess.instances} × in-process sweeper`, many.inProcess),
      ]
    : [['not run in a smoke run (test/seller/manyInstances.devnet.test.ts runs both shapes)']]
  const delay = many?.watch.settlementToDepositMs
  const sdk = Object.entries(report.sdk).map(([name, call]) => {
    const check = checkNamed(`sdk.${name}`)
    return [
      name,
      String(call.roundTrips),
      budgetText(check),
      `${call.p50Ms}`,
      `${call.p95Ms}`,
      verdict(check),
    ]
  })
  return [
    `x402-vault bench on the ${environment.chain} devnet (chain ${environment.chainId}), Node ${environment.node}, ${environment.cpus} CPUs${environment.smoke ? ', smoke run' : ''}`,
    '',
    'RPC round trips: HTTP requests of the real MCP server over stdio (worst sample)',
    table([['what', 'measured', 'budget', ''], ...roundTrips]),
    '',
    'Start-up (medians of fresh processes, interleaved) and MCP over HTTP',
    table([['what', 'measured', 'budget', ''], ...startup, ...npxRows, ...httpRows]),
    '',
    'Seller and buyer: paid requests through the devnet facilitator, sweeps and recalls on chain, a ledger scan',
    table(seller),
    '',
    'Paid-request latency by scheme: p50 with createPaywall (sweeper on) ÷ p50 with x402’s own middleware, in interleaved pairs',
    table([['scheme', 'with paywall', 'plain x402', 'ratio', 'budget', ''], ...latencyRows]),
    '',
    schemeGas
      ? `Gas per paid request by scheme: ${schemeGas.requests} requests at ${schemeGas.priceUsdc} USDC by one buyer, every transaction the scheme caused`
      : 'Gas per paid request by scheme',
    table([['scheme', 'gas per request', 'parts'], ...schemeGasRows]),
    '',
    'Many instances of one merchant: the four merchant processes’ and the sweeper’s RPC, sends and deposits',
    table(manyRows),
    ...(delay
      ? [
          `  settlement → deposit under --watch (default --poll 2 s, --debounce 1000 ms): p50 ${delay.p50} ms, max ${delay.max} ms over ${delay.samples} sales`,
        ]
      : []),
    '',
    'x402 payment gas by path: the buyer only signs; the facilitator sends the settlement',
    table([['path', 'buyer once', 'buyer per payment', 'facilitator per payment'], ...gas]),
    '',
    'SDK calls in process (round trips at the transport; latency on the devnet)',
    table([['call', 'round trips', 'budget', 'p50 ms', 'p95 ms', ''], ...sdk]),
    '',
    report.overBudget.length
      ? `Over budget: ${report.overBudget.join(', ')}`
      : 'Every measured value is within its budget.',
    '',
  ].join('\n')
}

/** One row per scheme: `exact` from `paidRequestLatency`, the others from `schemeLatency`. */
function schemeLatencyRows(
  report: BenchReport,
  checkNamed: (name: string) => BudgetCheck | undefined,
  budgetText: (check: BudgetCheck | undefined) => string,
  verdict: (check: BudgetCheck | undefined) => string,
): string[][] {
  const rows: [string, PaidRequestLatency | null, string, string][] = [
    ['exact', report.paidRequestLatency, 'paidRequestLatency.ratio', 'paidRequestLatency'],
    ['upto', report.schemeLatency?.upto ?? null, 'schemeLatency.upto.ratio', 'schemeLatency'],
    [
      'batch-settlement',
      report.schemeLatency?.batchSettlement ?? null,
      'schemeLatency.batchSettlement.ratio',
      'schemeLatency',
    ],
  ]
  return rows.map(([scheme, latency, budget, key]) => {
    if (!latency) {
      const why = report.notMeasured[key as keyof BenchReport['notMeasured']]
      return [scheme, `not measured: ${why}`]
    }
    const check = checkNamed(budget)
    return [
      `${scheme} (${latency.requests} pairs)`,
      `${latency.withSweeperP50Ms} ms`,
      `${latency.plainP50Ms} ms`,
      `${latency.ratio}×`,
      budgetText(check),
      verdict(check),
    ]
  })
}

/** Such as `2 package documents (x402-vault ×2, 7.8 KB), 1 tarball (1.83 MB)`. */
function describeFetched(fetched: NpxStart['coldFetched']): string {
  const names = new Map<string, number>()
  for (const { name } of fetched.packuments) names.set(name, (names.get(name) ?? 0) + 1)
  const listed = [...names].map(([name, count]) => (count > 1 ? `${name} ×${count}` : name))
  const documentBytes = fetched.packuments.reduce((sum, { bytes }) => sum + bytes, 0)
  const tarballBytes = fetched.tarballs.reduce((sum, { bytes }) => sum + bytes, 0)
  return `${fetched.packuments.length} package documents (${listed.join(', ')}: ${megabytes(documentBytes)}), ${fetched.tarballs.length} tarball${fetched.tarballs.length === 1 ? '' : 's'} (${megabytes(tarballBytes)})`
}

function megabytes(bytes: number): string {
  return bytes < 1e5 ? `${(bytes / 1e3).toFixed(1)} KB` : `${(bytes / 1e6).toFixed(2)} MB`
}

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, column) =>
    Math.max(...rows.map((row) => (row[column] ?? '').length)),
  )
  return rows
    .map((row) =>
      `  ${row.map((cell, column) => cell.padEnd(widths?.[column] ?? 0)).join('  ')}`.trimEnd(),
    )
    .join('\n')
}
