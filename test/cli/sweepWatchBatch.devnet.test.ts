/**
 * `x402-vault sweep --watch`, the built bin, beside a paywall that sells a `batch-settlement` route with
 * `sweep: false` (web instances swept by a sweeper of their own). x402's stock batch-settlement buyer
 * (`buyerClient`, harness/merchantApps.ts) pays 5 times at 0.001 USDC: its channel deposit goes
 * into x402's escrow and its vouchers move nothing, so the watcher sees no inflow and sweeps nothing.
 * The paywall's close() claims the vouchers and settles them to the wallet in one USDC transfer from
 * x402's batch-settlement contract: the watcher sees that as one inflow of exactly the charges, and
 * sweeps it.
 *
 * One chain (Base) is enough: the watcher runs the same code on both, one `Transfer` log filter on the
 * vault's USDC with the wallet as `to`, and the settle is the same contract's one `safeTransfer` to
 * `payTo` on both. The chains differ in how the buyer's deposit reaches the escrow (an ERC-3009 or a
 * Permit2 collector), which pays the merchant nothing on either.
 */
import { Hono } from 'hono'
import { isAddressEqual } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeAddressesFile } from '../../harness/addressesFile.js'
import { escrowActivity } from '../../harness/batchSettlement.js'
import {
  depositedIn,
  receiptsFrom,
  transferToMerchant,
  usdcBalance,
} from '../../harness/merchant.js'
import { buyerClient, paymentResponseOf } from '../../harness/merchantApps.js'
import { startWatcher, type WatchEventLine } from '../../harness/watcher.js'
import { type Devnet, startDevnet } from '../../src/devnet/startDevnet.js'
import { formatUsdc, parseUsdc } from '../../src/index.js'
import { createPaywall } from '../../src/plugins/hono.js'
import { x402BatchSettlementAddress } from '../../src/sdk/shared.js'
import { type DevnetClients, devnetClients } from '../support/devnet.js'

let devnet: Devnet
let t: DevnetClients
let addressesPath: string

beforeAll(async () => {
  devnet = await startDevnet({ chain: 'base', facilitator: true })
  t = devnetClients(devnet)
  addressesPath = await writeAddressesFile(devnet)
  // Registered beforehand, as a deployment is: the watcher's sweeps send deposits only.
  await t.vault.ensureInitializedAndWait()
}, 60_000)
afterAll(async () => {
  await devnet?.stop()
})

/** The route's price: 0.001 USDC. */
const price = 1_000n
/** The router's minimum deposit (`MIN_DEPOSIT`): nothing less is swept. */
const minDeposit = parseUsdc('10')

const is = (event: string) => (line: WatchEventLine) => line.event === event

describe('x402-vault sweep --watch beside a batch-settlement paywall', () => {
  it('sees no inflow for the channel deposit and the vouchers, one for the settle of exactly the charges from the batch-settlement contract, and sweeps it', async () => {
    const merchant = devnet.accounts.merchant.address
    const requests = 5
    const charged = price * BigInt(requests)
    const start = await usdcBalance(devnet, merchant)
    const firstBlock = (await t.publicClient.getBlockNumber({ cacheTime: 0 })) + 1n
    // The minimum deposit is idle once the charges reach the wallet, not before. No timer sweeps
    // (--interval 3600): only an inflow starts a sweep here.
    const reserve = start + charged - minDeposit
    const watcher = startWatcher(
      {
        MERCHANT_PRIVATE_KEY: devnet.accounts.merchant.privateKey,
        BASE_MAINNET_RPC_URL: devnet.rpcUrl,
      },
      [
        ...['--chain', 'base', '--addresses', addressesPath, '--reserve', formatUsdc(reserve)],
        ...['--poll', '0.2', '--debounce', '100', '--interval', '3600'],
      ],
    )
    try {
      await watcher.next(is('start'))
      // The sweep at the start finds the minimum less the charges idle: nothing to deposit.
      const startSweep = await watcher.next(is('sweep'))
      expect(startSweep).toMatchObject({
        deposited: false,
        reason: 'below-protocol-minimum',
        idleAmount: { atomic: (minDeposit - charged).toString() },
      })

      // The web instance: no sweeper, no key that signs. The jobs' intervals are far off: only
      // close() claims and settles.
      const paywall = await createPaywall({
        vault: t.readOnly,
        payTo: merchant,
        facilitator: { url: devnet.facilitatorUrl as string },
        routes: {
          'GET /tick': {
            price: formatUsdc(price),
            scheme: 'batch-settlement',
            description: 'One tick',
            mimeType: 'application/json',
          },
        },
        sweep: false,
        batchSettlement: { claimIntervalMs: 3_600_000, settleIntervalMs: 3_600_000 },
      })
      expect(paywall.sweeper).toBeUndefined()
      const app = new Hono()
      app.use(paywall.middleware)
      app.get('/tick', (c) => c.json({ tick: true }))
      const appFetch = ((input: RequestInfo | URL, init?: RequestInit) =>
        app.fetch(new Request(input, init))) as typeof fetch

      const pay = buyerClient(devnet, {
        fetch: appFetch,
        spendControls: devnet.chain === 'base-sepolia' ? 'opt-in' : 'stock',
        scheme: 'batch-settlement',
      }).pay
      const settlements = []
      for (let request = 0; request < requests; request++) {
        const paid = await pay('http://merchant.test/tick')
        expect(paid.status).toBe(200)
        settlements.push(paymentResponseOf(paid))
      }
      // The first request deposits into the escrow; the others are vouchers, with no transaction.
      const channelDeposit = settlements[0]?.transaction as `0x${string}`
      expect(channelDeposit).toMatch(/^0x[0-9a-f]{64}$/)
      expect(settlements.slice(1).map((settled) => settled.transaction)).toEqual(
        Array(requests - 1).fill(''),
      )
      expect(await usdcBalance(devnet, merchant)).toBe(start)

      await paywall.close()
      const { settled } = await escrowActivity(devnet, firstBlock)
      expect(settled.map((entry) => [entry.receiver, entry.amount])).toEqual([[merchant, charged]])
      const settle = settled[0] as (typeof settled)[number]

      // The watcher reads the logs in block order: had the channel deposit or a voucher put USDC in
      // the wallet, its inflow (and the sweep after it) would come before the settle's.
      const inflow = await watcher.next(is('inflow'))
      expect(inflow).toMatchObject({
        txHash: settle.txHash,
        amount: { usdc: formatUsdc(charged), atomic: charged.toString() },
      })
      expect(isAddressEqual(inflow.from as `0x${string}`, x402BatchSettlementAddress)).toBe(true)
      const depositBlock = (await t.publicClient.getTransactionReceipt({ hash: channelDeposit }))
        .blockNumber
      expect(BigInt(inflow.block as string)).toBeGreaterThan(depositBlock)
      const between = watcher.events.slice(
        watcher.events.indexOf(startSweep) + 1,
        watcher.events.indexOf(inflow),
      )
      expect(between.filter((line) => ['inflow', 'sweep', 'deposit'].includes(line.event))).toEqual(
        [],
      )

      // The settle's sweep deposits the minimum: what was idle before, and the charges.
      const deposit = await watcher.next(is('deposit'))
      expect(deposit.amount).toEqual({
        usdc: formatUsdc(minDeposit),
        atomic: minDeposit.toString(),
      })
      const settleSweep = await watcher.after(watcher.events.indexOf(inflow), is('sweep'))
      expect(settleSweep).toMatchObject({ deposited: true, reason: null })
      expect(
        depositedIn(devnet, await receiptsFrom(devnet, merchant, firstBlock), merchant),
      ).toEqual([minDeposit])

      // A transfer after it all: once its inflow is seen, every block before it has been read, and
      // the settle was the one inflow and the one deposit.
      const marker = parseUsdc('1')
      const markerHash = await transferToMerchant(devnet, marker)
      expect(await watcher.next(is('inflow'))).toMatchObject({ txHash: markerHash })
      expect(watcher.events.filter(is('inflow')).map((line) => line.txHash)).toEqual([
        settle.txHash,
        markerHash,
      ])
      expect(watcher.events.filter(is('deposit'))).toEqual([deposit])

      watcher.child.kill('SIGTERM')
      expect(await watcher.exited).toBe(0)
      expect(watcher.events.filter(is('problem'))).toEqual([])
      // Exact accounting: start + charges + marker = end + deposited.
      const end = await usdcBalance(devnet, merchant)
      expect(end).toBe(reserve + marker)
      expect(start + charged + marker).toBe(end + minDeposit)
    } finally {
      watcher.child.kill('SIGKILL')
    }
  }, 60_000)
})
