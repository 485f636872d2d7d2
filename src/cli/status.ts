import { parseArgs } from 'node:util'
import {
  evmAddress,
  type Field,
  formatUsdc,
  getPosition,
  getStatus,
  getYield,
  isUnavailable,
  type VaultPosition,
  type VaultStatus,
  type VaultYield,
  type VenueYield,
} from '../index.js'
import { defaultChainName, redactUrl } from '../sdk/shared.js'
import { chainFlagValue, rpcUrlVariables } from './chainHelp.js'
import {
  addressesOption,
  type Connection,
  chainOption,
  chainSource,
  connectionOptions,
  connectReadOnly,
  requireDeployment,
  rpcUrlOption,
  withChainCheck,
} from './connect.js'
import { amountsJson } from './format.js'
import { UsageError } from './usageError.js'

export const statusUsage = `Usage: x402-vault status [options]

Prints the vault's state at one block: deposits open or paused, assets, TVL cap and room left,
price per share, the oracle's freshness, each venue's rates, allocation and what can be withdrawn.
Reads only; needs no key.

Options:
  --chain ${chainFlagValue}   the deployment (default VAULT_CHAIN, else ${defaultChainName})
  --rpc <url>                   RPC URL (default: ${rpcUrlVariables},
                                else the chain's public RPC)
  --addresses <path>            addresses JSON of a private deployment or the devnet
                                (default VAULT_ADDRESSES)
  --wallet <address>            also the wallet's position: its value, cost basis and yield to date
  --json                        print JSON instead of a table
  -h, --help                    show this help`

/**
 * Runs `x402-vault status`: one status read and one yield read, as a table or JSON on stdout.
 *
 * @param argv - The arguments after `status`.
 * @param env - The environment (RPC URL variables).
 * @returns The exit code.
 */
export async function runStatusCommand(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...connectionOptions,
      wallet: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  })
  if (values.help) {
    process.stdout.write(`${statusUsage}\n`)
    return 0
  }
  const wallet = values.wallet === undefined ? undefined : walletFlag(values.wallet)
  const chain = chainOption(values.chain, env)
  const rpcUrl = rpcUrlOption(chain, values.rpc, env, { fallbackToPublic: true })
  const connection: Connection = {
    chain,
    chainSource: chainSource(values.chain, env),
    rpcUrl,
    addressesPath: addressesOption(values.addresses, env),
  }
  const vault = await connectReadOnly(connection)
  await withChainCheck(vault, connection, () => requireDeployment(vault, rpcUrl))
  const [status, rates, position] = await Promise.all([
    getStatus(vault),
    getYield(vault),
    wallet === undefined ? undefined : getPosition(vault, { wallet }),
  ])
  if (values.json) {
    process.stdout.write(`${JSON.stringify(statusJson(status, rates, position), null, 2)}\n`)
  } else {
    const lines = statusTable(status, rates, redactUrl(rpcUrl))
    if (position) lines.push('', ...positionTable(position))
    process.stdout.write(`${lines.join('\n')}\n`)
  }
  return 0
}

/** The USDC amounts among the status's, the yield's and the position's fields. */
const usdcKeys = new Set([
  'minDeposit',
  'tvlCap',
  'tvlHeadroom',
  'totalAssets',
  'aave',
  'morpho',
  'aaveAssetsHeld',
  'aaveIdleLiquidity',
  'aaveWithdrawCap',
  'morphoAssetsHeld',
  'morphoWithdrawCap',
  'totalWithdrawCap',
  'liquidUsdc',
  'allowance',
  'deposited',
  'currentValue',
  'accruedYield',
  'withdrawableUsdc',
])

/**
 * `status --json`: the chain and the block at the top, then the SDK's status, yield and position (with
 * `--wallet`) under their names, in the commands' vocabulary (see {@link amountsJson}).
 */
export function statusJson(
  status: VaultStatus,
  rates: VaultYield,
  position: VaultPosition | undefined,
): object {
  return {
    chain: status.chain,
    chainId: status.chainId,
    network: status.network,
    blockNumber: status.blockNumber.toString(),
    blockTimestamp: status.blockTimestamp.toString(),
    ...(position ? { wallet: position.wallet } : {}),
    status: amountsJson(status, usdcKeys),
    yield: amountsJson(rates, usdcKeys),
    ...(position ? { position: amountsJson(position, usdcKeys) } : {}),
  }
}

function walletFlag(text: string): `0x${string}` {
  try {
    return evmAddress(text)
  } catch (error) {
    throw new UsageError(`--wallet: ${(error as Error).message}`)
  }
}

/**
 * A wallet's position as aligned lines: its shares, what they are worth, the USDC deposited and not yet
 * withdrawn (the cost basis), and the yield to date on it, before the fee a withdrawal pays on yield.
 */
export function positionTable(position: VaultPosition): string[] {
  const usdc = (value: Field<bigint>) => show(value, (amount) => `${formatUsdc(amount)} USDC`)
  const rows: [string, string][] = [
    ['Shares', show(position.shares, (shares) => formatUsdc(shares))],
    ['Value now', usdc(position.currentValue)],
    ['Deposited (cost basis)', usdc(position.deposited)],
    ['Yield to date', `${usdc(position.accruedYield)} (before the fee on yield)`],
    ['Withdrawable now', `${usdc(position.withdrawableUsdc)} (after the fee)`],
    ['USDC in the wallet', usdc(position.liquidUsdc)],
  ]
  const width = Math.max(...rows.map(([label]) => label.length))
  return [
    `Position of ${position.wallet}`,
    ...rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`),
  ]
}

/** The status as aligned `label  value` lines, amounts in USDC. */
export function statusTable(status: VaultStatus, rates: VaultYield, rpc: string): string[] {
  const usdc = (value: Field<bigint>) => show(value, (amount) => `${formatUsdc(amount)} USDC`)
  const symbol = show(status.shareSymbol, (text) => text)
  const { oracle, allocation, withdrawCapacity: capacity, treasury } = status
  const rows: [string, string][] = [
    ['Deposits', show(status.depositsPaused, (paused) => (paused ? 'paused' : 'open'))],
    ['Minimum deposit', usdc(status.minDeposit)],
    ['Total assets', usdc(status.totalAssets)],
    [
      'TVL cap',
      show(status.tvlCap, (cap) =>
        cap === null
          ? 'none'
          : `${formatUsdc(cap)} USDC (room ${show(status.tvlHeadroom, (room) => `${formatUsdc(room ?? 0n)} USDC`)})`,
      ),
    ],
    [
      'Price per share',
      show(status.pricePerShare, (price) => `${formatUsdc(price / 10n ** 12n)} USDC per ${symbol}`),
    ],
    ['Shares issued', show(status.totalShares, (shares) => `${formatUsdc(shares)} ${symbol}`)],
    [
      'Oracle',
      show(oracle.fresh, (fresh) =>
        [
          fresh ? 'fresh' : 'STALE',
          show(oracle.ageSeconds, (age) => `last observation ${duration(age)} ago`),
          show(oracle.maxStalenessSeconds, (max) => `stale after ${duration(max)}`),
        ].join(', '),
      ),
    ],
    ['Rates (spot / TWAR)', `Aave ${venueRates(rates.aave)}; Morpho ${venueRates(rates.morpho)}`],
    ['New deposits go to', show(rates.optimal, (optimal) => venueName(optimal.venue))],
    ['Allocation', `Aave ${usdc(allocation.aave)}, Morpho ${usdc(allocation.morpho)}`],
    [
      'Withdrawable now',
      `${usdc(capacity.totalWithdrawCap)} (Aave ${usdc(capacity.aaveWithdrawCap)}, Morpho ${usdc(capacity.morphoWithdrawCap)}${capacity.morphoReachable === false ? ', Morpho unreachable' : ''})`,
    ],
    [
      'Treasury',
      `${show(treasury.current, (address) => address)}${show(treasury.pending, (pending) =>
        pending === null
          ? ''
          : `, rotating to ${pending}${show(treasury.rotationEffectiveAt, (at) => (at === null ? '' : ` from ${new Date(Number(at) * 1000).toISOString()}`))}`,
      )}`,
    ],
  ]
  const width = Math.max(...rows.map(([label]) => label.length))
  return [
    `x402-vault on ${status.chain} (chain id ${status.chainId}) at block ${status.blockNumber}, via ${rpc}`,
    '',
    ...rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`),
  ]
}

function venueRates(venue: VenueYield): string {
  const spot = show(venue.spotApy, (apy) => apy)
  const twar = show(venue.twarApy, (apy) => apy)
  const safe = show(venue.safe, (isSafe) => (isSafe ? 'safe' : 'UNSAFE'))
  return `${spot} / ${twar}, ${safe}`
}

function venueName(venue: 'aave' | 'morpho'): string {
  return venue === 'aave' ? 'Aave (lending market)' : 'Morpho (lending vault)'
}

/** A field's text, or why it could not be read. */
function show<T>(value: Field<T>, format: (value: T) => string): string {
  return isUnavailable(value) ? `unavailable (${value.code})` : format(value)
}

function duration(seconds: bigint): string {
  const s = Number(seconds)
  if (s < 120) return `${s}s`
  if (s < 7200) return `${Math.round(s / 60)}m`
  if (s < 172_800) return `${Math.round(s / 3600)}h`
  return `${Math.round(s / 86_400)}d`
}
