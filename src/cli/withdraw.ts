import { parseArgs } from 'node:util'
import type { Address, Hash } from 'viem'
import {
  formatUsdc,
  getPosition,
  getStatus,
  isUnavailable,
  planWithdraw,
  unwrapField,
  type VaultChainName,
  type VaultContext,
  VaultError,
  VaultPreconditionError,
  verifyAddresses,
  withdrawAndWait,
} from '../index.js'
import { defaultChainName, MAX_SLIPPAGE_BPS } from '../sdk/shared.js'
import { chainFlagValue, rpcUrlVariableLines, rpcUrlVariables } from './chainHelp.js'
import {
  addressesOption,
  type Connection,
  chainOption,
  chainSource,
  connectionOptions,
  connectSigning,
  merchantAccount,
  rpcUrlOption,
  usdcFlag,
  withChainCheck,
} from './connect.js'
import { optionalUsdcJson, usdcJson } from './format.js'
import { UsageError } from './usageError.js'

export const withdrawUsage = `Usage: x402-vault withdraw --amount <usdc> | --all [options]

Takes USDC out of the vault into the merchant wallet. --amount takes that much out: it arrives in
full, the fee on the yield comes on top. --all takes everything the position can deliver now, and says
how much that is before it sends; when the vault's withdrawal capacity is below the position, it says
so and takes what it can. Withdrawals work while deposits are paused.

Environment:
  MERCHANT_PRIVATE_KEY    the merchant wallet's private key (0x + 64 hex digits); never printed
${rpcUrlVariableLines(26)}
  VAULT_RPC_TIMEOUT       seconds one RPC request may take before it is retried (default 10)

Options:
  --amount <usdc>               USDC to receive, after the fee (such as 25 or 0.5)
  --all                         everything the position can deliver now
  --chain ${chainFlagValue}   the vault's chain (default VAULT_CHAIN, else ${defaultChainName})
  --rpc <url>                   RPC URL (default: ${rpcUrlVariables})
  --addresses <path>            the vault's addresses file (a devnet or a private deployment)
                                (default VAULT_ADDRESSES)
  --slippage-bps <n>            with --all, how far below the preview the USDC out may fall, in basis
                                points (0-${MAX_SLIPPAGE_BPS}, default 10); --amount always gets the amount
  --dry-run                     say what it would do, and send nothing
  --json                        print the result as JSON
  -h, --help                    show this help

Exit codes: 0 withdrawn (or nothing to withdraw), 1 refused by the chain or failed (the reason's code
is printed), 2 bad options or environment.`

/** What the command did, or would do, under the SDK's names. Amounts are base units. */
type WithdrawReport = {
  chain: VaultChainName
  chainId: number
  wallet: Address
  dryRun: boolean
  mode: 'amount' | 'all'
  /** The amount asked for, with `--amount`. */
  amount: bigint | null
  /** What the position is worth now (before the fee on its yield). */
  currentValue: bigint
  /** What withdrawing the whole position would deliver now, after the fee. */
  withdrawableUsdc: bigint
  /** What the venues can pay out now; `null` when it could not be read. */
  totalWithdrawCap: bigint | null
  /** Whether `--all` takes less than the whole position because the capacity is short. */
  capacityLimited: boolean
  /** USDC that arrives (a dry run: what the simulation returned). */
  usdcReturned: bigint
  /** The fee on the yield (a dry run: an estimate from the position). */
  feePaid: bigint
  /** The yield the withdrawal realised, before the fee; `null` in a dry run. */
  yieldEarned: bigint | null
  sharesBurned: bigint
  txHash: Hash | null
  blockNumber: bigint | null
}

/** The part of the capacity `--all` leaves unused, so interest accrued before the block does not overshoot it. */
const capacityMarginBps = 1n

/**
 * Runs `x402-vault withdraw`: one withdrawal from the merchant's position, by amount or all of it, with a
 * short summary.
 *
 * @param argv - The arguments after `withdraw`.
 * @param env - Where `MERCHANT_PRIVATE_KEY` and the RPC URL come from.
 * @returns The exit code.
 */
export async function runWithdrawCommand(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...connectionOptions,
      amount: { type: 'string' },
      all: { type: 'boolean', default: false },
      'slippage-bps': { type: 'string', default: '10' },
      'dry-run': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  })
  if (values.help) {
    process.stdout.write(`${withdrawUsage}\n`)
    return 0
  }
  if ((values.amount === undefined) === !values.all) {
    throw new UsageError(
      values.all
        ? 'Give --amount <usdc> or --all, not both.'
        : 'Say how much: --amount <usdc>, or --all.',
    )
  }
  const chain = chainOption(values.chain, env)
  const amount = values.amount === undefined ? undefined : usdcFlag(values.amount, '--amount')
  if (amount === 0n) throw new UsageError('--amount must be above zero.')
  const slippageBps = slippageFlag(values['slippage-bps'])
  const account = merchantAccount(env.MERCHANT_PRIVATE_KEY)
  const connection: Connection = {
    chain,
    chainSource: chainSource(values.chain, env),
    rpcUrl: rpcUrlOption(chain, values.rpc, env, { fallbackToPublic: false }),
    addressesPath: addressesOption(values.addresses, env),
  }
  const vault = await connectSigning(connection, account)
  const say = (text: string) => {
    if (!values.json) process.stdout.write(text)
  }
  try {
    await withChainCheck(vault, connection, () => verifyAddresses(vault))
    const report = await withdrawal(vault, {
      wallet: account.address,
      amount,
      slippageBps,
      dryRun: values['dry-run'],
      say,
    })
    process.stdout.write(values.json ? `${toJson(report)}\n` : '')
    return 0
  } catch (error) {
    if (!(error instanceof VaultError)) throw error
    const refused = error.category === 'contract' || error.category === 'precondition'
    const what = refused ? 'refused by the chain' : 'failed'
    process.stderr.write(`x402-vault withdraw: ${what} (${error.code}): ${error.message}\n`)
    if (values.json) {
      const { code, message } = error
      process.stdout.write(`${JSON.stringify({ error: { code, message, refused } }, null, 2)}\n`)
    }
    return 1
  }
}

async function withdrawal(
  vault: VaultContext,
  options: {
    wallet: Address
    amount: bigint | undefined
    slippageBps: number
    dryRun: boolean
    say: (text: string) => void
  },
): Promise<WithdrawReport> {
  const { wallet, amount, slippageBps, dryRun, say } = options
  const [position, status] = await Promise.all([getPosition(vault, { wallet }), getStatus(vault)])
  const shares = unwrapField(position.shares)
  const positionValue = unwrapField(position.currentValue)
  const positionWithdrawable = unwrapField(position.withdrawableUsdc)
  const capacityField = status.withdrawCapacity.totalWithdrawCap
  const capacity = isUnavailable(capacityField) ? null : capacityField
  const base = {
    chain: vault.chain,
    chainId: vault.chainId,
    wallet,
    dryRun,
    mode: amount === undefined ? ('all' as const) : ('amount' as const),
    amount: amount ?? null,
    currentValue: positionValue,
    withdrawableUsdc: positionWithdrawable,
    totalWithdrawCap: capacity,
  }
  const usdc = (value: bigint) => `${formatUsdc(value)} USDC`
  say(
    [
      `x402-vault withdraw${dryRun ? ' (dry run)' : ''}: ${wallet} on ${vault.chain}`,
      `  position    ${usdc(positionValue)} (${usdc(positionWithdrawable)} after the fee on its yield)`,
      `  capacity    ${capacity === null ? 'unknown' : usdc(capacity)} (what the vault's venues can pay out now)`,
      '',
    ].join('\n'),
  )
  if (amount === undefined && shares === 0n) {
    say('  withdrawn   nothing: the wallet has no position\n')
    return {
      ...base,
      capacityLimited: false,
      usdcReturned: 0n,
      feePaid: 0n,
      yieldEarned: dryRun ? null : 0n,
      sharesBurned: 0n,
      txHash: null,
      blockNumber: null,
    }
  }

  let target: { amount: bigint } | { shares: bigint }
  let capacityLimited = false
  if (amount !== undefined) {
    target = { amount }
  } else if (capacity === null || capacity >= positionValue) {
    target = { shares }
  } else {
    // The gross value of s shares is about s × value / shares: take the shares whose value fits the
    // capacity, less a margin, so the venues can pay it in the block the withdrawal lands in.
    capacityLimited = true
    const usable = capacity - (capacity * capacityMarginBps) / 10_000n - 1n
    const fitting = usable > 0n ? (usable * shares) / positionValue : 0n
    say(
      `  The vault can pay out ${usdc(capacity)} now, less than the position's ${usdc(positionValue)}: taking what it can.\n`,
    )
    if (fitting === 0n) {
      throw new VaultPreconditionError(
        `The vault's venues can pay out ${usdc(capacity)} now: too little to withdraw any of the position. Try again later.`,
        {
          code: 'INSUFFICIENT_VAULT_LIQUIDITY',
          details: { requested: positionValue, available: capacity },
        },
      )
    }
    target = { shares: fitting }
  }

  const plan = await planWithdraw(vault, { wallet, ...target, slippageBps })
  const feeEstimate = estimateFee(plan.shares, shares, positionValue, plan.simulatedUsdcOut)
  const planned = {
    usdcReturned: plan.simulatedUsdcOut,
    feePaid: feeEstimate,
    sharesBurned: plan.shares,
  }
  const planLines = [
    `  ${dryRun ? 'would take' : 'taking    '}  ${usdc(plan.simulatedUsdcOut)}${amount === undefined ? (capacityLimited ? ' (what the vault can pay now)' : ' (everything the position can deliver now)') : ''}`,
    `  fee         about ${usdc(feeEstimate)} (on the yield)`,
    `  shares      ${formatUsdc(plan.shares)} to burn, of ${formatUsdc(shares)}`,
  ]
  if (dryRun) {
    say(`${planLines.join('\n')}\n  (dry run: nothing sent)\n`)
    return {
      ...base,
      ...planned,
      capacityLimited,
      yieldEarned: null,
      txHash: null,
      blockNumber: null,
    }
  }
  say(`${planLines.join('\n')}\n  sending…\n`)
  const result = await withdrawAndWait(vault, { wallet, ...target, slippageBps })
  say(
    [
      `  arrived     ${usdc(result.usdcReturned)}`,
      `  fee         ${usdc(result.feePaid)} (on ${usdc(result.yieldEarned)} of yield)`,
      `  shares      ${formatUsdc(result.sharesBurned)} burnt`,
      `  tx          ${result.txHash}`,
      '',
    ].join('\n'),
  )
  return {
    ...base,
    capacityLimited,
    usdcReturned: result.usdcReturned,
    feePaid: result.feePaid,
    yieldEarned: result.yieldEarned,
    sharesBurned: result.sharesBurned,
    txHash: result.txHash,
    blockNumber: result.blockNumber,
  }
}

/**
 * The fee a withdrawal of `burnt` shares pays, estimated from the position: its gross value pro rata,
 * less what the simulation says arrives. The receipt gives the exact fee.
 */
function estimateFee(burnt: bigint, shares: bigint, value: bigint, arrives: bigint): bigint {
  if (shares === 0n) return 0n
  const gross = (value * burnt) / shares
  return gross > arrives ? gross - arrives : 0n
}

function slippageFlag(text: string): number {
  if (!/^\d+$/.test(text) || Number(text) > MAX_SLIPPAGE_BPS) {
    throw new UsageError(
      `--slippage-bps must be a whole number of basis points from 0 to ${MAX_SLIPPAGE_BPS}, not ${JSON.stringify(text)}.`,
    )
  }
  return Number(text)
}

/** The report as JSON, in the commands' vocabulary (docs/operations.md). */
function toJson(report: WithdrawReport): string {
  return JSON.stringify(
    {
      chain: report.chain,
      chainId: report.chainId,
      wallet: report.wallet,
      dryRun: report.dryRun,
      mode: report.mode,
      amount: optionalUsdcJson(report.amount),
      currentValue: usdcJson(report.currentValue),
      withdrawableUsdc: usdcJson(report.withdrawableUsdc),
      totalWithdrawCap: optionalUsdcJson(report.totalWithdrawCap),
      capacityLimited: report.capacityLimited,
      usdcReturned: usdcJson(report.usdcReturned),
      feePaid: usdcJson(report.feePaid),
      yieldEarned: optionalUsdcJson(report.yieldEarned),
      sharesBurned: report.sharesBurned.toString(),
      txHash: report.txHash,
      blockNumber: report.blockNumber === null ? null : report.blockNumber.toString(),
    },
    null,
    2,
  )
}
