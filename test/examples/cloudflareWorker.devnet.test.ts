/**
 * examples/cloudflare-worker in workerd (Cloudflare's Workers runtime, from miniflare) against a
 * devnet on 127.0.0.1: bundled with esbuild as wrangler would, with `nodejs_compat`, its keys and URLs
 * as bindings. A real x402 buyer pays it; the paid response comes first and the sweep's deposit lands
 * after it, kept alive by `waitUntil`. Then the Cron Trigger's `scheduled` handler sweeps a transfer
 * the paywall never saw. And the contrast: the same worker called without its execution context, so
 * that the sweep is not handed to `waitUntil`: workerd cancels it with the response.
 */
import { builtinModules } from 'node:module'
import { dirname, join } from 'node:path'
import { build } from 'esbuild'
import { Miniflare } from 'miniflare'
import {
  createPublicClient,
  http,
  isAddressEqual,
  maxUint256,
  parseEther,
  parseEventLogs,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Devnet, startDevnet } from '../../src/devnet/startDevnet.js'
import { parseUsdc, routerAbi } from '../../src/index.js'
import { type CountingProxy, startCountingProxy } from '../support/countingProxy.js'
import { devnetClients } from '../support/devnet.js'
import { transferToMerchant, usdcBalance } from '../support/merchant.js'
import { buyerFetch } from '../support/merchantApps.js'

let devnet: Devnet
let mf: Miniflare
let workerUrl: URL
/** The same worker, whose fetch passes Hono no execution context: no `waitUntil`. */
let mfNoWait: Miniflare
let noWaitUrl: URL
/** In front of the devnet's RPC, for the worker without `waitUntil` only. */
let noWaitRpc: CountingProxy

const exampleEntry = join(import.meta.dirname, '../../examples/cloudflare-worker/src/index.ts')
/** Bundles a worker's entry as wrangler would (`stdin`: an entry given as text, beside the example). */
const bundleWorker = (entry: { entryPoints: string[] } | { stdin: { contents: string } }) =>
  build({
    ...('stdin' in entry
      ? { stdin: { ...entry.stdin, resolveDir: dirname(exampleEntry), loader: 'ts' as const } }
      : entry),
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    // nodejs_compat provides Node's built-in modules, as wrangler leaves them to it.
    external: ['node:*', ...builtinModules],
    // @x402/extensions (gas sponsoring on Base Sepolia) brings a SIWE library whose optional ethers
    // support is a dynamic import("ethers"): never run here, but a Worker's bundle must resolve it.
    plugins: [
      {
        name: 'no-ethers',
        setup(build) {
          build.onResolve({ filter: /^ethers$/ }, () => ({ path: 'ethers', namespace: 'empty' }))
          build.onLoad({ filter: /.*/, namespace: 'empty' }, () => ({ contents: 'export {}' }))
        },
      },
    ],
    // As wrangler does with nodejs_compat: a CommonJS require() of a Node built-in (here, a
    // dependency's require('buffer')) gets the runtime's module.
    banner: {
      js: "import * as nodeBuffer from 'node:buffer';\nconst require = (id) => { if (id === 'buffer' || id === 'node:buffer') return nodeBuffer; throw new Error('require(' + id + ') in a Worker'); };",
    },
    logLevel: 'silent',
  })

const operatorKey = generatePrivateKey()
const operator = privateKeyToAccount(operatorKey).address
const reserve = parseUsdc('10')
const price = parseUsdc('0.01')

beforeAll(async () => {
  const [started, bundle, noWaitBundle] = await Promise.all([
    startDevnet({ chain: 'base-sepolia', facilitator: true }),
    bundleWorker({ entryPoints: [exampleEntry] }),
    bundleWorker({
      stdin: {
        contents: `import worker from './index.ts'
export default { fetch: (request, env) => worker.fetch(request, env) }`,
      },
    }),
  ])
  devnet = started
  // The wallet's one-time steps, signed by the wallet: register, approve the router, set the operator.
  const t = devnetClients(devnet)
  const wallet = devnet.accounts.merchant.address
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
  noWaitRpc = await startCountingProxy(devnet.rpcUrl)
  const workerd = (script: string, rpcUrl: string) =>
    new Miniflare({
      modules: true,
      script,
      compatibilityDate: '2025-09-01',
      compatibilityFlags: ['nodejs_compat'],
      bindings: {
        VAULT_CHAIN: 'base-sepolia',
        RPC_URL: rpcUrl,
        MERCHANT_ADDRESS: devnet.accounts.merchant.address,
        SWEEPER_PRIVATE_KEY: operatorKey,
        X402_FACILITATOR_URL: devnet.facilitatorUrl ?? '',
        VAULT_ADDRESSES_JSON: JSON.stringify(devnet.addresses),
        SWEEP_MIN_IDLE_USDC: '0',
        SWEEP_RESERVE_USDC: '10',
      },
    })
  mf = workerd(bundle.outputFiles[0]?.text ?? '', devnet.rpcUrl)
  mfNoWait = workerd(noWaitBundle.outputFiles[0]?.text ?? '', noWaitRpc.url)
  ;[workerUrl, noWaitUrl] = await Promise.all([mf.ready, mfNoWait.ready])
}, 120_000)

afterAll(async () => {
  await Promise.all([mf?.dispose(), mfNoWait?.dispose()])
  await noWaitRpc?.close()
  await devnet?.stop()
})

/** The merchant's next `Deposited` log on the router: its USDC amount and block. */
function nextDeposit(): Promise<{ amount: bigint; sender: string }> {
  const client = createPublicClient({ transport: http(devnet.rpcUrl), pollingInterval: 50 })
  return new Promise((resolve, reject) => {
    const unwatch = client.watchContractEvent({
      address: devnet.addresses.router,
      abi: routerAbi,
      eventName: 'Deposited',
      onLogs: (logs) => {
        const mine = parseEventLogs({ abi: routerAbi, eventName: 'Deposited', logs }).find((log) =>
          isAddressEqual(log.args.wallet, devnet.accounts.merchant.address),
        )
        if (!mine) return
        unwatch()
        client
          .getTransaction({ hash: mine.transactionHash })
          .then((tx) => resolve({ amount: mine.args.usdcAmount, sender: tx.from }), reject)
      },
      onError: (error) => {
        unwatch()
        reject(error)
      },
    })
  })
}

describe('examples/cloudflare-worker in workerd', () => {
  it('a buyer pays it; the response comes first, then the deposit lands through waitUntil', async () => {
    const before = await usdcBalance(devnet, devnet.accounts.merchant.address)
    const deposit = nextDeposit()
    const response = await buyerFetch(devnet)(new URL('/weather', workerUrl))
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ sky: 'clear', celsius: 21 })
    // The response is out: the sale is paid and the sweep it started has not deposited yet.
    expect(await usdcBalance(devnet, devnet.accounts.merchant.address)).toBe(before + price)
    const { amount, sender } = await deposit
    expect(sender.toLowerCase()).toBe(operator.toLowerCase())
    const after = await usdcBalance(devnet, devnet.accounts.merchant.address)
    // Exact accounting: start + received = end + deposited.
    expect(before + price).toBe(after + amount)
    expect(after).toBe(reserve)
  }, 60_000)

  it('the Cron Trigger sweeps what the paywall never saw, with the same rule', async () => {
    await transferToMerchant(devnet, parseUsdc('30'))
    const deposit = nextDeposit()
    // Miniflare types the worker's Fetcher without `scheduled` unless the Workers types are installed.
    const worker = (await mf.getWorker()) as unknown as {
      scheduled(options: { cron: string }): Promise<{ outcome: string }>
    }
    const result = await worker.scheduled({ cron: '*/10 * * * *' })
    expect(result.outcome).toBe('ok')
    const { amount, sender } = await deposit
    expect(amount).toBe(parseUsdc('30'))
    expect(sender.toLowerCase()).toBe(operator.toLowerCase())
    expect(await usdcBalance(devnet, devnet.accounts.merchant.address)).toBe(reserve)
  }, 60_000)

  it('a sweep not handed to waitUntil: workerd cancels it with the response, and it never deposits', async () => {
    // Enough idle USDC that either sale's sweep would deposit it (above the vault's minimum).
    await transferToMerchant(devnet, parseUsdc('30'))
    const before = await usdcBalance(devnet, devnet.accounts.merchant.address)
    const deposit = nextDeposit()
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
    expect(await usdcBalance(devnet, devnet.accounts.merchant.address)).toBe(reserve)
  }, 60_000)
})
