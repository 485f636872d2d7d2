import { parseArgs } from 'node:util'
import type { Hash } from 'viem'
import {
  depositIdle,
  ensureInitializedAndWait,
  formatUsdc,
  type NoDepositReason,
  previewDepositIdle,
  type SweepAmounts,
  type VaultChainName,
  type VaultContext,
  verifyAddresses,
} from '../index.js'
import {
  chainOption,
  connectionOptions,
  connectSigning,
  merchantAccount,
  rpcUrlOption,
  usdcFlag,
} from './connect.js'
import { usdcJson } from './format.js'

export const sweepUsage = `Usage: x402-vault sweep [options]

Sweeps the merchant wallet now: deposits its idle USDC into the vault. The rule: idle = balance -
reserve, and all of it is deposited when idle >= max(--min-idle, the vault's minimum deposit).
Registers the wallet with the vault first if it is not yet.

Environment:
  MERCHANT_PRIVATE_KEY    the merchant wallet's private key (0x + 64 hex digits); never printed
  BASE_SEPOLIA_RPC_URL    the RPC URL for --chain base-sepolia (unless --rpc is given)
  BASE_MAINNET_RPC_URL    the RPC URL for --chain base (unless --rpc is given)

Options:
  --chain <base-sepolia|base>   the vault's chain (default base-sepolia)
  --rpc <url>                   RPC URL (default: BASE_SEPOLIA_RPC_URL or BASE_MAINNET_RPC_URL)
  --min-idle <usdc>             deposit only once this much is idle (default 0: the vault's minimum)
  --reserve <usdc>              USDC to keep in the wallet (default 0)
  --addresses <path>            the vault's addresses file (a devnet or a private deployment)
  --dry-run                     say what a sweep would do, and send nothing
  --json                        print the result as JSON
  -h, --help                    show this help

Exit codes: 0 swept (or nothing to sweep), 1 the sweep failed, 2 bad options or environment.`

/** What the summary reports: the sweep's amounts (base units), what it did and why. */
type SweepReport = SweepAmounts & {
  chain: VaultChainName
  dryRun: boolean
  /** Whether all of `idleAmount` was deposited (or, in a dry run, would be). */
  deposited: boolean
  txHash: Hash | null
  reason: NoDepositReason | null
  /** The registration sent first, if one was. */
  registrationTxHash: Hash | null
  /** In a dry run: whether a sweep would register the wallet first. */
  needsRegistration: boolean
}

/**
 * Runs `x402-vault sweep`: one sweep of the merchant wallet by the rule, with a short summary.
 *
 * @param argv - The arguments after `sweep`.
 * @param env - Where `MERCHANT_PRIVATE_KEY` and the RPC URL come from.
 * @returns The exit code.
 */
export async function runSweepCommand(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...connectionOptions,
      'min-idle': { type: 'string', default: '0' },
      reserve: { type: 'string', default: '0' },
      'dry-run': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  })
  if (values.help) {
    process.stdout.write(`${sweepUsage}\n`)
    return 0
  }
  const chain = chainOption(values.chain)
  const minIdleThreshold = usdcFlag(values['min-idle'], '--min-idle')
  const reserve = usdcFlag(values.reserve, '--reserve')
  const account = merchantAccount(env.MERCHANT_PRIVATE_KEY)
  const rpcUrl = rpcUrlOption(chain, values.rpc, env, { fallbackToPublic: false })
  const vault = await connectSigning(chain, rpcUrl, values.addresses, account)
  await verifyAddresses(vault)
  const options = { minIdleThreshold, reserve }
  const report = values['dry-run']
    ? await previewSweep(vault, options)
    : await sweep(vault, options)
  process.stdout.write(values.json ? `${toJson(report)}\n` : summary(report))
  return 0
}

async function previewSweep(
  vault: VaultContext,
  options: { minIdleThreshold: bigint; reserve: bigint },
): Promise<SweepReport> {
  const preview = await previewDepositIdle(vault, options)
  return {
    ...amountsOf(preview),
    chain: vault.chain,
    dryRun: true,
    deposited: preview.deposit,
    txHash: null,
    reason: preview.deposit ? null : preview.reason,
    registrationTxHash: null,
    needsRegistration: !preview.registered,
  }
}

async function sweep(
  vault: VaultContext,
  options: { minIdleThreshold: bigint; reserve: bigint },
): Promise<SweepReport> {
  const registration = await ensureInitializedAndWait(vault)
  const result = await depositIdle(vault, options)
  return {
    ...amountsOf(result),
    chain: vault.chain,
    dryRun: false,
    deposited: result.deposited,
    txHash: result.deposited ? result.txHash : null,
    reason: result.deposited ? null : result.reason,
    registrationTxHash: registration.txHash,
    needsRegistration: false,
  }
}

/** Only the amounts of a sweep's result or preview. */
function amountsOf(amounts: SweepAmounts): SweepAmounts {
  const { wallet, walletBalance, reserveFloor, idleAmount, minDeposit } = amounts
  return { wallet, walletBalance, reserveFloor, idleAmount, minDeposit }
}

const reasonText: Record<NoDepositReason, string> = {
  'below-threshold': 'the idle USDC is below --min-idle',
  'below-protocol-minimum': "the idle USDC is below the vault's minimum deposit",
  paused: 'deposits are paused on the vault',
  'tvl-cap': "the vault's TVL cap has no room for it",
}

function summary(report: SweepReport): string {
  const usdc = (amount: bigint) => `${formatUsdc(amount)} USDC`
  const lines = [
    `x402-vault sweep${report.dryRun ? ' (dry run)' : ''}: ${report.wallet} on ${report.chain}`,
  ]
  if (report.registrationTxHash) lines.push(`  registered  tx ${report.registrationTxHash}`)
  lines.push(
    `  balance     ${usdc(report.walletBalance)}`,
    `  reserve     ${usdc(report.reserveFloor)}`,
    `  idle        ${usdc(report.idleAmount)} (the vault's minimum deposit: ${usdc(report.minDeposit)})`,
  )
  if (report.reason) {
    lines.push(`  deposited   nothing: ${reasonText[report.reason]}`)
  } else if (report.dryRun) {
    lines.push(`  deposit     ${usdc(report.idleAmount)} (dry run: nothing sent)`)
  } else {
    lines.push(`  deposited   ${usdc(report.idleAmount)}`, `  tx          ${report.txHash}`)
  }
  if (report.needsRegistration) {
    lines.push('  (the wallet is not registered with the vault yet: a sweep registers it first)')
  }
  return `${lines.join('\n')}\n`
}

/** The report as JSON: amounts as decimal USDC strings, with their base units alongside. */
function toJson(report: SweepReport): string {
  const amount = usdcJson
  return JSON.stringify(
    {
      chain: report.chain,
      wallet: report.wallet,
      dryRun: report.dryRun,
      walletBalance: amount(report.walletBalance),
      reserveFloor: amount(report.reserveFloor),
      idleAmount: amount(report.idleAmount),
      minDeposit: amount(report.minDeposit),
      deposited: report.deposited,
      txHash: report.txHash,
      reason: report.reason,
      registrationTxHash: report.registrationTxHash,
      needsRegistration: report.needsRegistration,
    },
    null,
    2,
  )
}
