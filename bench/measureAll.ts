/**
 * Every measurement of `npm run bench`, on a devnet of its own: `bench/run.ts` loads this module only
 * when it measures, so that `--from` (a saved report as a table) starts without a devnet's modules.
 */
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
import { buildReport, formatReport } from './report.js'
import { measureRoundTrips } from './roundTrips.js'
import { measureSchemeGas } from './schemeGas.js'
import { measureSchemeLatency } from './schemeLatency.js'
import { measureSdkCalls } from './sdkCalls.js'
import { merchantVaultClient } from './seller.js'
import { measureSweep } from './sweep.js'
import { measureX402Gas } from './x402Gas.js'

/** What `bench/run.ts` passes on from its command line. */
export type MeasureAllOptions = {
  /** `--smoke`: as few samples as give a valid report. */
  smoke: boolean
  /** `--json`: print the report as one JSON object instead of a table. */
  json: boolean
  /** The built package (`dist/`). */
  distDir: string
  /** Writes one progress line to stderr. */
  progress: (message: string) => void
}

/**
 * Starts a devnet, takes every measurement on it, prints the report to stdout and sets the exit code
 * (1 when a value breaks its budget).
 *
 * @param options - Smoke or full, JSON or table, where dist/ is, where progress goes.
 * @returns Resolves once the report is printed and the devnet has stopped.
 * @example
 * await measureAll({ smoke: false, json: true, distDir, progress })
 */
export async function measureAll({
  smoke,
  json,
  distDir,
  progress,
}: MeasureAllOptions): Promise<void> {
  const devnet = await startDevnet({ chain: 'base-sepolia', facilitator: true })
  try {
    progress('preparing the merchant: register, deposit 500 USDC, approve 100 USDC')
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
    progress('revoking the merchant’s allowance: the seller measurements run without one')
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
    process.stdout.write(json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report))
    if (report.overBudget.length > 0) process.exitCode = 1
  } finally {
    await devnet.stop()
    // The addresses files given to the MCP servers and the merchant processes.
    await removeTempFolders()
  }
}

/**
 * Registers the merchant, deposits 500 USDC and approves the router for 100 more, so that every
 * read has a position to show and every plan takes its full path (with the allowance, a deposit plan
 * is that of a wallet that needs nothing before the deposit).
 */
async function prepareMerchant(devnet: Devnet): Promise<Address> {
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
  await merchantVaultClient(devnet).approveUsdcAndWait({ amount: 0n })
}
