/**
 * `npm run bench`: measures the budgets of PRODUCT.md §9 that this release can measure, on a devnet,
 * and prints one JSON report on stdout (progress goes to stderr).
 *
 * Measured now: how long `import('x402-vault')` (the built `dist/index.js`) takes in a fresh process,
 * next to Node's own start-up; RPC round trips (HTTP requests to the RPC) and latency of the SDK reads
 * and plans that the MCP tools wrap, and of start-up verification; the MCP server's cold start (spawn
 * of the built bin to `tools/list` answered). Run `npm run build` first. The paid-request latency
 * ratio and the burst of concurrent settlements need the seller sweeper and the plugins; the report
 * lists them as not measured yet rather than inventing a number.
 *
 * Exit code 1 when a measured value breaks its budget.
 */
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { createPublicClient, createWalletClient, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { startDevnet } from '../src/devnet/index.js'
import { createVaultClient, parseUsdc, vaultHttp } from '../src/index.js'
import { RequestCounter } from '../test/support/requestCounter.js'

const samples = 25
const mcpBin = join(import.meta.dirname, '../dist/mcp/bin.js')
/** PRODUCT.md §9: `import('x402-vault')`, median of fresh processes. */
const importBudgetMs = 250
const importSamples = 5

// Measured first, before the devnet's processes compete for the CPU.
const sdkImport = measureSdkImport()

const devnet = await startDevnet({ chain: 'base-sepolia' })
try {
  const counter = new RequestCounter()
  const publicClient = createPublicClient({
    chain: devnet.viemChain,
    pollingInterval: 50,
    transport: vaultHttp(devnet.rpcUrl, { fetchFn: counter.fetchFn }),
  })
  const merchant = privateKeyToAccount(devnet.accounts.merchant.privateKey)
  const vault = createVaultClient({
    publicClient,
    walletClient: createWalletClient({
      account: merchant,
      chain: devnet.viemChain,
      transport: http(devnet.rpcUrl),
    }),
    chain: devnet.chain,
    addresses: devnet.addresses,
  })

  // A position to read and withdraw from, so every plan takes its full path.
  process.stderr.write('bench: setting up a merchant position on the devnet…\n')
  await vault.ensureInitializedAndWait()
  await vault.depositAndWait({ amount: parseUsdc('500') })
  const wallet = merchant.address

  const cases: {
    name: string
    mcpTool: string | null
    budget: number
    run: () => Promise<unknown>
  }[] = [
    { name: 'verifyAddresses', mcpTool: null, budget: 2, run: () => vault.verifyAddresses() },
    { name: 'getStatus', mcpTool: 'vault_status', budget: 1, run: () => vault.getStatus() },
    { name: 'getYield', mcpTool: 'vault_check_yield', budget: 1, run: () => vault.getYield() },
    {
      name: 'getPosition',
      mcpTool: 'vault_get_position',
      budget: 1,
      run: () => vault.getPosition(wallet),
    },
    {
      name: 'planApproveUsdc',
      mcpTool: 'vault_plan_approve_usdc',
      budget: 2,
      run: () => vault.planApproveUsdc({ wallet, amount: parseUsdc('25') }),
    },
    {
      name: 'planDeposit',
      mcpTool: 'vault_plan_deposit',
      budget: 2,
      run: () => vault.planDeposit({ wallet, amount: parseUsdc('25') }),
    },
    {
      name: 'planWithdraw (amount)',
      mcpTool: 'vault_plan_withdraw',
      budget: 2,
      run: () => vault.planWithdraw({ wallet, amount: parseUsdc('25') }),
    },
    {
      name: 'planWithdraw (shares)',
      mcpTool: 'vault_plan_withdraw',
      budget: 2,
      run: () => vault.planWithdraw({ wallet, shares: parseUsdc('25') }),
    },
  ]

  const roundTrips = []
  for (const entry of cases) {
    process.stderr.write(`bench: ${entry.name}\n`)
    const counts = new Set<number>()
    const durations: number[] = []
    for (let i = 0; i < samples; i++) {
      const started = performance.now()
      const { requests } = await counter.measure(entry.run)
      durations.push(performance.now() - started)
      counts.add(requests)
    }
    const worst = Math.max(...counts)
    roundTrips.push({
      sdk: entry.name,
      mcpTool: entry.mcpTool,
      roundTrips: worst,
      budget: entry.budget,
      withinBudget: worst <= entry.budget,
      p50Ms: round(percentile(durations, 50)),
      p95Ms: round(percentile(durations, 95)),
    })
  }

  const notYet = (what: string) => ({ measured: false, reason: `needs ${what}` })
  const report = {
    chain: devnet.chain,
    chainId: devnet.chainId,
    sdkImport,
    samplesPerCase: samples,
    rpcRoundTrips: roundTrips,
    paidRequestLatencyRatio: notYet('the seller sweeper and the Express plugin (PRODUCT.md §5)'),
    concurrentSettlementBurst: notYet('the seller sweeper (PRODUCT.md §5.2)'),
    mcpColdStart: existsSync(mcpBin) ? await mcpColdStart(devnet.rpcUrl) : notYet('npm run build'),
  }
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
  if (roundTrips.some((entry) => !entry.withinBudget) || !sdkImport.withinBudget) {
    process.exitCode = 1
  }
  if ('withinBudget' in report.mcpColdStart && !report.mcpColdStart.withinBudget) {
    process.exitCode = 1
  }
} finally {
  await devnet.stop()
}

/**
 * Spawns the built MCP server and times spawn → `tools/list` answered, as an MCP client sees it.
 * The server needs no RPC answer for that (verification runs after the handshake).
 */
async function mcpColdStart(rpcUrl: string) {
  const runs = 7
  const durations: number[] = []
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    const client = new Client({ name: 'bench', version: '1.0.0' })
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [mcpBin],
        env: { BASE_SEPOLIA_RPC_URL: rpcUrl, MCP_LOG_LEVEL: 'error' },
        stderr: 'ignore',
      }),
    )
    await client.listTools()
    durations.push(performance.now() - started)
    await client.close()
  }
  const median = percentile(durations, 50)
  return {
    measured: true,
    runs,
    medianMs: round(median),
    allMs: durations.map(round),
    budgetMs: 500,
    withinBudget: median <= 500,
  }
}

/**
 * `import('x402-vault')` of the built package in fresh Node processes, next to `node -e 0`: the median
 * wall time of each, from spawn to exit.
 */
function measureSdkImport() {
  const entry = fileURLToPath(new URL('../dist/index.js', import.meta.url))
  if (!existsSync(entry))
    throw new Error('bench: dist/index.js is missing; run `npm run build` first.')
  process.stderr.write(`bench: import('x402-vault'), ${importSamples} fresh processes\n`)
  const timeNode = (code: string) => {
    const started = performance.now()
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', code])
    if (child.status !== 0) throw new Error(`bench: node -e failed: ${child.stderr}`)
    return performance.now() - started
  }
  const median = (code: string) =>
    percentile(
      Array.from({ length: importSamples }, () => timeNode(code)),
      50,
    )
  const nodeStartMs = round(median(''))
  const sdkImportMs = round(median(`await import(${JSON.stringify(entry)})`))
  return {
    sdkImportMs,
    nodeStartMs,
    budgetMs: importBudgetMs,
    withinBudget: sdkImportMs <= importBudgetMs,
    samples: importSamples,
  }
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)
  return sorted[Math.max(0, index)] ?? Number.NaN
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100
}
