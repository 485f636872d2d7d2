import { parseArgs } from 'node:util'
import { type Account, createPublicClient, createWalletClient, type Hash } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { type VaultChainName, vaultChains } from '../sdk/chains.js'
import { createVaultClient, type VaultClient } from '../sdk/createVaultClient.js'
import { VaultError } from '../sdk/errors/classes.js'
import { loadVaultAddresses } from '../sdk/loadVaultAddresses.js'
import { formatUsdc, parseUsdc } from '../sdk/money.js'
import { redactUrl } from '../sdk/redact.js'
import type { NoDepositReason } from '../sdk/seller/decideSweep.js'
import { vaultHttp } from '../sdk/transport.js'
import { UsageError } from './usageError.js'

export const sweepUsage = `Usage: x402-vault sweep [options]

Deposits the merchant wallet's idle USDC into the vault now. The rule: idle = balance - reserve, and
all of it is deposited when idle >= max(--min-idle, the vault's minimum deposit). Registers the
wallet with the vault first if it is not yet.

Environment:
  MERCHANT_PRIVATE_KEY    the merchant wallet's private key (0x + 64 hex digits); never printed
  BASE_SEPOLIA_RPC_URL    the RPC URL for --chain base-sepolia
  BASE_MAINNET_RPC_URL    the RPC URL for --chain base

Options:
  --chain <base-sepolia|base>   the vault's chain (default base-sepolia)
  --min-idle <usdc>             deposit only once this much is idle (default 0: the vault's minimum)
  --reserve <usdc>              USDC to keep in the wallet (default 0)
  --addresses <path>            the vault's addresses file (a devnet or a private deployment)
  --dry-run                     say what a sweep would do, and send nothing
  --json                        print the result as JSON
  -h, --help                    show this help

Exit codes: 0 swept (or nothing to sweep), 1 the sweep failed, 2 bad options or environment.`

const rpcVariables: Record<VaultChainName, string> = {
  base: 'BASE_MAINNET_RPC_URL',
  'base-sepolia': 'BASE_SEPOLIA_RPC_URL',
}

/** What the summary reports, amounts in base units. */
type SweepReport = {
  chain: VaultChainName
  wallet: string
  dryRun: boolean
  balance: bigint
  reserve: bigint
  idle: bigint
  minDeposit: bigint
  /** Deposited (or, in a dry run, what would be). */
  deposited: bigint
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
      chain: { type: 'string', default: 'base-sepolia' },
      'min-idle': { type: 'string', default: '0' },
      reserve: { type: 'string', default: '0' },
      addresses: { type: 'string' },
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
  if (values.chain !== 'base-sepolia' && values.chain !== 'base') {
    throw new UsageError(`--chain must be base-sepolia or base, not "${values.chain}".`)
  }
  const chain: VaultChainName = values.chain
  const minIdleThreshold = usdcFlag(values['min-idle'], '--min-idle')
  const reserve = usdcFlag(values.reserve, '--reserve')
  const account = merchantAccount(env.MERCHANT_PRIVATE_KEY)
  const rpcUrl = rpcUrlOf(env, chain)
  const addresses = values.addresses
    ? await configured(() => loadVaultAddresses(values.addresses as string, { chain }))
    : undefined

  const viemChain = vaultChains[chain].viemChain
  const transport = vaultHttp(rpcUrl)
  const vault = createVaultClient({
    publicClient: createPublicClient({ chain: viemChain, transport }),
    walletClient: createWalletClient({ account, chain: viemChain, transport }),
    chain,
    addresses,
  })
  await vault.verifyAddresses()
  const report = values['dry-run']
    ? await previewSweep(vault, account, { minIdleThreshold, reserve })
    : await sweep(vault, account, { minIdleThreshold, reserve })
  process.stdout.write(values.json ? `${toJson(report)}\n` : summary(report))
  return 0
}

async function previewSweep(
  vault: VaultClient,
  account: Account,
  options: { minIdleThreshold: bigint; reserve: bigint },
): Promise<SweepReport> {
  const preview = await vault.previewDepositIdle(options)
  return {
    chain: vault.chain,
    wallet: account.address,
    dryRun: true,
    balance: preview.balance,
    reserve: preview.reserveFloor,
    idle: preview.idle,
    minDeposit: preview.minDeposit,
    deposited: preview.deposit ? preview.amount : 0n,
    txHash: null,
    reason: preview.deposit ? null : preview.reason,
    registrationTxHash: null,
    needsRegistration: !preview.registered,
  }
}

async function sweep(
  vault: VaultClient,
  account: Account,
  options: { minIdleThreshold: bigint; reserve: bigint },
): Promise<SweepReport> {
  const registration = await vault.ensureInitializedAndWait()
  const result = await vault.depositIdle(options)
  return {
    chain: vault.chain,
    wallet: account.address,
    dryRun: false,
    balance: result.balance,
    reserve: result.reserveFloor,
    idle: result.idle,
    minDeposit: result.minDeposit,
    deposited: result.deposited ? result.amount : 0n,
    txHash: result.deposited ? result.txHash : null,
    reason: result.deposited ? null : result.reason,
    registrationTxHash: registration.txHash,
    needsRegistration: false,
  }
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
    `  balance     ${usdc(report.balance)}`,
    `  reserve     ${usdc(report.reserve)}`,
    `  idle        ${usdc(report.idle)} (the vault's minimum deposit: ${usdc(report.minDeposit)})`,
  )
  if (report.reason) {
    lines.push(`  deposited   nothing: ${reasonText[report.reason]}`)
  } else if (report.dryRun) {
    lines.push(`  deposit     ${usdc(report.deposited)} (dry run: nothing sent)`)
  } else {
    lines.push(`  deposited   ${usdc(report.deposited)}`, `  tx          ${report.txHash}`)
  }
  if (report.needsRegistration) {
    lines.push('  (the wallet is not registered with the vault yet: a sweep registers it first)')
  }
  return `${lines.join('\n')}\n`
}

/** The report as JSON: amounts as decimal USDC strings, with their base units alongside. */
function toJson(report: SweepReport): string {
  const amount = (value: bigint) => ({ usdc: formatUsdc(value), atomic: value.toString() })
  return JSON.stringify(
    {
      ...report,
      balance: amount(report.balance),
      reserve: amount(report.reserve),
      idle: amount(report.idle),
      minDeposit: amount(report.minDeposit),
      deposited: amount(report.deposited),
    },
    null,
    2,
  )
}

function usdcFlag(text: string, flag: string): bigint {
  try {
    return parseUsdc(text)
  } catch (error) {
    throw new UsageError(`${flag}: ${(error as Error).message}`)
  }
}

/** The merchant's account from its key; the key is never part of a message. */
function merchantAccount(key: string | undefined): Account {
  if (key === undefined || key === '') {
    throw new UsageError(
      'MERCHANT_PRIVATE_KEY is not set: export the merchant wallet’s private key (0x + 64 hex digits).',
    )
  }
  const hex = key.trim()
  const normalized = /^[0-9a-fA-F]{64}$/.test(hex) ? `0x${hex}` : hex
  if (!/^0x[0-9a-fA-F]{64}$/.test(normalized)) {
    throw new UsageError(
      `MERCHANT_PRIVATE_KEY is not a private key: expected 0x followed by 64 hex digits (it has ${key.length} characters).`,
    )
  }
  try {
    return privateKeyToAccount(normalized as `0x${string}`)
  } catch {
    throw new UsageError('MERCHANT_PRIVATE_KEY is not a valid secp256k1 private key.')
  }
}

function rpcUrlOf(env: NodeJS.ProcessEnv, chain: VaultChainName): string {
  const name = rpcVariables[chain]
  const url = env[name]
  if (url === undefined || url === '') {
    throw new UsageError(`${name} is not set: export the RPC URL of ${chain}.`)
  }
  let protocol: string
  try {
    protocol = new URL(url).protocol
  } catch {
    throw new UsageError(`${name} is not a URL.`)
  }
  if (protocol !== 'http:' && protocol !== 'https:') {
    throw new UsageError(`${name} must be an http(s) URL, not ${redactUrl(url)}.`)
  }
  return url
}

/** Runs a configuration step; its `VaultError` is a usage problem (exit code 2). */
async function configured<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step()
  } catch (error) {
    if (error instanceof VaultError) throw new UsageError(error.message)
    throw error
  }
}
