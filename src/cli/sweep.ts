import { parseArgs } from 'node:util'
import type { Address, Hash } from 'viem'
import {
  ensureInitializedAndWait,
  formatUsdc,
  type NoIdleDepositReason,
  previewSweep,
  type SweepAmounts,
  sweep,
  type VaultChainName,
  type VaultContext,
  VaultPreconditionError,
  verifyAddresses,
} from '../index.js'
import { defaultChainName } from '../sdk/shared.js'
import { chainFlagValue, rpcUrlVariableLines, rpcUrlVariables } from './chainHelp.js'
import {
  addressesOption,
  type Connection,
  chainOption,
  chainSource,
  connectionOptions,
  connectReadOnly,
  connectSigning,
  rpcUrlOption,
  usdcFlag,
  withChainCheck,
} from './connect.js'
import { usdcJson } from './format.js'
import { operatorSetupJson, operatorSetupText, readOperatorSetup } from './operatorSetup.js'
import { type SweepKey, sweepKeyOf, walletOption } from './sweepKey.js'
import { UsageError } from './usageError.js'

export const sweepUsage = `Usage: x402-vault sweep [options]
       x402-vault sweep --watch [options]
       x402-vault sweep --setup --wallet <address> [--operator <address>]

Sweeps the merchant wallet: deposits its idle USDC into the vault. The rule: idle = balance -
reserve, and all of it is deposited when idle >= max(--min-idle, the vault's minimum deposit).
With the merchant's key it registers the wallet with the vault first if it is not yet.

--watch keeps running: it watches the wallet's USDC inflows on chain, sweeps after them and on a
timer, prints one JSON line per event (readable lines on a terminal), and on SIGTERM finishes the
sweep in flight and exits 0. For sellers with many web instances (createPaywall with sweep: false)
or a web app in another language.

--setup prints the one-time steps the wallet signs itself (register, approve the router, make the
operator its operator) as unsigned transactions, so that an operator key that holds no money can
sweep it (SWEEPER_PRIVATE_KEY).

Environment:
  MERCHANT_PRIVATE_KEY    the merchant wallet's private key (0x + 64 hex digits); never printed
  SWEEPER_PRIVATE_KEY     or an operator key of the wallet (with --wallet): it only pays gas
${rpcUrlVariableLines(26)}
  PGPASSWORD              the Postgres password for --lock, if the URL has none
  VAULT_RPC_TIMEOUT       seconds one RPC request may take before it is retried (default 10)

Options:
  --chain ${chainFlagValue}   the vault's chain (default VAULT_CHAIN, else ${defaultChainName})
  --rpc <url>                   RPC URL (default: ${rpcUrlVariables})
  --min-idle <usdc>             deposit only once this much is idle (default 0: the vault's minimum)
  --reserve <usdc>              USDC to keep in the wallet (default 0)
  --wallet <address>            the wallet to sweep (needed with SWEEPER_PRIVATE_KEY and --setup)
  --addresses <path>            the vault's addresses file (a devnet or a private deployment)
                                (default VAULT_ADDRESSES)
  --dry-run                     say what a sweep would do, and send nothing
  --json                        print JSON (with --watch: JSON lines on a terminal too)
  -h, --help                    show this help

With --watch:
  --interval <seconds>          also sweep on a timer (default 60)
  --poll <seconds>              how often to look for new blocks (default 2)
  --debounce <ms>               inflows this close together become one sweep (default 1000)
  --log-range <blocks>          the largest eth_getLogs range (default 2000; halved when refused)
  --health-port <port>          serve GET /healthz and GET /metrics (Prometheus) on this port
  --health-host <host>          the health server's address (default 127.0.0.1)
  --lock <postgres-url>         sweep only while holding a Postgres advisory lock for this chain and
                                wallet: run two sweepers for availability, one sends (needs pg)
  --max-idle-wait <seconds>     warn when idle USDC has waited longer than this (default 3600)

With --setup:
  --operator <address>          the operator (default: the address of SWEEPER_PRIVATE_KEY)
  --allowance <usdc|unlimited>  the router allowance to ask for (default unlimited)

Exit codes: 0 swept (or nothing to sweep, or stopped by SIGTERM), 1 the sweep failed or the wallet
is not set up for the operator key, 2 bad options or environment.`

/** What the summary reports: the sweep's amounts (base units), what it did and why. */
type SweepReport = SweepAmounts & {
  chain: VaultChainName
  chainId: number
  dryRun: boolean
  /** Whether all of `idleAmount` was deposited (or, in a dry run, would be). */
  deposited: boolean
  txHash: Hash | null
  /** The deposit's block and the shares it minted; `null` without a deposit (and in a dry run). */
  blockNumber: bigint | null
  sharesMinted: bigint | null
  reason: NoIdleDepositReason | null
  /** The registration sent first, if one was. */
  registrationTxHash: Hash | null
  /** In a dry run: whether a sweep would register the wallet first. */
  needsRegistration: boolean
}

/**
 * Runs `x402-vault sweep`: one sweep of the merchant wallet by the rule, with a short summary; with
 * `--watch`, the long-running sweeper; with `--setup`, the operator key's one-time steps.
 *
 * @param argv - The arguments after `sweep`.
 * @param env - Where the keys and the RPC URL come from.
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
      wallet: { type: 'string' },
      'dry-run': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      watch: { type: 'boolean', default: false },
      interval: { type: 'string', default: '60' },
      poll: { type: 'string', default: '2' },
      debounce: { type: 'string', default: '1000' },
      'log-range': { type: 'string', default: '2000' },
      'health-port': { type: 'string' },
      'health-host': { type: 'string', default: '127.0.0.1' },
      lock: { type: 'string' },
      'max-idle-wait': { type: 'string', default: '3600' },
      setup: { type: 'boolean', default: false },
      operator: { type: 'string' },
      allowance: { type: 'string', default: 'unlimited' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  })
  if (values.help) {
    process.stdout.write(`${sweepUsage}\n`)
    return 0
  }
  const chain = chainOption(values.chain, env)
  if (values.setup) return runSetup(chain, values, env)
  if (values.watch && values['dry-run']) {
    throw new UsageError('--watch and --dry-run do not go together.')
  }
  const minIdleThreshold = usdcFlag(values['min-idle'], '--min-idle')
  const reserve = usdcFlag(values.reserve, '--reserve')
  const key = sweepKeyOf(env, values.wallet)
  const connection: Connection = {
    chain,
    chainSource: chainSource(values.chain, env),
    rpcUrl: rpcUrlOption(chain, values.rpc, env, { fallbackToPublic: false }),
    addressesPath: addressesOption(values.addresses, env),
    // The long-running sweeper sends its requests one by one, as it always has.
    batch: !values.watch,
  }
  const vault = await connectSigning(connection, key.account)
  await withChainCheck(vault, connection, () => verifyAddresses(vault))
  if (key.kind === 'operator' && !values['dry-run']) await assertOperatorReady(vault, key)
  const options = { wallet: key.wallet, minIdleThreshold, reserve }
  if (values.watch) {
    const { runWatchCommand } = await import('./watch/watchCommand.js')
    return runWatchCommand(vault, key, options, values)
  }
  const report = values['dry-run']
    ? await reportPreview(vault, options)
    : await reportSweep(vault, options)
  process.stdout.write(values.json ? `${toJson(report)}\n` : summary(report))
  return 0
}

/** `--setup`: the operator's one-time steps, read from the chain, as unsigned transactions. */
async function runSetup(
  chain: VaultChainName,
  values: {
    chain?: string | undefined
    rpc?: string | undefined
    addresses?: string | undefined
    wallet?: string | undefined
    operator?: string | undefined
    allowance: string
    json: boolean
  },
  env: NodeJS.ProcessEnv,
): Promise<number> {
  if (values.wallet === undefined) {
    throw new UsageError('--setup needs the merchant wallet: --wallet <address>.')
  }
  const wallet = walletOption(values.wallet)
  const operator =
    values.operator !== undefined
      ? walletOption(values.operator, '--operator')
      : env.SWEEPER_PRIVATE_KEY
        ? sweepKeyOf(env, wallet).account.address
        : undefined
  if (operator === undefined) {
    throw new UsageError(
      '--setup needs the operator: --operator <address>, or SWEEPER_PRIVATE_KEY.',
    )
  }
  if (operator === wallet) throw new UsageError('--operator must be another account than --wallet.')
  const allowance =
    values.allowance === 'unlimited' ? 'unlimited' : usdcFlag(values.allowance, '--allowance')
  const connection: Connection = {
    chain,
    chainSource: chainSource(values.chain, env),
    rpcUrl: rpcUrlOption(chain, values.rpc, env, { fallbackToPublic: true }),
    addressesPath: addressesOption(values.addresses, env),
  }
  const vault = await connectReadOnly(connection)
  const setup = await withChainCheck(vault, connection, () =>
    readOperatorSetup(vault, wallet, operator, allowance),
  )
  process.stdout.write(
    values.json
      ? `${JSON.stringify(operatorSetupJson(setup), null, 2)}\n`
      : operatorSetupText(setup),
  )
  return 0
}

/** An operator key sweeps only once the wallet has done its part; else say what is missing. */
async function assertOperatorReady(vault: VaultContext, key: SweepKey): Promise<void> {
  const setup = await readOperatorSetup(vault, key.wallet, key.account.address, 'unlimited')
  const missing = setup.steps.filter((step) => !step.done && step.action !== 'approve')
  if (missing.length === 0) return
  throw new VaultPreconditionError(
    `The wallet ${key.wallet} has not made ${key.account.address} its operator yet (missing: ${missing
      .map((step) => step.action)
      .join(
        ', ',
      )}). Print the unsigned transactions it must send with: x402-vault sweep --setup --wallet ${key.wallet} --operator ${key.account.address}`,
    {
      code: 'NOT_AUTHORISED',
      details: {
        wallet: key.wallet,
        account: key.account.address,
        missing: missing.map((step) => step.action),
      },
    },
  )
}

/** The sweep's options: the wallet and the rule's amounts. */
type SweepFlags = { wallet: Address; minIdleThreshold: bigint; reserve: bigint }

/** `--dry-run`: what a sweep would do now, as the report says it. */
async function reportPreview(vault: VaultContext, options: SweepFlags): Promise<SweepReport> {
  const preview = await previewSweep(vault, options)
  return {
    ...amountsOf(preview),
    chain: vault.chain,
    chainId: vault.chainId,
    dryRun: true,
    deposited: preview.deposit,
    txHash: null,
    blockNumber: null,
    sharesMinted: null,
    reason: preview.deposit ? null : preview.reason,
    registrationTxHash: null,
    needsRegistration: !preview.registered,
  }
}

/** One sweep now, the wallet registered first when it is not, as the report says it. */
async function reportSweep(vault: VaultContext, options: SweepFlags): Promise<SweepReport> {
  // An operator key cannot register the wallet: assertOperatorReady checked it is registered.
  const registration = await ensureInitializedAndWait(vault, { wallet: options.wallet })
  const result = await sweep(vault, options)
  return {
    ...amountsOf(result),
    chain: vault.chain,
    chainId: vault.chainId,
    dryRun: false,
    deposited: result.deposited,
    txHash: result.deposited ? result.txHash : null,
    blockNumber: result.deposited ? result.blockNumber : null,
    sharesMinted: result.deposited ? result.sharesMinted : null,
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

const reasonText: Record<NoIdleDepositReason, string> = {
  'below-threshold': 'the idle USDC is below --min-idle',
  'below-protocol-minimum': "the idle USDC is below the vault's minimum deposit",
  'reserve-above-balance': 'the wallet holds less than --reserve, so none of it is idle',
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

/** The report as JSON, in the commands' vocabulary (docs/operations.md). */
function toJson(report: SweepReport): string {
  const amount = usdcJson
  return JSON.stringify(
    {
      chain: report.chain,
      chainId: report.chainId,
      wallet: report.wallet,
      dryRun: report.dryRun,
      walletBalance: amount(report.walletBalance),
      reserveFloor: amount(report.reserveFloor),
      idleAmount: amount(report.idleAmount),
      minDeposit: amount(report.minDeposit),
      deposited: report.deposited,
      txHash: report.txHash,
      blockNumber: report.blockNumber === null ? null : report.blockNumber.toString(),
      sharesMinted: report.sharesMinted === null ? null : report.sharesMinted.toString(),
      reason: report.reason,
      registrationTxHash: report.registrationTxHash,
      needsRegistration: report.needsRegistration,
    },
    null,
    2,
  )
}
