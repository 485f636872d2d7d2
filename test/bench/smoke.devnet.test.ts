/**
 * The bench as `npm run bench` runs it, from the outside: a process and its JSON report. The test
 * imports nothing from bench/ (which imports test/support/), so the two trees form no cycle.
 */
import { spawn } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { mcpToolNames } from '../../harness/mcpToolNames.js'
import { tempFolder } from '../../harness/tempFolder.js'

const root = join(import.meta.dirname, '../..')

/** The parts of `npm run bench -- --json`'s report that this test reads. */
type BenchReport = {
  rpcRoundTrips: Record<string, number>
  paidRequestLatency: {
    requests: number
    plainP50Ms: number
    withSweeperP50Ms: number
    ratio: number
  } | null
  burst: { depositTxs: number } | null
  mcpColdStartMs: number
  sdkImportMs: number
  nodeStartMs: number
  sweep: { gasPerSweep: number } | null
  notMeasured: Record<string, string>
  budgets: { name: string; within: boolean | null }[]
  overBudget: string[]
  sdk: Record<string, { roundTrips: number; budget: number }>
  x402Gas: Record<string, { buyerOnce: number; facilitatorPerPayment: number }> | null
  schemeGas: {
    requests: number
    priceUsdc: string
    exact: { gasPerRequest: number; receivedUsdc: string; settlements: GasPart }
    upto: { gasPerRequest: number; receivedUsdc: string; chargeUsdc: string; settlements: GasPart }
    batchSettlement: {
      gasPerRequest: number
      receivedUsdc: string
      deposits: GasPart
      claims: GasPart
      settles: GasPart
    }
  } | null
  schemeLatency: Record<
    'upto' | 'batchSettlement',
    { requests: number; plainP50Ms: number; withSweeperP50Ms: number; ratio: number }
  > | null
  buyer: { requests: number; recallsPerBurst: number; recallPaymentP50Ms: number } | null
  mcpListing: { bytes: number; v1ListToolsCpuMs: number; serverMs: number }
  mcpHttp: McpHttpLoad
  mcpHttpPublic: McpHttpLoad
}

/** The rows of `x402-vault mcp --http` under 50 clients at once, in one mode. */
type McpHttpLoad = {
  mode: string
  clients: number
  toolsList: { serverP50Ms: number; clientP50Ms: number }
  readTool: { p50Ms: number; rpcP50Ms: number; ratio: number }
}

type GasPart = { transactions: number; gas: number }

/** Runs `bench/run.ts` (through tsx, as `npm run bench` does) and collects its output. */
function runBench(
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts', ...args], {
      cwd: root,
    })
    let stdout = ''
    let stderr = ''
    // A bench that makes no progress hangs: its time as a whole depends on how busy the machine is.
    let stalled: ReturnType<typeof setTimeout> | undefined
    const watch = () => {
      clearTimeout(stalled)
      stalled = setTimeout(() => {
        child.kill('SIGKILL')
        const last = stderr.trim().split('\n').at(-1) ?? '(nothing)'
        reject(new Error(`The bench printed no progress for ${stallMs / 1000} s; last: ${last}`))
      }, stallMs)
    }
    watch()
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8')
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8')
      watch()
    })
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(stalled)
      resolve({ code, stdout, stderr })
    })
  })
}

/**
 * The bench's JSON report; when it printed none (it failed before the end), an error with its exit
 * code and the last lines it wrote to stderr, where its own error is.
 */
function parseReport(stdout: string, code: number | null, stderr: string): BenchReport {
  try {
    return JSON.parse(stdout) as BenchReport
  } catch {
    // Enough for Node's report of an uncaught error, its cause included, and the bench's progress
    // line before it (which section it was in).
    const last = stderr.trim().split('\n').slice(-60).join('\n')
    throw new Error(
      `The bench printed no JSON report (exit code ${code}). Its last lines:\n${last}`,
    )
  }
}

/**
 * How long the bench may go without a progress line on stderr before it counts as hung: each step
 * prints one, and the whole smoke pass takes about 45 s on a quiet 2-core machine.
 */
const stallMs = 90_000

it('a smoke pass of the bench prints one JSON report (budgets, then details), within the round-trip budgets', async () => {
  const { code, stdout, stderr } = await runBench(['--smoke', '--json'])
  // stdout is exactly one JSON object; progress went to stderr.
  const report = parseReport(stdout, code, stderr)
  expect(stderr).toContain('bench: round trips: vault_status')

  expect(Object.keys(report).slice(0, 8)).toEqual([
    'rpcRoundTrips',
    'paidRequestLatency',
    'burst',
    'mcpColdStartMs',
    'sdkImportMs',
    'nodeStartMs',
    'sweep',
    'notMeasured',
  ])
  const { startup, ...tools } = report.rpcRoundTrips
  expect(Object.keys(tools)).toEqual(mcpToolNames)
  expect(startup).toBeGreaterThanOrEqual(1)
  expect(startup).toBeLessThanOrEqual(2)
  for (const name of mcpToolNames) {
    expect(tools[name], name).toBeGreaterThanOrEqual(1)
    // Plans too: the reads and the simulation travel in one JSON-RPC batch.
    expect(tools[name], name).toBe(1)
  }
  for (const [name, call] of Object.entries(report.sdk)) {
    expect(call.roundTrips, name).toBeLessThanOrEqual(call.budget)
  }

  for (const key of ['mcpColdStartMs', 'sdkImportMs', 'nodeStartMs'] as const) {
    expect(report[key], key).toBeGreaterThan(0)
  }
  // The seller rows: paid through the devnet's facilitator, with real sweeps on chain.
  expect(report.notMeasured).toEqual({})
  const latency = report.paidRequestLatency
  expect(Object.keys(latency ?? {})).toEqual([
    'requests',
    'plainP50Ms',
    'withSweeperP50Ms',
    'ratio',
    'sweepDeposits',
  ])
  expect(latency?.requests).toBe(3)
  expect(latency?.plainP50Ms).toBeGreaterThan(0)
  expect(latency?.withSweeperP50Ms).toBeGreaterThan(0)
  expect(latency?.ratio).toBeCloseTo(
    (latency?.withSweeperP50Ms ?? 0) / (latency?.plainP50Ms ?? 1),
    1,
  )
  const burst = report.burst
  expect(burst).toMatchObject({ settlements: 50, failedDeposits: 0, unaccountedUnits: '0' })
  // How many deposits a burst costs depends on how fast the devnet settles it, so its budget (at most 3)
  // is judged by the verdict below, as the timing budgets are. What holds on any machine: each deposit
  // moves at least the threshold (10 USDC) of the 50 USDC received.
  expect(burst?.depositTxs).toBeGreaterThanOrEqual(1)
  expect(burst?.depositTxs).toBeLessThanOrEqual(5)
  expect(report.budgets).toContainEqual(
    expect.objectContaining({
      name: 'burst.depositTxs',
      max: 3,
      within: (burst?.depositTxs ?? Number.NaN) <= 3,
    }),
  )
  // The devnet's USDC supports EIP-2612: one transaction, permit and deposit.
  expect(report.sweep).toMatchObject({ txPerSweep: 1, method: 'depositWithPermit' })
  expect(report.sweep?.gasPerSweep).toBeGreaterThan(21_000)
  // Each x402 payment path's gas: the buyer's only transaction is the one-off Permit2 approval.
  const gas = report.x402Gas ?? {}
  expect(Object.keys(gas)).toEqual(['eip3009', 'permit2', 'permit2Sponsored'])
  expect([gas.eip3009?.buyerOnce, gas.permit2Sponsored?.buyerOnce]).toEqual([0, 0])
  expect(gas.permit2?.buyerOnce).toBeGreaterThan(21_000)
  for (const path of Object.values(gas)) expect(path.facilitatorPerPayment).toBeGreaterThan(21_000)
  // Gas per request by scheme, the same 20 requests at 0.001 each (100 in a full run): one settlement per
  // request for exact and upto; for batch-settlement a deposit every ten (x402's client deposits ten times
  // the price), and the claim and settlement that close() sent. Each part sums its receipts.
  const byScheme = report.schemeGas
  expect(byScheme).toMatchObject({
    requests: 20,
    priceUsdc: '0.001',
    exact: { receivedUsdc: '0.02', settlements: { transactions: 20 } },
    upto: { receivedUsdc: '0.01', chargeUsdc: '0.0005', settlements: { transactions: 20 } },
    batchSettlement: {
      receivedUsdc: '0.02',
      deposits: { transactions: 2 },
      claims: { transactions: 1 },
      settles: { transactions: 1 },
    },
  })
  const perRequest = (parts: GasPart[]) =>
    Math.round(parts.reduce((sum, part) => sum + part.gas, 0) / 20)
  if (byScheme) {
    const { exact, upto, batchSettlement: batch } = byScheme
    expect(exact.gasPerRequest).toBe(perRequest([exact.settlements]))
    expect(upto.gasPerRequest).toBe(perRequest([upto.settlements]))
    expect(batch.gasPerRequest).toBe(perRequest([batch.deposits, batch.claims, batch.settles]))
    for (const part of [exact.settlements, batch.deposits, batch.claims, batch.settles]) {
      expect(part.gas / part.transactions).toBeGreaterThan(21_000)
    }
    expect(batch.gasPerRequest).toBeLessThan(exact.gasPerRequest)
  }
  // The latency ratio of the other schemes, measured as exact's is.
  for (const scheme of ['upto', 'batchSettlement'] as const) {
    const latency = report.schemeLatency?.[scheme]
    expect(latency?.requests, scheme).toBe(3)
    expect(latency?.ratio, scheme).toBeCloseTo(
      (latency?.withSweeperP50Ms ?? 0) / (latency?.plainP50Ms ?? 1),
      1,
    )
  }
  expect(report.budgets.map((check) => check.name)).toEqual(
    expect.arrayContaining(['schemeLatency.upto.ratio', 'schemeLatency.batchSettlement.ratio']),
  )

  // The buyer side: every payment from the empty wallet recalled, a burst of 10 at most twice.
  expect(report.buyer).toMatchObject({ requests: 3 })
  expect(report.buyer?.recallsPerBurst).toBeGreaterThanOrEqual(1)
  expect(report.buyer?.recallsPerBurst).toBeLessThanOrEqual(2)
  expect(report.buyer?.recallPaymentP50Ms).toBeGreaterThan(0)

  // The listing a client pays for: its size holds anywhere; the client's CPU is measured.
  expect(report.mcpListing.bytes).toBeGreaterThan(10_000)
  expect(report.mcpListing.bytes).toBeLessThanOrEqual(25_000)
  expect(report.mcpListing.v1ListToolsCpuMs).toBeGreaterThan(0)
  expect(report.mcpListing.serverMs).toBeGreaterThanOrEqual(0)
  expect(report.budgets.map((check) => check.name)).toEqual(
    expect.arrayContaining(['mcpListing.bytes', 'mcpListing.v1ListToolsCpuMs']),
  )

  // MCP over HTTP under 50 clients, with the token and public (each client by its own address, under
  // the default limits: none refused, or the bench would have thrown), with the same budgets.
  for (const [key, mode] of [
    ['mcpHttp', 'bearer'],
    ['mcpHttpPublic', 'public'],
  ] as const) {
    expect(report[key]).toMatchObject({ mode, clients: 50 })
    expect(report[key].toolsList.serverP50Ms).toBeGreaterThanOrEqual(0)
    expect(report[key].readTool.ratio).toBeGreaterThan(0)
    expect(report.budgets.filter((check) => check.name.startsWith(`${key}.`))).toEqual([
      expect.objectContaining({ name: `${key}.toolsList.serverP50Ms`, max: 2 }),
      expect.objectContaining({ name: `${key}.readTool.ratio`, max: 1.5 }),
    ])
  }

  // Timing budgets are for a quiet machine, not for a test run: only the verdict must agree.
  const broken = report.budgets.filter((check) => check.within === false).map((check) => check.name)
  expect(report.overBudget).toEqual(broken)
  expect(code).toBe(broken.length > 0 ? 1 : 0)

  // Without --json the same report is a table.
  const saved = join(await tempFolder('x402-vault-bench-'), 'report.json')
  await writeFile(saved, stdout)
  const table = (await runBench(['--from', saved])).stdout
  expect(table).toMatch(/^ {2}vault_plan_withdraw +1 +≤ 1 +ok$/m)
  expect(table).toMatch(
    /^ {2}tools\/list size \(the 2025-era answer, bytes\) +\d+ B +≤ 25000 B +ok$/m,
  )
  expect(table).toMatch(/^ {2}burst +\{"settlements":50,/m)
  expect(table).toMatch(
    /^ {2}tools\/list, public \(each client by its address\): the server's time per request \(p50; 50 clients at once\) +[\d.]+ ms +≤ 2 ms +(ok|OVER BUDGET)$/m,
  )
  expect(table).toMatch(/^ {2}Permit2, approved once \(Base Sepolia\) +\d+ +0 +\d+$/m)
  expect(table).toMatch(/^ {2}batch-settlement +\d+ +deposits: 2 tx, \d+ gas; claims: 1 tx, /m)
  expect(table).toMatch(
    /^ {2}upto \(3 pairs\) +[\d.]+ ms +[\d.]+ ms +[\d.]+× +≤ 1\.05× +(ok|OVER BUDGET)$/m,
  )
  // Only a ceiling: `runBench` fails a bench that stops making progress, however busy the machine.
}, 900_000)
