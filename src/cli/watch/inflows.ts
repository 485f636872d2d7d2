import { type Address, type Hash, parseAbiItem } from 'viem'
import { getBlockNumber } from 'viem/actions'
import { type VaultContext, VaultError } from '../../index.js'
import { getLogsInRanges, type LogRangeLimit, toVaultError } from '../../sdk/shared.js'

/** ERC-20 `Transfer`: the USDC inflows to the wallet are these logs with `to` = the wallet. */
const transferEvent = parseAbiItem(
  'event Transfer(address indexed from, address indexed to, uint256 value)',
)

/** A USDC transfer to the wallet, seen in the chain's logs. */
export type Inflow = { txHash: Hash; from: Address; amount: bigint; block: bigint }

export type InflowWatchOptions = {
  /** The block the scan starts after (usually the head when the watch starts). */
  afterBlock: bigint
  /** How often the head is polled, in ms. */
  pollMs: number
  /** The largest block range asked for at once; halved while the RPC refuses it. */
  maxRange: bigint
  /** The longest wait after failures, in ms (the wait doubles from `pollMs`). */
  maxBackoffMs: number
  onHead: (head: bigint) => void
  onInflow: (inflow: Inflow) => void
  /** Every block up to `block` has been read: after each chunk, and after each poll that succeeded. */
  onScanned: (block: bigint) => void
  onProblem: (error: VaultError, retryInMs: number) => void
}

/**
 * Watches the wallet's USDC inflows: polls the chain head and reads the `Transfer` logs to the wallet
 * since the last block read, in block ranges the RPC accepts. After a failure it waits (doubling from
 * `pollMs` up to `maxBackoffMs`) and reads again from where it stopped, so no block is skipped.
 *
 * @param vault - The vault context (its USDC and public client).
 * @param wallet - The wallet whose inflows count.
 * @param options - Where to start, how often, and the callbacks.
 * @returns `stop()`, which resolves once the poll in flight has ended.
 */
export function watchInflows(
  vault: VaultContext,
  wallet: Address,
  options: InflowWatchOptions,
): { stop: () => Promise<void> } {
  const limit: LogRangeLimit = { maxRange: options.maxRange }
  let scanned = options.afterBlock
  let failures = 0
  let stopped = false
  let timer: ReturnType<typeof setTimeout> | undefined
  let polling: Promise<void> | undefined

  const poll = async () => {
    try {
      const head = await getBlockNumber(vault.publicClient, { cacheTime: 0 })
      options.onHead(head)
      for await (const chunk of getLogsInRanges(vault, {
        address: vault.addresses.usdc,
        event: transferEvent,
        args: { to: wallet },
        fromBlock: scanned + 1n,
        toBlock: head,
        limit,
      })) {
        for (const log of chunk.logs) {
          options.onInflow({
            txHash: log.transactionHash,
            from: log.args.from,
            amount: log.args.value,
            block: log.blockNumber,
          })
        }
        scanned = chunk.toBlock
        options.onScanned(scanned)
        if (stopped) return
      }
      // Read up to the head, new blocks or not: an idle chain is no stale scan.
      options.onScanned(scanned)
      failures = 0
    } catch (error) {
      failures++
      const vaultError =
        error instanceof VaultError
          ? error
          : toVaultError(error, { action: 'Inflow scan', addresses: vault.addresses })
      options.onProblem(vaultError, delay())
    }
  }
  const delay = () =>
    failures === 0
      ? options.pollMs
      : Math.min(options.maxBackoffMs, options.pollMs * 2 ** Math.min(failures, 20))
  const loop = () => {
    if (stopped) return
    polling = poll().finally(() => {
      polling = undefined
      if (!stopped) timer = setTimeout(loop, delay())
    })
  }
  loop()
  return {
    async stop() {
      stopped = true
      clearTimeout(timer)
      await polling
    },
  }
}
