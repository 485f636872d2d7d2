/**
 * `npm run soak`: 2,000 paid requests in bursts through one merchant (an Express app behind
 * `createPaywall`, the sweeper on) on a devnet, then one JSON report on stdout: heap before and after
 * (after a full GC), the sweeper's memory against its cap, the deposits made and the accounting in
 * base units. Opt-in, not part of `npm test` (about two minutes). Exit code 1 when a unit is
 * unaccounted for, a deposit failed or the sweeper's memory is over its cap.
 *
 * With `--watch` the paywall runs with `sweep: false` and the watch sweeper of `x402-vault sweep
 * --watch` (its code, in this process, with its default timing) sweeps the wallet: exit code 1 also
 * when the heap grew by more than 10 MB over the run, or when USDC above the reserve is left unswept
 * at the end (the threshold or more).
 *
 *   npm run soak [-- --bursts 40 --burst-size 50 --cap 500] [-- --watch]
 */
import { parseArgs } from 'node:util'
import { createPublicClient, http, isAddressEqual } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { approvePermit2Once, sweepEvents, usdcBalance } from '../harness/merchant.js'
import { buyerFetch } from '../harness/merchantApps.js'
import type { WatchEvent } from '../src/cli/watch/events.js'
import { runWatchSweeper } from '../src/cli/watch/watchSweeper.js'
import { startDevnet } from '../src/devnet/startDevnet.js'
import { parseUsdc, routerAbi } from '../src/index.js'
import {
  merchantVaultClient,
  openPaywallShop,
  openShopWithoutSweeper,
  withDeadline,
} from './seller.js'

const { values } = parseArgs({
  options: {
    bursts: { type: 'string', default: '40' },
    'burst-size': { type: 'string', default: '50' },
    cap: { type: 'string', default: '500' },
    watch: { type: 'boolean', default: false },
  },
})
const watch = values.watch
/** With --watch: the most the heap may grow over the run. */
const maxHeapGrowthMb = 10
const bursts = Number(values.bursts)
const burstSize = Number(values['burst-size'])
/** Below the 2,000 settlements, so the run shows the cap holding (the default is 10,000). */
const cap = Number(values.cap)
const price = '0.1'
const progress = (message: string) => process.stderr.write(`soak: ${message}\n`)

const gc = (globalThis as { gc?: () => void }).gc
if (!gc) {
  progress('run with node --expose-gc (npm run soak does)')
  process.exit(2)
}
const heapMb = () => {
  gc()
  return Math.round((process.memoryUsage().heapUsed / 2 ** 20) * 10) / 10
}

const devnet = await startDevnet({ chain: 'base-sepolia', facilitator: true })
try {
  const merchant = devnet.accounts.merchant.address
  const client = createPublicClient({ chain: devnet.viemChain, transport: http(devnet.rpcUrl) })
  const events = sweepEvents()
  // Only the revenue is idle.
  const reserve = await usdcBalance(devnet, merchant)
  const threshold = parseUsdc('10')
  const sweeping = watch
    ? undefined
    : await openPaywallShop(devnet, price, {
        minIdleThreshold: threshold,
        reserve,
        maxTrackedSettlements: cap,
        onIdleDeposit: events.onIdleDeposit,
        onNonFatalError: events.onNonFatalError,
      })
  const shop = sweeping ?? (await openShopWithoutSweeper(devnet, price))
  const watcher = watch ? startWatchSweeper(reserve, threshold) : undefined
  // A buyer who pays this often approves Permit2 once (Base Sepolia's USDC has no EIP-3009).
  await approvePermit2Once(devnet)
  const pay = buyerFetch(devnet)
  const burst = async () => {
    const responses = await Promise.all(Array.from({ length: burstSize }, () => pay(shop.paidUrl)))
    await Promise.all(responses.map((response) => response.arrayBuffer()))
    return responses.filter((response) => response.status === 200).length
  }

  progress('warm-up burst')
  await burst()
  const start = await usdcBalance(devnet, merchant)
  const startNonce = await client.getTransactionCount({ address: merchant, blockTag: 'latest' })
  const firstBlock = (await client.getBlockNumber({ cacheTime: 0 })) + 1n
  const depositsBefore = watcher ? watcher.deposits.length : events.deposits.length
  const heapBeforeMb = heapMb()
  const heapAfterBurstsMb: number[] = []
  let paid = 0
  const started = performance.now()
  for (let index = 0; index < bursts; index++) {
    paid += await burst()
    if ((index + 1) % 10 === 0) {
      heapAfterBurstsMb.push(heapMb())
      progress(
        `${index + 1} of ${bursts} bursts, ${paid} paid, heap ${heapAfterBurstsMb.at(-1)} MB`,
      )
    }
  }
  const elapsedS = Math.round((performance.now() - started) / 100) / 10
  const received = BigInt(paid) * parseUsdc(price)
  const swept = () =>
    watcher
      ? watcher.deposits.slice(depositsBefore).reduce((sum, amount) => sum + amount, 0n)
      : events.deposits.slice(depositsBefore).reduce((sum, deposit) => sum + deposit.idleAmount, 0n)
  progress('waiting for the last sweep')
  // Done when what is left above the reserve is below the protocol's minimum deposit.
  const done = () => start + received - swept() - reserve < threshold
  await withDeadline(
    'the last deposits',
    watcher ? watcher.until(done) : events.until(done),
    120_000,
  )
  const memory = sweeping?.sweeper.memory()
  // With --watch the heap is read while the watcher still runs: what it holds after 2,000 inflows.
  const heapWatchingMb = watcher ? heapMb() : undefined
  await shop.stop()
  await watcher?.stop()
  const heapAfterMb = heapWatchingMb ?? heapMb()

  const end = await usdcBalance(devnet, merchant)
  const deposited = (
    await client.getContractEvents({
      address: devnet.addresses.router,
      abi: routerAbi,
      eventName: 'Deposited',
      fromBlock: firstBlock,
    })
  ).filter((log) => isAddressEqual(log.args.wallet as `0x${string}`, merchant))
  const depositedUnits = deposited.reduce((sum, log) => sum + (log.args.usdcAmount ?? 0n), 0n)
  const merchantTxs =
    (await client.getTransactionCount({ address: merchant, blockTag: 'latest' })) - startNonce
  const report = {
    shape: watch ? 'sweep: false, with the --watch sweeper' : 'the in-process sweeper',
    requests: bursts * burstSize,
    paid,
    bursts,
    burstSize,
    elapsedS,
    heap: {
      beforeMb: heapBeforeMb,
      afterMb: heapAfterMb,
      growthMb: Math.round((heapAfterMb - heapBeforeMb) * 10) / 10,
      every10BurstsMb: heapAfterBurstsMb,
    },
    dedupe: memory ?? null,
    deposits: {
      count: deposited.length,
      reportedBySweeper:
        (watcher ? watcher.deposits.length : events.deposits.length) - depositsBefore,
      merchantTransactions: merchantTxs,
      /** Merchant transactions that are not deposits: reverted or otherwise failed. */
      failed: merchantTxs - deposited.length,
      problems: watcher
        ? watcher.problems
        : events.problems.map((problem) => `${problem.phase}: ${problem.error.code}`),
    },
    accounting: {
      startUnits: start.toString(),
      receivedUnits: received.toString(),
      depositedUnits: depositedUnits.toString(),
      endUnits: end.toString(),
      unaccountedUnits: (start + received - end - depositedUnits).toString(),
      /** What is left above the reserve: below the threshold when every sweep has run. */
      leftAboveReserveUnits: (end - reserve).toString(),
    },
  }
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
  const bounded =
    !memory ||
    (memory.trackedSettlements <= memory.maxTrackedSettlements &&
      memory.pendingSettlements <= memory.maxTrackedSettlements)
  const watchHeld = !watch || (report.heap.growthMb <= maxHeapGrowthMb && end - reserve < threshold)
  if (
    report.accounting.unaccountedUnits !== '0' ||
    report.deposits.failed !== 0 ||
    !bounded ||
    !watchHeld
  ) {
    process.exitCode = 1
  }
} finally {
  await devnet.stop()
}

/**
 * The watch sweeper of `x402-vault sweep --watch`, in this process (so that its heap is measured),
 * with the merchant's key and the command's default timing. Keeps only what the report needs: the
 * deposits' amounts and the problems, one line each.
 */
function startWatchSweeper(reserve: bigint, threshold: bigint) {
  const vault = merchantVaultClient(devnet)
  const deposits: bigint[] = []
  const problems: string[] = []
  let wake = () => {}
  const emit = (event: WatchEvent) => {
    if (event.event === 'deposit') deposits.push(BigInt(event.amount.atomic))
    if (event.event === 'problem') problems.push(`${event.phase}: ${event.code}`)
    if (event.event === 'warning') progress(`watcher warning: ${event.message}`)
    wake()
  }
  const stop = new AbortController()
  const running = runWatchSweeper(
    {
      vault,
      key: {
        kind: 'merchant',
        account: privateKeyToAccount(devnet.accounts.merchant.privateKey),
        wallet: devnet.accounts.merchant.address,
      },
      minIdleThreshold: threshold,
      reserve,
      intervalMs: 60_000,
      pollMs: 2_000,
      debounceMs: 1_000,
      maxLogRange: 2_000n,
      health: undefined,
      lockUrl: undefined,
      maxIdleWaitMs: 3_600_000,
      emit,
    },
    stop.signal,
  )
  return {
    deposits,
    problems,
    until: (condition: () => boolean) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (condition()) resolve()
          else wake = check
        }
        check()
      }),
    stop: async () => {
      stop.abort()
      await running
    },
  }
}
