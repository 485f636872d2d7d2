/**
 * `npm run soak`: 2,000 paid requests in bursts through one merchant (an Express app behind
 * `createPaywall`, the sweeper on) on a devnet, then one JSON report on stdout: heap before and after
 * (after a full GC), the sweeper's memory against its cap, the deposits made and the accounting in
 * base units. Opt-in, not part of `npm test` (about two minutes). Exit code 1 when a unit is
 * unaccounted for, a deposit failed or the sweeper's memory is over its cap.
 *
 *   npm run soak [-- --bursts 40 --burst-size 50 --cap 500]
 */
import { parseArgs } from 'node:util'
import { createPublicClient, http, isAddressEqual } from 'viem'
import { startDevnet } from '../src/devnet/startDevnet.js'
import { parseUsdc, routerAbi } from '../src/index.js'
import { approvePermit2Once, sweepEvents, usdcBalance } from '../test/support/merchant.js'
import { buyerFetch } from '../test/support/merchantApps.js'
import { openPaywallShop, withDeadline } from './seller.js'

const { values } = parseArgs({
  options: {
    bursts: { type: 'string', default: '40' },
    'burst-size': { type: 'string', default: '50' },
    cap: { type: 'string', default: '500' },
  },
})
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
  const shop = await openPaywallShop(devnet, price, {
    minIdleThreshold: '10',
    reserve,
    maxTrackedSettlements: cap,
    onIdleDeposit: events.onIdleDeposit,
    onNonFatalError: events.onNonFatalError,
  })
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
  const depositsBefore = events.deposits.length
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
    events.deposits.slice(depositsBefore).reduce((sum, deposit) => sum + deposit.idleAmount, 0n)
  progress('waiting for the last sweep')
  // Done when what is left above the reserve is below the protocol's minimum deposit.
  await withDeadline(
    'the last deposits',
    events.until(() => start + received - swept() - reserve < parseUsdc('10')),
    120_000,
  )
  const memory = shop.sweeper.memory()
  await shop.stop()
  const heapAfterMb = heapMb()

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
    dedupe: memory,
    deposits: {
      count: deposited.length,
      reportedBySweeper: events.deposits.length - depositsBefore,
      merchantTransactions: merchantTxs,
      /** Merchant transactions that are not deposits: reverted or otherwise failed. */
      failed: merchantTxs - deposited.length,
      problems: events.problems.map((problem) => `${problem.phase}: ${problem.error.code}`),
    },
    accounting: {
      startUnits: start.toString(),
      receivedUnits: received.toString(),
      depositedUnits: depositedUnits.toString(),
      endUnits: end.toString(),
      unaccountedUnits: (start + received - end - depositedUnits).toString(),
    },
  }
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
  const bounded =
    memory.trackedSettlements <= memory.maxTrackedSettlements &&
    memory.pendingSettlements <= memory.maxTrackedSettlements
  if (report.accounting.unaccountedUnits !== '0' || report.deposits.failed !== 0 || !bounded) {
    process.exitCode = 1
  }
} finally {
  await devnet.stop()
}
