/**
 * What leaves the package in the caller's process carries no secret and a specific code. The built
 * package's entry points (dist/, with the caller's own viem, as an app uses them): every SDK call of
 * `x402-vault`, `createPaywall` of `x402-vault/express` and `x402-vault/hono` at start-up and the sweep
 * problems a paid request hands to `onNonFatalError`, the buyer's `attachToClient`, the tools of
 * `x402-vault/mcp`, and `x402-vault/devnet`. Each runs under each RPC fault (down, HTTP 500, HTTP 401
 * with a body that echoes the URL, garbage, a hang) with markers in the RPC URL's userinfo, path and
 * query; neither a thrown error (its message, `details`, `cause` chain, stack, hidden properties), nor
 * a callback's error, nor a log line shows a marker, the merchant key, an operator key or a bearer
 * token. A hang ends through the transport's own timeout, which the caller sets short here.
 *
 * Then the codes: a receipt that a node behind a load balancer does not have yet (`null` for
 * `eth_getTransactionReceipt` a few times) reaches the sweeper's and the buyer's `onNonFatalError` as
 * `RECEIPT_NOT_FOUND`, retryable, and the retry finds it.
 */
import { once } from 'node:events'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { inspect } from 'node:util'
import { Client, InMemoryTransport } from '@modelcontextprotocol/client'
import {
  type Account,
  type Address,
  createPublicClient,
  createWalletClient,
  type Hex,
  http,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { writeAddressesFile } from '../harness/addressesFile.js'
import { type CountingProxy, startCountingProxy } from '../harness/countingProxy.js'
import { approvePermit2Once } from '../harness/merchant.js'
import { buyerClient, frameworks, paidRoutes } from '../harness/merchantApps.js'
import { type Devnet, startDevnet } from '../src/devnet/startDevnet.js'
import type { BuyerProblem, SweeperProblem, VaultClient } from '../src/index.js'
import { devnetClients } from './support/devnet.js'
import { callTool } from './support/mcp.js'
import { mcpToolCalls, rpcFaults, SecretFinder, secretRpc } from './support/secrets.js'

type Sdk = typeof import('../src/index.js')
type Plugin = typeof import('../src/plugins/express.js')
type Mcp = typeof import('../src/mcp/index.js')
type DevnetEntry = typeof import('../src/devnet/index.js')

const built = <T>(path: string) =>
  import(pathToFileURL(join(import.meta.dirname, '../dist', path)).href) as Promise<T>

let sdk: Sdk
let plugins: Record<'express' | 'hono', Plugin>
let mcp: Mcp
let devnetEntry: DevnetEntry
let devnet: Devnet
let proxy: CountingProxy
let rpc: ReturnType<typeof secretRpc>
let secrets: SecretFinder
const sweeperKey = generatePrivateKey()
const facilitatorToken = 'facTokenMarkW5pLong'

beforeAll(async () => {
  ;[sdk, mcp, devnetEntry] = await Promise.all([
    built<Sdk>('index.js'),
    built<Mcp>('mcp/index.js'),
    built<DevnetEntry>('devnet/index.js'),
  ])
  plugins = {
    express: await built<Plugin>('plugins/express.js'),
    hono: await built<Plugin>('plugins/hono.js'),
  }
  devnet = await startDevnet({
    chain: 'base-sepolia',
    facilitator: { bearerToken: facilitatorToken },
  })
  proxy = await startCountingProxy(devnet.rpcUrl)
  rpc = secretRpc(proxy)
  secrets = new SecretFinder()
    .add('the merchant key', devnet.accounts.merchant.privateKey)
    .add('the buyer key', devnet.accounts.buyer.privateKey)
    .add('the operator key', sweeperKey)
    .add('the facilitator bearer token', facilitatorToken)
  await devnetClients(devnet).vault.ensureInitializedAndWait()
  await approvePermit2Once(devnet)
})
afterAll(async () => {
  await proxy?.close()
  await devnet?.stop()
})

/** What the package writes to the console, stdout and stderr in this process: checked last. */
const output: string[] = []
beforeAll(() => {
  const keep = (...args: unknown[]) => {
    output.push(args.map((arg) => (typeof arg === 'string' ? arg : inspect(arg))).join(' '))
  }
  for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    vi.spyOn(console, level).mockImplementation(keep)
  }
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream)
    vi.spyOn(stream, 'write').mockImplementation(((chunk: unknown, ...rest: never[]) => {
      keep(String(chunk))
      return write(chunk as string, ...rest)
    }) as typeof stream.write)
  }
})
afterAll(() => {
  vi.restoreAllMocks()
})

const merchant = () => devnet.accounts.merchant.address
/** The caller's transport settings: one retry, 300 ms each, so that a hang ends within a second. */
const transportConfig = { retryCount: 1, retryDelay: 20, timeout: 300 }

/** A vault client from the built SDK over the caller's viem, its RPC at `url`, signing as `key`. */
function builtVault(url: string, key: Hex = devnet.accounts.merchant.privateKey): VaultClient {
  const transport = sdk.vaultHttp(url, transportConfig)
  const account: Account = privateKeyToAccount(key)
  const chain = devnet.viemChain
  return sdk.createVaultClient({
    publicClient: createPublicClient({ chain, transport, pollingInterval: 50 }),
    walletClient: createWalletClient({ account, chain, transport, pollingInterval: 50 }),
    chain: 'base-sepolia',
    addresses: devnet.addresses,
  })
}

/** Awaits a call that must fail: the error it threw. */
async function failure(call: () => Promise<unknown> | unknown): Promise<unknown> {
  try {
    await call()
  } catch (error) {
    return error
  }
  throw new Error('expected the call to fail')
}

/** A converted RPC failure without a secret anywhere in it. */
function expectRpcError(error: unknown, where: string): void {
  secrets.expectNoneInValue(error, where)
  expect(error, `${where}: ${inspect(error)}`).toBeInstanceOf(sdk.VaultError)
  expect((error as { category: string }).category, `${where}: ${String(error)}`).toBe('rpc')
  secrets.expectNoneIn(JSON.stringify(error), `${where} as JSON`)
  secrets.expectNoneIn(inspect(error, { depth: 10 }), `${where} as a logger prints it`)
}

/** An x402 `exact` payment on EIP-3009 that no one settled: for the payment reads. */
function samplePayment(vault: VaultClient, wallet: Address) {
  return {
    accepted: {
      scheme: 'exact',
      network: vault.network,
      asset: vault.addresses.usdc,
      payTo: wallet,
      amount: '10000',
    },
    payload: {
      authorization: {
        from: wallet,
        to: wallet,
        value: '10000',
        nonce: `0x${'11'.repeat(32)}`,
        validBefore: '4102444800',
      },
    },
  }
}

/** Every action of the vault client, called with input that reaches the RPC. */
function sdkCalls(vault: VaultClient): Record<string, () => Promise<unknown>> {
  const wallet = merchant()
  const amount = sdk.parseUsdc('10')
  const wait = { timeout: 2_000 }
  return {
    verifyAddresses: () => vault.verifyAddresses(),
    ensureInitializedAndWait: () => vault.ensureInitializedAndWait(),
    getStatus: () => vault.getStatus(),
    getYield: () => vault.getYield(),
    getPosition: () => vault.getPosition({ wallet }),
    getLedger: () => vault.getLedger({ wallet, fromBlock: 1n }),
    previewDeposit: () => vault.previewDeposit({ amount }),
    previewRedeem: () => vault.previewRedeem({ shares: amount, wallet }),
    previewWithdrawNet: () => vault.previewWithdrawNet({ amount, wallet }),
    getMinDeposit: () => vault.getMinDeposit(),
    getUsdcBalance: () => vault.getUsdcBalance({ wallet }),
    getUsdcAllowance: () => vault.getUsdcAllowance({ wallet }),
    getShareBalance: () => vault.getShareBalance({ wallet }),
    isRegistered: () => vault.isRegistered({ wallet }),
    getPaymentAuthorizationState: () =>
      vault.getPaymentAuthorizationState({ paymentPayload: samplePayment(vault, wallet) }),
    findPaymentSettlement: () =>
      vault.findPaymentSettlement({ paymentPayload: samplePayment(vault, wallet), fromBlock: 1n }),
    planApproveUsdc: () => vault.planApproveUsdc({ wallet, amount }),
    planDeposit: () => vault.planDeposit({ wallet, amount }),
    planWithdraw: () => vault.planWithdraw({ wallet, amount }),
    planInitialize: () => vault.planInitialize({ wallet }),
    planSetOperator: () =>
      vault.planSetOperator({ wallet, operator: devnet.accounts.buyer.address }),
    initialize: () => vault.initialize(),
    initializeAndWait: () => vault.initializeAndWait(wait),
    approveUsdc: () => vault.approveUsdc({ amount }),
    approveUsdcAndWait: () => vault.approveUsdcAndWait({ amount, ...wait }),
    deposit: () => vault.deposit({ amount }),
    depositAndWait: () => vault.depositAndWait({ amount, ...wait }),
    withdraw: () => vault.withdraw({ amount }),
    withdrawAndWait: () => vault.withdrawAndWait({ amount, ...wait }),
    sweep: () => vault.sweep({ minIdleThreshold: 0n, ...wait }),
    previewSweep: () => vault.previewSweep({ minIdleThreshold: 0n }),
  }
}

// Independent of each other (each on its own RPC URLs): at once, so that their waits overlap.
describe.concurrent('every entry point, under each RPC fault', () => {
  describe('x402-vault: every SDK call', () => {
    it('names every action of the vault client (the two that attach to x402 run below)', () => {
      const vault = builtVault(proxy.url)
      const actions = Object.keys(vault).filter(
        (key) => typeof vault[key as keyof VaultClient] === 'function' && key !== 'extend',
      )
      // The deprecated former names, the very functions of attachToClient, sweep and previewSweep.
      const formerNames = ['attachTo', 'depositIdle', 'previewDepositIdle']
      expect(actions.sort()).toEqual(
        [
          ...Object.keys(sdkCalls(vault)),
          'attachToClient',
          'attachToResourceServer',
          ...formerNames,
        ].sort(),
      )
    })

    it.each(rpcFaults)('under %s: a converted RPC error, and no secret in it', async (fault) => {
      const vault = builtVault(rpc.url({ fault }))
      const started = performance.now()
      const calls = Object.entries(sdkCalls(vault))
      const errors = await Promise.all(calls.map(([, call]) => failure(call)))
      for (const [index, error] of errors.entries()) {
        expectRpcError(error, `${calls[index]?.[0]} (${fault})`)
      }
      // The caller's 300 ms timeout ends a hang: with the transport's default (2 × 10 s) it would not.
      if (fault === 'hang') expect(performance.now() - started).toBeLessThan(15_000)
    })
  })

  describe('x402-vault/express and x402-vault/hono', () => {
    const paywallOptions = (vault: VaultClient, sweep: object = {}) => ({
      vault,
      payTo: merchant(),
      facilitator: { url: devnet.facilitatorUrl, bearerToken: facilitatorToken },
      routes: paidRoutes('0.5'),
      // Under a fault the check of the facilitator's claim on chain gives up after 0.5 s, not the
      // default 10 s: its problem is reported the same way, sooner.
      settlementCheckMs: 500,
      sweep: { minIdleThreshold: '0', retry: { maxAttempts: 2, initialDelayMs: 20 }, ...sweep },
    })

    it.each(rpcFaults)(
      'createPaywall under %s: refuses to start with a converted RPC error',
      async (fault) => {
        for (const name of ['express', 'hono'] as const) {
          const merchantKey = builtVault(rpc.url({ fault }))
          const error = await failure(() =>
            plugins[name].createPaywall(paywallOptions(merchantKey)),
          )
          expectRpcError(error, `${name}'s createPaywall (${fault})`)
        }
      },
    )

    // The operator check at start-up reads the allowance on its own: through the SDK, so converted too.
    it.each(rpcFaults)(
      'createPaywall with an operator key, its allowance read under %s: a converted RPC error',
      async (fault) => {
        const url = rpc.url({ fault, selector: allowanceSelector })
        for (const name of ['express', 'hono'] as const) {
          const operatorKey = builtVault(url, sweeperKey)
          const error = await failure(() =>
            plugins[name].createPaywall(paywallOptions(operatorKey)),
          )
          expectRpcError(error, `${name}'s operator check (${fault})`)
          expect((error as { message: string }).message).toMatch(/^USDC allowance read failed: /)
        }
      },
    )

    it.each(['express', 'hono'] as const)(
      '%s: the sweep of a paid request under each fault hands onNonFatalError converted errors',
      async (name) => {
        const problems = reports<SweeperProblem>()
        rpc.setLive(name, undefined)
        const paywall = await plugins[name].createPaywall(
          paywallOptions(builtVault(rpc.url({ live: name })), { onNonFatalError: problems.add }),
        )
        const app = await frameworks
          .find((framework) => framework.name === name)
          ?.start(paywall.middleware)
        if (!app) throw new Error(`no ${name} app`)
        try {
          for (const fault of rpcFaults) {
            rpc.setLive(name, fault)
            const before = problems.all.length
            const problem = problems.next()
            const response = await buyerClient(devnet, { fetch: app.fetch }).pay(
              `${app.baseUrl}/paid`,
            )
            expect(response.status, `${fault}: ${await response.clone().text()}`).toBe(200)
            await problem
            // Its retries run under the same fault.
            await paywall.sweeper?.idle()
            rpc.setLive(name, undefined)
            expect(problems.all.length, fault).toBeGreaterThan(before)
          }
        } finally {
          await paywall.close()
          await app.stop()
        }
        for (const problem of problems.all) {
          expectRpcError(problem.error, `${name}: a ${problem.phase} problem`)
          secrets.expectNoneInValue(problem, `${name}: a ${problem.phase} problem`)
        }
      },
    )
  })

  describe('x402-vault: the buyer’s attachToClient', () => {
    it.each(rpcFaults)(
      'under %s: the payment it cannot fund is refused before signing, with a converted error and no secret',
      async (fault) => {
        const paywall = await plugins.express.createPaywall({
          vault: builtVault(devnet.rpcUrl),
          payTo: merchant(),
          facilitator: { url: devnet.facilitatorUrl, bearerToken: facilitatorToken },
          routes: paidRoutes('0.5'),
          sweep: false,
        })
        const app = await frameworks[0]?.start(paywall.middleware)
        if (!app) throw new Error('no app')
        const problems = reports<BuyerProblem>()
        const buyer = buyerClient(devnet, { fetch: app.fetch })
        const attached = builtVault(
          rpc.url({ fault }),
          devnet.accounts.buyer.privateKey,
        ).attachToClient(buyer.client, {
          retry: { maxAttempts: 2, initialDelayMs: 20 },
          onNonFatalError: problems.add,
        })
        try {
          // The buyer's balance cannot be read, so whether it can pay is unknown: nothing is signed.
          const refused = await failure(() => buyer.pay(`${app.baseUrl}/paid`))
          secrets.expectNoneInValue(refused, `the refused payment (${fault})`)
          expect(String(refused)).toMatch(/aborted before signing.*\(RPC_[A-Z_]+: /)
          await attached.idle()
        } finally {
          await attached.detach()
          await paywall.close()
          await app.stop()
        }
        for (const problem of problems.all) {
          expectRpcError(problem.error, `the buyer's ${problem.phase} problem (${fault})`)
        }
      },
    )
  })

  describe('x402-vault/mcp', () => {
    it('every tool under each fault answers an RPC error; neither the answers nor the log show a secret', async () => {
      const addresses = await writeAddressesFile(devnet)
      await Promise.all(
        rpcFaults.map(async (fault) => {
          const lines: string[] = []
          const server = mcp.createServer(
            await mcp.loadMcpConfig({
              BASE_SEPOLIA_RPC_URL: rpc.url({ fault }),
              VAULT_ADDRESSES: addresses,
            }),
            { logger: mcp.createLogger('debug', (line) => lines.push(line)) },
          )
          const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
          await server.connect(serverSide)
          const client = new Client({ name: 'secrets', version: '1.0.0' })
          await client.connect(clientSide)
          try {
            // At once: under a hang each call takes the server's own RPC timeouts (2 × 8 s).
            await Promise.all(
              mcpToolCalls(merchant()).map(async ([tool, args]) => {
                const answer = await callTool(client, tool, args)
                expect(answer.isError, `${tool} (${fault}): ${answer.text}`).toBe(true)
                expect(answer.text, `${tool} (${fault})`).toMatch(/^RPC_[A-Z_]+[ :]/)
                secrets.expectNoneIn(answer.text, `${tool}'s answer (${fault})`)
              }),
            )
          } finally {
            await client.close()
          }
          secrets.expectNoneIn(lines.join(''), `the MCP log (${fault})`)
        }),
      )
    })
  })

  describe('x402-vault/devnet', () => {
    it('a devnet that cannot start throws a DevnetError that shows no facilitator bearer token', async () => {
      const taken = createServer().listen(0, '127.0.0.1')
      await once(taken, 'listening')
      const port = (taken.address() as { port: number }).port
      try {
        for (const options of [
          { port, facilitator: { bearerToken: facilitatorToken } },
          { facilitator: { bearerToken: facilitatorToken, port } },
        ]) {
          const error = await failure(() => devnetEntry.startDevnet(options))
          expect(error, inspect(error)).toBeInstanceOf(devnetEntry.DevnetError)
          secrets.expectNoneInValue(error, `startDevnet(${JSON.stringify(Object.keys(options))})`)
          secrets.expectNoneIn(inspect(error, { depth: 10 }), 'a DevnetError as a logger prints it')
        }
      } finally {
        taken.close()
      }
    })
  })
})

describe('a receipt that a node behind a load balancer does not have yet', () => {
  // Answered null twice. viem's wait, bundled in the built package, took the caller's viem's "not
  // found" for a failure and gave up at once (reported as RECEIPT_NOT_FOUND, and retried): the wait
  // now polls on through it, so the sale's sweep and the recall see nothing wrong.
  const nullReceipts = () => {
    proxy.reset()
    proxy.setFault(
      { kind: 'call-result', method: 'eth_getTransactionReceipt', result: null },
      { methods: ['eth_getTransactionReceipt'], times: 2 },
    )
  }
  /** The receipt reads since `nullReceipts()`: the two nulls, then at least the one that found it. */
  const receiptReads = () =>
    proxy.methods.filter((method) => method === 'eth_getTransactionReceipt').length
  afterEach(() => proxy.setFault(undefined))

  it('the sweep waits for it: nothing reaches onNonFatalError, and the deposit is confirmed once', async () => {
    const problems = reports<SweeperProblem>()
    const deposits: { txHash: string }[] = []
    const paywall = await plugins.express.createPaywall({
      vault: builtVault(proxy.url),
      payTo: merchant(),
      facilitator: { url: devnet.facilitatorUrl, bearerToken: facilitatorToken },
      routes: paidRoutes('0.5'),
      sweep: {
        minIdleThreshold: '0',
        retry: { initialDelayMs: 20 },
        onNonFatalError: problems.add,
        onIdleDeposit: (deposit) => deposits.push(deposit),
      },
    })
    const app = await frameworks[0]?.start(paywall.middleware)
    if (!app) throw new Error('no app')
    try {
      nullReceipts()
      expect(
        (await buyerClient(devnet, { fetch: app.fetch }).pay(`${app.baseUrl}/paid`)).status,
      ).toBe(200)
      await paywall.sweeper?.idle()
    } finally {
      await paywall.close()
      await app.stop()
    }
    expect(receiptReads()).toBeGreaterThanOrEqual(3)
    expect(problems.all.map(({ phase, error }) => [phase, error.code])).toEqual([])
    expect(deposits).toHaveLength(1)
  })

  it('the recall waits for it: nothing reaches onNonFatalError, one recall, and the payment goes through', async () => {
    // The buyer keeps 0.1 USDC liquid and the rest in the vault: a 0.5 USDC payment recalls.
    const buyerOnDevnet = devnetClients(devnet).vaultFor(
      createWalletClient({
        account: privateKeyToAccount(devnet.accounts.buyer.privateKey),
        chain: devnet.viemChain,
        transport: http(devnet.rpcUrl),
      }),
    )
    await buyerOnDevnet.ensureInitializedAndWait()
    const liquid = await buyerOnDevnet.getUsdcBalance({ wallet: devnet.accounts.buyer.address })
    await buyerOnDevnet.depositAndWait({ amount: liquid - sdk.parseUsdc('0.1') })

    const paywall = await plugins.express.createPaywall({
      vault: builtVault(devnet.rpcUrl),
      payTo: merchant(),
      facilitator: { url: devnet.facilitatorUrl, bearerToken: facilitatorToken },
      routes: paidRoutes('0.5'),
      sweep: false,
    })
    const app = await frameworks[0]?.start(paywall.middleware)
    if (!app) throw new Error('no app')
    const problems = reports<BuyerProblem>()
    const recalls: { txHash: string }[] = []
    const buyer = buyerClient(devnet, { fetch: app.fetch })
    const attached = builtVault(proxy.url, devnet.accounts.buyer.privateKey).attachToClient(
      buyer.client,
      {
        retry: { initialDelayMs: 20 },
        onNonFatalError: problems.add,
        onRecall: (recall) => recalls.push(recall),
      },
    )
    try {
      nullReceipts()
      expect((await buyer.pay(`${app.baseUrl}/paid`)).status).toBe(200)
      await attached.idle()
    } finally {
      await attached.detach()
      await paywall.close()
      await app.stop()
    }
    expect(receiptReads()).toBeGreaterThanOrEqual(3)
    expect(problems.all.map(({ phase, error }) => [phase, error.code])).toEqual([])
    expect(recalls).toHaveLength(1)
  })
})

describe('the console', () => {
  it('nothing the package wrote to the console, stdout or stderr in this file shows a secret', () => {
    secrets.expectNoneIn(output.join('\n'), 'the console, stdout and stderr')
  })
})

/** The `eth_call` selector of ERC-20's `allowance(address,address)`. */
const allowanceSelector = '0xdd62ed3e'

/** Reports to a callback, kept, with a wait for the next one. */
function reports<T>() {
  const all: T[] = []
  let waiting: ((report: T) => void)[] = []
  return {
    all,
    add: (report: T) => {
      all.push(report)
      for (const resolve of waiting) resolve(report)
      waiting = []
    },
    /** The next report from now. */
    next: () => new Promise<T>((resolve) => waiting.push(resolve)),
  }
}
