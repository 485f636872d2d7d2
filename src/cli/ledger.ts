import { writeFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { getBlock, getBlockNumber } from 'viem/actions'
import { evmAddress, getLedger, type VaultContext } from '../index.js'
import { DEFAULT_LOG_SPAN, defaultChainName, toVaultError } from '../sdk/shared.js'
import { chainFlagValue, rpcUrlVariables } from './chainHelp.js'
import {
  addressesOption,
  type Connection,
  chainOption,
  chainSource,
  connectionOptions,
  connectReadOnly,
  rpcUrlOption,
  withChainCheck,
} from './connect.js'
import { ledgerCsv, ledgerJson, ledgerText } from './ledgerFormat.js'
import { UsageError } from './usageError.js'

export const ledgerUsage = `Usage: x402-vault ledger --wallet <address> [options]

Lists a wallet's money from the chain's logs, oldest first: x402 settlements received (marked by
their EIP-3009 authorization or x402's Permit2 proxy), self-payments (settlements paid by the wallet
itself, its operators or --self addresses: not revenue), other transfers in, sweeps into the vault,
withdrawals with their fee, and transfers out; then the totals (revenue through x402, self-payments,
received otherwise, deposited, withdrawn, fees paid, the position's value now and the yield earned)
and the reconciliation: opening balance + in − out = closing balance, for the wallet and for the
position. Reads only; needs no key.

Options:
  --wallet <address>            the wallet (the merchant's payTo address)
  --chain ${chainFlagValue}   the deployment (default VAULT_CHAIN, else ${defaultChainName})
  --rpc <url>                   RPC URL (default: ${rpcUrlVariables}, else
                                the chain's public RPC; old blocks need an archive RPC)
  --addresses <path>            addresses JSON of a private deployment or the devnet
                                (default VAULT_ADDRESSES)
  --from-block <n>              the first block to list
  --since <duration>            the blocks of the last 30d, 12h, 90m, 2w… (default 30d)
  --self <address>              an address of the merchant's own whose x402 payments are
                                self-payments, not revenue (repeatable; the wallet and its
                                operators always count)
  --json                        print the ledger as JSON (data only)
  --csv                         print the entries as CSV, for a spreadsheet (data only)
  --html <path>                 also write a report page: totals, a chart and the entries
                                (- writes the page to standard output, alone)
  -h, --help                    show this help`

/** Units of `--since`, in seconds. */
const durationUnits: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 }

/**
 * Runs `x402-vault ledger`: one scan of the wallet's history, printed as a table, JSON or CSV, and
 * optionally written as an HTML report.
 *
 * @param argv - The arguments after `ledger`.
 * @param env - The environment (RPC URL variables).
 * @returns The exit code.
 */
export async function runLedgerCommand(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...connectionOptions,
      wallet: { type: 'string' },
      'from-block': { type: 'string' },
      since: { type: 'string' },
      self: { type: 'string', multiple: true },
      json: { type: 'boolean', default: false },
      csv: { type: 'boolean', default: false },
      html: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  })
  if (values.help) {
    process.stdout.write(`${ledgerUsage}\n`)
    return 0
  }
  if (values.wallet === undefined) throw new UsageError('--wallet <address> is required.')
  const wallet = addressFlag(values.wallet, '--wallet')
  const selfPayers = (values.self ?? []).map((text) => addressFlag(text, '--self'))
  if (values.json && values.csv) throw new UsageError('Give --json or --csv, not both.')
  const pageToStdout = values.html === '-'
  if (pageToStdout && (values.json || values.csv)) {
    throw new UsageError(
      '--html - writes the page to standard output: give --json or --csv without it, or --html <file>.',
    )
  }
  if (values['from-block'] !== undefined && values.since !== undefined) {
    throw new UsageError('Give --from-block or --since, not both.')
  }
  if (values.html === '') throw new UsageError('--html needs a file path.')
  const fromBlockFlag =
    values['from-block'] === undefined ? undefined : blockFlag(values['from-block'])
  const sinceSeconds = durationFlag(values.since ?? '30d')
  const chain = chainOption(values.chain, env)
  const connection: Connection = {
    chain,
    chainSource: chainSource(values.chain, env),
    rpcUrl: rpcUrlOption(chain, values.rpc, env, { fallbackToPublic: true }),
    addressesPath: addressesOption(values.addresses, env),
    // One by one: a provider that answers a too-wide eth_getLogs with HTTP 413 would fail every call
    // batched with it. The chain id check goes beside the first read, at the same time.
    batch: false,
  }
  const vault = await connectReadOnly(connection)

  const toBlock = await withChainCheck(vault, connection, () =>
    getBlockNumber(vault.publicClient, { cacheTime: 0 }).catch((error) => {
      throw toVaultError(error, { action: 'Latest block read' })
    }),
  )
  const fromBlock = fromBlockFlag ?? (await firstBlockSince(vault, toBlock, sinceSeconds))
  if (fromBlock > toBlock) {
    throw new UsageError(`--from-block ${fromBlock} is after the latest block, ${toBlock}.`)
  }
  const dataOnly = values.json || values.csv || pageToStdout
  const progress = dataOnly ? undefined : progressBar()
  const ledger = await getLedger(vault, {
    wallet,
    fromBlock,
    toBlock,
    positionHistory: values.html !== undefined,
    selfPayers,
    onProgress: progress?.update,
  }).finally(() => progress?.done())
  if (values.html !== undefined) {
    const { ledgerHtml } = await import('./ledgerReport.js')
    if (pageToStdout) {
      process.stdout.write(ledgerHtml(ledger))
      return 0
    }
    await writeFile(values.html, ledgerHtml(ledger))
  }
  if (values.json) process.stdout.write(`${JSON.stringify(ledgerJson(ledger), null, 2)}\n`)
  else if (values.csv) process.stdout.write(`${ledgerCsv(ledger)}\r\n`)
  else {
    process.stdout.write(ledgerText(ledger))
    if (values.html !== undefined) process.stdout.write(`\nReport written to ${values.html}\n`)
  }
  return 0
}

function addressFlag(text: string, flag: string): `0x${string}` {
  try {
    return evmAddress(text)
  } catch (error) {
    throw new UsageError(`${flag}: ${(error as Error).message}`)
  }
}

function blockFlag(text: string): bigint {
  if (!/^\d+$/.test(text) || BigInt(text) < 1n) {
    throw new UsageError(
      `--from-block must be a block number of 1 or more, not ${JSON.stringify(text)}.`,
    )
  }
  return BigInt(text)
}

function durationFlag(text: string): number {
  const match = /^(\d+)([smhdw])$/.exec(text)
  const unit = match?.[2] === undefined ? undefined : durationUnits[match[2]]
  if (!match || unit === undefined || Number(match[1]) === 0) {
    throw new UsageError(
      `--since must be a duration such as 30d, 12h, 90m, 2w or 45s, not ${JSON.stringify(text)}.`,
    )
  }
  return Number(match[1]) * unit
}

/**
 * The first block at or after `seconds` before the latest block's time: a search over block times that
 * guesses by interpolation and falls back to halving, so it needs a handful of block reads even where
 * block times are uneven (a devnet that jumped in time). A chain whose history starts after block 0 (a
 * pruned node, a devnet loaded from a saved state) answers "not found" for the blocks before it: they
 * count as older than any target, and the answer is then at least the block after the first one, whose
 * opening balances can be read.
 */
async function firstBlockSince(
  vault: VaultContext,
  latest: bigint,
  seconds: number,
): Promise<bigint> {
  const timeOf = async (blockNumber: bigint) => {
    try {
      return (await getBlock(vault.publicClient, { blockNumber })).timestamp
    } catch (error) {
      if ((error as Error).name === 'BlockNotFoundError') return undefined
      throw toVaultError(error, { action: `Block ${blockNumber} read` })
    }
  }
  const latestTime = (await timeOf(latest)) ?? 0n
  const target = latestTime - BigInt(seconds)
  // Invariant: the block `low` is before the target (or missing, or block 0), `high` is at or after it.
  let low = 0n
  let high = latest
  let lowTime = await timeOf(low)
  if (lowTime !== undefined && lowTime >= target) return 1n
  let highTime = latestTime
  for (let step = 0; high - low > 1n; step++) {
    const span = high - low
    const guess =
      step % 2 === 0 && lowTime !== undefined && highTime > lowTime
        ? low + ((target - lowTime) * span) / (highTime - lowTime)
        : low + span / 2n
    const middle = guess <= low ? low + 1n : guess >= high ? high - 1n : guess
    const time = await timeOf(middle)
    if (time !== undefined && time >= target) {
      high = middle
      highTime = time
    } else {
      low = middle
      lowTime = time
    }
  }
  if (lowTime === undefined && high > 0n) return high < latest ? high + 1n : latest
  return high
}

/**
 * A progress bar on stderr for scans of more than one range, on a terminal only: redrawn in place, and
 * wiped when the scan ends.
 */
function progressBar() {
  if (!process.stderr.isTTY) return undefined
  let drawn = false
  return {
    update({ scannedBlocks, totalBlocks }: { scannedBlocks: bigint; totalBlocks: bigint }) {
      if (totalBlocks <= DEFAULT_LOG_SPAN) return
      const width = 30
      const filled = Number((scannedBlocks * BigInt(width)) / totalBlocks)
      const percent = Number((scannedBlocks * 100n) / totalBlocks)
      process.stderr.write(
        `\rscanning [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${percent}% (${scannedBlocks} of ${totalBlocks} blocks)`,
      )
      drawn = true
    },
    done() {
      if (drawn) process.stderr.write('\r\x1b[K')
    },
  }
}
