/**
 * `npm run bench`: measures the budgets of docs/performance.md on a devnet and prints a table, or with
 * `--json` exactly one JSON object (the budgets, then the details). Progress goes to
 * stderr. Exit code 1 when a measured value breaks its budget, 2 when the bench cannot run.
 *
 *   npm run build && npm run bench [-- --json] [-- --smoke]
 *   npm run bench -- --from report.json   # a report saved with --json, as a table
 *
 * `--smoke` takes as few samples as give a valid report: `npm test` runs it so the bench cannot rot.
 * Each measurement is a module of its own. The seller-side ones (paid-request latency, the burst of
 * settlements, the sweep) pay through the devnet's x402 facilitator.
 */
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Address } from 'viem'
import { removeTempFolders } from '../harness/tempFolder.js'
import { type Devnet, startDevnet } from '../src/devnet/startDevnet.js'
import { parseUsdc } from '../src/index.js'
import { measureBurst } from './burst.js'
import { measureBuyer } from './buyer.js'
import { measureColdStart } from './coldStart.js'
import type { BenchContext } from './context.js'
import { measureImportTime } from './importTime.js'
import { measureLedger } from './ledger.js'
import { measureManyInstances } from './manyInstances.js'
import { measureMcpHttp } from './mcpHttp.js'
import { measureMcpListing } from './mcpListing.js'
import { measureNpxStart } from './npxStart.js'
import { measurePaidRequestLatency } from './paidLatency.js'
import { type BenchReport, buildReport, formatReport } from './report.js'
import { measureRoundTrips } from './roundTrips.js'
import { measureSchemeGas } from './schemeGas.js'
import { measureSchemeLatency } from './schemeLatency.js'
import { measureSdkCalls } from './sdkCalls.js'
import { merchantVaultClient } from './seller.js'
import { measureSweep } from './sweep.js'
import { measureX402Gas } from './x402Gas.js'

const options = process.argv.slice(2)
const [flag, savedReport] = options
if (flag === '--from' && savedReport && options.length === 2) {
  // No devnet: a saved run shows again as a table, and the smoke test checks the table through this
  // process instead of importing the bench.
  const report = JSON.parse(await readFile(savedReport, 'utf8')) as BenchReport
  process.stdout.write(formatReport(report))
  process.exit(report.overBudget.length > 0 ? 1 : 0)
}
const unknown = options.filter((option) => option !== '--json' && option !== '--smoke')
const distDir = join(import.meta.dirname, '../dist')
const progress = (message: string) => process.stderr.write(`bench: ${message}\n`)

if (unknown.length > 0) {
  progress(
    `unknown option ${unknown.join(' ')}; usage: npm run bench [-- --json] [-- --smoke] | [-- --from report.json]`,
  )
  process.exit(2)
}
if (!existsSync(join(distDir, 'mcp/bin.js')) || !existsSync(join(distDir, 'index.js'))) {
  progress('the bench measures the built package: run `npm run build` first')
  process.exit(2)
}

const smoke = options.includes('--smoke')
const devnet = await startDevnet({ chain: 'base-sepolia', facilitator: true })
try {
  const ctx: BenchContext = {
    devnet,
    wallet: await prepareMerchant(devnet),
    smoke,
    distDir,
    progress,
  }
  const roundTrips = await measureRoundTrips(ctx)
  const sdk = await measureSdkCalls(ctx)
  const coldStart = await measureColdStart(ctx)
  const importTime = measureImportTime(ctx)
  const mcpHttp = await measureMcpHttp(ctx, 'bearer')
  const mcpHttpPublic = await measureMcpHttp(ctx, 'public')
  const mcpListing = await measureMcpListing(ctx)
  await revokeAllowance(devnet)
  // First among the seller rows: it measures the buyer's Permit2 approval, after which the buyer pays
  // as a regular one does (concurrently, in the burst).
  const x402Gas = await measureX402Gas(ctx)
  const measured = {
    roundTrips,
    sdk,
    coldStart,
    importTime,
    mcpHttp,
    mcpHttpPublic,
    mcpListing,
    x402Gas,
    paidRequestLatency: await measurePaidRequestLatency(ctx),
    // The buyer pays upto and batch-settlement through the Permit2 approval x402Gas left in place.
    schemeGas: await measureSchemeGas(ctx),
    schemeLatency: await measureSchemeLatency(ctx),
    burst: await measureBurst(ctx),
    sweep: await measureSweep(ctx),
    manyInstances: await measureManyInstances(ctx),
    npxStart: await measureNpxStart(ctx),
    ledger: await measureLedger(ctx),
    // Last: it deposits the buyer's USDC into the vault.
    buyer: await measureBuyer(ctx),
  }
  const report = buildReport(measured, { chain: devnet.chain, chainId: devnet.chainId, smoke })
  process.stdout.write(
    options.includes('--json') ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report),
  )
  if (report.overBudget.length > 0) process.exitCode = 1
} finally {
  await devnet.stop()
  // The addresses files given to the MCP servers and the merchant processes.
  await removeTempFolders()
}

/**
 * Registers the merchant, deposits 500 USDC and approves the router for 100 more, so that every
 * read has a position to show and every plan takes its full path (with the allowance, a deposit plan
 * is that of a wallet that needs nothing before the deposit).
 */
async function prepareMerchant(devnet: Devnet): Promise<Address> {
  progress('preparing the merchant: register, deposit 500 USDC, approve 100 USDC')
  const vault = merchantVaultClient(devnet)
  await vault.ensureInitializedAndWait()
  await vault.depositAndWait({ amount: parseUsdc('500') })
  await vault.approveUsdcAndWait({ amount: parseUsdc('100') })
  return devnet.accounts.merchant.address
}

/**
 * The MCP and SDK rows use the merchant's allowance (the deposit plan of a wallet that needs nothing
 * before the deposit); the seller rows run as a fresh merchant does, without one, so that every sweep
 * signs an EIP-2612 permit, as in production.
 */
async function revokeAllowance(devnet: Devnet): Promise<void> {
  progress('revoking the merchant’s allowance: the seller measurements run without one')
  await merchantVaultClient(devnet).approveUsdcAndWait({ amount: 0n })
}
