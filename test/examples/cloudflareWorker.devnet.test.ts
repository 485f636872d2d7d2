/**
 * examples/cloudflare-worker in workerd (Cloudflare's Workers runtime, from miniflare) against a
 * devnet on 127.0.0.1, on both chains: bundled with esbuild as wrangler would, with `nodejs_compat`,
 * its keys and URLs as bindings. A real x402 buyer pays it; the paid response comes first and the
 * sweep's deposit lands after it, kept alive by `waitUntil`. Several sales at once and in quick
 * succession in one isolate: each request's `waitUntil` holds only work of its own request, every
 * one of them ends (none is cancelled as hung), and workerd logs no warning and no error. Then the
 * Cron Trigger's `scheduled` handler sweeps a transfer the paywall never saw. And the contrast: the
 * same worker called without its execution context, so that the sweep is not handed to `waitUntil`:
 * workerd cancels it with the response.
 *
 * The worker under test is the example wrapped in a few lines that change nothing it does: each
 * request gets an id (an `x-request-id` answer header, and a prefix on every line it logs, through
 * AsyncLocalStorage), and the `waitUntil` the example calls logs, in its own request, when the work
 * handed to it has settled.
 */
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { Miniflare } from 'miniflare'
import { createPublicClient, type Hash, http, maxUint256, parseEther } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CountingProxy, startCountingProxy } from '../../harness/countingProxy.js'
import {
  approvePermit2Once,
  depositedIn,
  receiptsFrom,
  transferToMerchant,
  usdcBalance,
} from '../../harness/merchant.js'
import { buyerFetch } from '../../harness/merchantApps.js'
import { bundleWorker as bundleWorkerIn } from '../../harness/workerBundle.js'
import { type Devnet, startDevnet } from '../../src/devnet/startDevnet.js'
import { parseUsdc, routerAbi } from '../../src/index.js'
import { devnetClients } from '../support/devnet.js'

const exampleDir = join(import.meta.dirname, '../../examples/cloudflare-worker/src')

/** Bundles a worker given as text beside the example, as wrangler would bundle an entry. */
const bundleWorker = (contents: string) => bundleWorkerIn(contents, exampleDir)

/**
 * The example, with each request named: `[request N]` before every line logged while it runs
 * (AsyncLocalStorage follows its promises and timers), the name in the `x-request-id` answer header,
 * and `waitUntil settled` logged in the request once the work it handed to `waitUntil` has settled.
 * A request whose `waitUntil` workerd cancels never logs it.
 */
const namedRequests = `import { AsyncLocalStorage } from 'node:async_hooks'
import worker from './index.ts'
const current = new AsyncLocalStorage()
let requests = 0
for (const level of ['log', 'info', 'warn', 'error']) {
  const write = console[level].bind(console)
  console[level] = (...args) => write('[' + (current.getStore() ?? 'isolate') + ']', ...args)
}
export default {
  fetch(request, env, ctx) {
    const id = 'request ' + ++requests
    return current.run(id, async () => {
      const waitUntil = (promise) =>
        ctx.waitUntil(promise.then(
          () => console.log('waitUntil settled'),
          (error) => console.error('waitUntil rejected: ' + error),
        ))
      const answer = await worker.fetch(request, env, {
        waitUntil,
        passThroughOnException: () => ctx.passThroughOnException(),
      })
      const named = new Response(answer.body, answer)
      named.headers.set('x-request-id', id)
      return named
    })
  },
  scheduled: (event, env, ctx) => current.run('cron', () => worker.scheduled(event, env, ctx)),
}`
/** The example, whose fetch passes Hono no execution context: no `waitUntil`. */
const withoutWaitUntil = `import worker from './index.ts'
export default { fetch: (request, env) => worker.fetch(request, env) }`

const bundles = Promise.all([bundleWorker(namedRequests), bundleWorker(withoutWaitUntil)])
const price = parseUsdc('0.01')
const reserve = parseUsdc('10')
/** The router's MIN_DEPOSIT: idle USDC below it stays in the wallet. */
const minDeposit = parseUsdc('10')

/**
 * What must never be logged: workerd's warnings and errors (a request cancelled as hung, a promise
 * across requests, an uncaught error), a rejected `waitUntil`, or a problem the sweep reported (the
 * example logs `sweep <phase>: …`).
 */
const workerdTrouble =
  /uncaught|error|warn|hung|cancel|reject|different request|never generate a response|exceeded|\] sweep [a-z-]+: /i

describe.each(['base-sepolia', 'base'] as const)(
  'examples/cloudflare-worker in workerd, on %s',
  (chain) => {
    let devnet: Devnet
    let mf: Miniflare
    let workerUrl: URL
    /** The same worker, whose fetch passes Hono no execution context: no `waitUntil`. */
    let mfNoWait: Miniflare
    let noWaitUrl: URL
    /** In front of the devnet's RPC, for the worker without `waitUntil` only. */
    let noWaitRpc: CountingProxy
    /** Every line workerd wrote (stdout and stderr) for the worker with `waitUntil`. */
    const lines: string[] = []
    const lineWaiters = new Set<() => void>()
    const operatorKey = generatePrivateKey()
    const operator = privateKeyToAccount(operatorKey).address
    const merchant = () => devnet.accounts.merchant.address

    /** Resolves once a line at or after `from` matches. */
    const logged = (match: RegExp, from = 0) =>
      new Promise<string>((resolve) => {
        const check = () => {
          const line = lines.slice(from).find((text) => match.test(text))
          if (!line) return
          lineWaiters.delete(check)
          resolve(line)
        }
        lineWaiters.add(check)
        check()
      })
    /** Collects workerd's output, line by line. */
    const collect = (stream: Readable) => {
      let rest = ''
      stream.on('data', (chunk: Buffer) => {
        const text = rest + chunk.toString()
        const parts = text.split('\n')
        rest = parts.pop() ?? ''
        lines.push(...parts.filter((line) => line.trim() !== ''))
        for (const check of [...lineWaiters]) check()
      })
    }

    beforeAll(async () => {
      const [started, [named, noWait]] = await Promise.all([
        startDevnet({ chain, facilitator: true }),
        bundles,
      ])
      devnet = started
      // The wallet's one-time steps, signed by the wallet: register, approve the router, set the operator.
      const t = devnetClients(devnet)
      const wallet = merchant()
      for (const plan of [
        await t.readOnly.planInitialize({ wallet }),
        await t.readOnly.planApproveUsdc({ wallet, amount: maxUint256 }),
        await t.readOnly.planSetOperator({ wallet, operator }),
      ]) {
        const { to, data } = plan.transaction
        const hash = await t.walletFor(t.merchant).sendTransaction({ to, data })
        await t.publicClient.waitForTransactionReceipt({ hash })
      }
      await t.testClient.setBalance({ address: operator, value: parseEther('1') })
      // A buyer who pays often approves Permit2 once (Base Sepolia): concurrent payments then need no
      // sponsored permit each, whose nonces would compete.
      await approvePermit2Once(devnet)
      noWaitRpc = await startCountingProxy(devnet.rpcUrl)
      const workerd = (script: string, rpcUrl: string, output?: (stream: Readable) => void) =>
        new Miniflare({
          modules: true,
          script,
          compatibilityDate: '2025-09-01',
          compatibilityFlags: ['nodejs_compat'],
          ...(output
            ? {
                handleRuntimeStdio: (stdout: Readable, stderr: Readable) => {
                  output(stdout)
                  output(stderr)
                },
              }
            : {}),
          bindings: {
            VAULT_CHAIN: chain,
            RPC_URL: rpcUrl,
            MERCHANT_ADDRESS: wallet,
            SWEEPER_PRIVATE_KEY: operatorKey,
            X402_FACILITATOR_URL: devnet.facilitatorUrl ?? '',
            VAULT_ADDRESSES_JSON: JSON.stringify(devnet.addresses),
            SWEEP_MIN_IDLE_USDC: '0',
            SWEEP_RESERVE_USDC: '10',
          },
        })
      mf = workerd(named, devnet.rpcUrl, collect)
      mfNoWait = workerd(noWait, noWaitRpc.url)
      ;[workerUrl, noWaitUrl] = await Promise.all([mf.ready, mfNoWait.ready])
    }, 120_000)

    afterAll(async () => {
      await Promise.all([mf?.dispose(), mfNoWait?.dispose()])
      await noWaitRpc?.close()
      await devnet?.stop()
    })

    /**
     * Watches for the merchant's next `Deposited` log on the router (`deposited`: its USDC amount and
     * sender), from the block after the latest one: a deposit mined before the first look (a sweep
     * can be that quick) is found too. Call it before the action that deposits. It looks every 50 ms
     * and gives up after 45 s, inside the test's time, so that no look outlives the test.
     */
    async function watchNextDeposit(): Promise<{
      deposited: Promise<{ amount: bigint; sender: string }>
    }> {
      const client = createPublicClient({ transport: http(devnet.rpcUrl) })
      const fromBlock = (await client.getBlockNumber({ cacheTime: 0 })) + 1n
      const giveUpAt = Date.now() + 45_000
      const deposited = (async () => {
        while (Date.now() < giveUpAt) {
          // anvil refuses a range that starts past its latest block.
          const toBlock = await client.getBlockNumber({ cacheTime: 0 })
          const [log] =
            toBlock < fromBlock
              ? []
              : await client.getContractEvents({
                  address: devnet.addresses.router,
                  abi: routerAbi,
                  eventName: 'Deposited',
                  args: { wallet: merchant() },
                  fromBlock,
                  toBlock,
                })
          if (log) {
            const { from: sender } = await client.getTransaction({ hash: log.transactionHash })
            return { amount: log.args.usdcAmount as bigint, sender }
          }
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
        throw new Error(`no deposit for the merchant from block ${fromBlock} in 45 s`)
      })()
      // Awaited by the test; a rejection before that is not unhandled.
      deposited.catch(() => {})
      return { deposited }
    }

    /** Waits until each request's `waitUntil` has settled, in its own request. */
    const allSettled = (ids: string[], from: number) =>
      Promise.all(ids.map((id) => logged(new RegExp(`^\\[${id}\\] waitUntil settled$`), from)))

    it('a buyer pays it; the response comes first, then the deposit lands through waitUntil', async () => {
      const from = lines.length
      const before = await usdcBalance(devnet, merchant())
      const deposit = (await watchNextDeposit()).deposited
      const response = await buyerFetch(devnet)(new URL('/weather', workerUrl))
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({ sky: 'clear', celsius: 21 })
      // The response is out: the sale is paid and the sweep it started has not deposited yet.
      expect(await usdcBalance(devnet, merchant())).toBe(before + price)
      const { amount, sender } = await deposit
      expect(sender.toLowerCase()).toBe(operator.toLowerCase())
      const after = await usdcBalance(devnet, merchant())
      // Exact accounting: start + received = end + deposited.
      expect(before + price).toBe(after + amount)
      expect(after).toBe(reserve)
      await allSettled([response.headers.get('x-request-id') ?? ''], from)
      expect(lines.slice(from).filter((line) => workerdTrouble.test(line))).toEqual([])
    }, 60_000)

    it('sales at once and in quick succession in one isolate: each request sweeps within its own waitUntil, and workerd warns of nothing', async () => {
      const from = lines.length
      const firstBlock =
        (await devnetClients(devnet).publicClient.getBlockNumber({ cacheTime: 0 })) + 1n
      // Enough idle USDC that the burst's sweep deposits (above the vault's minimum).
      await transferToMerchant(devnet, parseUsdc('30'))
      const before = await usdcBalance(devnet, merchant())
      const pay = buyerFetch(devnet)
      const url = new URL('/weather', workerUrl)
      // Five at once…
      const responses = await Promise.all(Array.from({ length: 5 }, () => pay(url)))
      // …then four, each sent as soon as the one before is answered, each after a transfer that makes
      // its sweep deposit (a sale's 0.01 USDC alone is below the vault's minimum).
      let transferred = 0n
      for (let i = 0; i < 4; i++) {
        await transferToMerchant(devnet, minDeposit)
        transferred += minDeposit
        responses.push(await pay(url))
      }
      expect(responses.map((response) => response.status)).toEqual(Array(9).fill(200))
      const ids = responses.map((response) => response.headers.get('x-request-id') ?? '')
      expect(new Set(ids).size).toBe(9)

      // Every request's waitUntil ends, in that request: none is cancelled as hung, none waits for
      // another request.
      await allSettled(ids, from)
      const output = lines.slice(from)
      expect(output.filter((line) => workerdTrouble.test(line))).toEqual([])
      // Each deposit was made inside a sale's request, before that request's waitUntil settled.
      const deposits = output.flatMap((line, index) => {
        const match = /^\[(request \d+)\] deposited ([\d.]+) USDC: (0x[0-9a-f]{64})$/.exec(line)
        if (!match) return []
        const [, id = '', usdc = '', txHash = ''] = match
        return [{ id, amount: parseUsdc(usdc), txHash: txHash as Hash, index }]
      })
      // How many deposits depends on timing (a sweep that reads late covers more sales); at least the
      // burst's 30 USDC went in.
      expect(deposits.length).toBeGreaterThanOrEqual(1)
      for (const deposit of deposits) {
        expect(ids).toContain(deposit.id)
        const settledAt = output.indexOf(`[${deposit.id}] waitUntil settled`)
        expect(settledAt).toBeGreaterThan(deposit.index)
      }

      // Once the last waitUntil has settled, and no request after it: everything the rule deposits is
      // in the vault, and every unit is accounted for (wallet + vault).
      const after = await usdcBalance(devnet, merchant())
      expect(after).toBeGreaterThanOrEqual(reserve)
      expect(after - reserve).toBeLessThan(minDeposit)
      const received = transferred + 9n * price
      const receipts = await receiptsFrom(devnet, operator, firstBlock)
      expect(receipts.every((receipt) => receipt.status === 'success')).toBe(true)
      const onChain = depositedIn(devnet, receipts, merchant())
      expect(onChain).toEqual(deposits.map((deposit) => deposit.amount))
      expect(receipts.map((receipt) => receipt.transactionHash)).toEqual(
        deposits.map((deposit) => deposit.txHash),
      )
      expect(before + received).toBe(after + onChain.reduce((sum, amount) => sum + amount, 0n))
    }, 90_000)

    it('the Cron Trigger sweeps what the paywall never saw, with the same rule', async () => {
      const from = lines.length
      const idle = (await usdcBalance(devnet, merchant())) - reserve
      await transferToMerchant(devnet, parseUsdc('30'))
      const deposit = (await watchNextDeposit()).deposited
      // Miniflare types the worker's Fetcher without `scheduled` unless the Workers types are installed.
      const worker = (await mf.getWorker()) as unknown as {
        scheduled(options: { cron: string }): Promise<{ outcome: string }>
      }
      const result = await worker.scheduled({ cron: '*/10 * * * *' })
      expect(result.outcome).toBe('ok')
      // The sweep says what it did before the deposit is looked for: a sweep that deposited nothing
      // fails here, with its reason, instead of leaving the test waiting for a deposit.
      expect(await logged(/^\[cron\] cron: /, from)).toMatch(/^\[cron\] cron: deposited /)
      const { amount, sender } = await deposit
      expect(amount).toBe(idle + parseUsdc('30'))
      expect(sender.toLowerCase()).toBe(operator.toLowerCase())
      expect(await usdcBalance(devnet, merchant())).toBe(reserve)
      expect(lines.slice(from).filter((line) => workerdTrouble.test(line))).toEqual([])
    }, 60_000)

    it('a sweep not handed to waitUntil: workerd cancels it with the response, and it never deposits', async () => {
      // Enough idle USDC that either sale's sweep would deposit it (above the vault's minimum).
      await transferToMerchant(devnet, parseUsdc('30'))
      const before = await usdcBalance(devnet, merchant())
      const deposit = (await watchNextDeposit()).deposited
      // The worker without waitUntil sells; its sweep is due 250 ms (the debounce) after the settlement.
      const pay = buyerFetch(devnet)
      const cut = await pay(new URL('/weather', noWaitUrl))
      expect(cut.status).toBe(200)
      const sentBeforeResponse = noWaitRpc.requests
      // Then the worker with waitUntil sells: its sweep starts later than the first one was due, and it
      // deposits both sales and the 30 USDC; had the first sweep run, it would have deposited first.
      expect((await pay(new URL('/weather', workerUrl))).status).toBe(200)
      const { amount, sender } = await deposit
      expect(sender.toLowerCase()).toBe(operator.toLowerCase())
      expect(amount).toBe(before + 2n * price - reserve)
      // The isolate without waitUntil sent nothing after its response: the sweep never started.
      expect(noWaitRpc.requests).toBe(sentBeforeResponse)
      expect(await usdcBalance(devnet, merchant())).toBe(reserve)
    }, 60_000)
  },
)
