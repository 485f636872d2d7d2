/**
 * examples/mcp-worker in workerd (Cloudflare's Workers runtime, from miniflare), bundled with esbuild
 * as wrangler would, with `nodejs_compat` and its Durable Object, its settings as bindings, reading a
 * devnet on 127.0.0.1 (Base Sepolia) through an RPC URL whose path is a secret. Real MCP SDK clients
 * (the v1 SDK's `StreamableHTTPClientTransport`, and the v2 SDK's pinned to the 2026-07-28 revision)
 * reach it by Miniflare's URL without a token, list the six tools and call each against the devnet.
 * A request for another Host is refused. The per-client limit is held in the Durable Object: two
 * Workers (two isolates) in front of the one object share it, and the request past it is 429 with
 * `Retry-After`. A missing required binding is a clear 500 naming it. workerd's output never holds the
 * RPC URL's secret path.
 *
 * Cloudflare writes `CF-Connecting-IP` on every request; here the test writes it, as the edge would,
 * to give each client its own address.
 */
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { Miniflare, type WorkerOptions } from 'miniflare'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { type CountingProxy, startCountingProxy } from '../../harness/countingProxy.js'
import { connectHttp, postMcp, rawPost } from '../../harness/mcpHttp.js'
import { mcpToolNames, readToolNames } from '../../harness/mcpToolNames.js'
import { bundleWorker } from '../../harness/workerBundle.js'
import { type Devnet, startDevnet } from '../../src/devnet/startDevnet.js'
import { giveMerchantPositionAndAllowance } from '../support/devnet.js'
import { callToolError, callToolOk, expectMatchesOutputSchema } from '../support/mcp.js'

const exampleDir = join(import.meta.dirname, '../../examples/mcp-worker/src')
/** The example's entry as wrangler bundles it: the Worker and its Durable Object class. */
const bundle = bundleWorker("export { default, McpEndpoint } from './index.ts'", exampleDir)
/** The RPC URL's secret part: nothing the Worker writes may hold it. */
const secretPath = '/v2/SECRETKEY0123456789'
/** Requests per minute per client, low enough to reach in a test. */
const rateLimit = 12
const listTools = { jsonrpc: '2.0', id: 1, method: 'tools/list' }

let devnet: Devnet
let proxy: CountingProxy
let mf: Miniflare
/** Miniflare's URL: the first Worker, `mcp`, which defines the Durable Object. */
let origin: string
let merchant: `0x${string}`
/** Every line workerd wrote. */
const output: string[] = []

beforeAll(async () => {
  const [started, script] = await Promise.all([startDevnet({ chain: 'base-sepolia' }), bundle])
  devnet = started
  merchant = devnet.accounts.merchant.address
  await giveMerchantPositionAndAllowance(devnet)
  proxy = await startCountingProxy(devnet.rpcUrl)
  const bindings = {
    BASE_SEPOLIA_RPC_URL: `${proxy.url}${secretPath}`,
    VAULT_ADDRESSES_JSON: JSON.stringify(devnet.addresses),
    VAULT_MCP_ALLOWED_HOSTS: '127.0.0.1',
    VAULT_MCP_RATE_LIMIT: String(rateLimit),
  }
  const worker = (name: string, options: Partial<WorkerOptions>): WorkerOptions =>
    ({
      name,
      modules: true,
      script,
      compatibilityDate: '2025-09-01',
      compatibilityFlags: ['nodejs_compat'],
      ...options,
    }) as WorkerOptions
  const collect = (stream: Readable) => {
    let rest = ''
    stream.on('data', (chunk: Buffer) => {
      const parts = (rest + chunk.toString()).split('\n')
      rest = parts.pop() ?? ''
      output.push(...parts.filter((line) => line.trim() !== ''))
    })
  }
  mf = new Miniflare({
    handleRuntimeStdio: (stdout: Readable, stderr: Readable) => {
      collect(stdout)
      collect(stderr)
    },
    workers: [
      worker('mcp', { bindings, durableObjects: { MCP_ENDPOINT: 'McpEndpoint' } }),
      // The same Worker in another isolate, in front of the first one's Durable Object, as two
      // isolates (or two locations) of one deployed Worker are.
      worker('mcp-other-isolate', {
        bindings,
        durableObjects: { MCP_ENDPOINT: { className: 'McpEndpoint', scriptName: 'mcp' } },
      }),
      // Deployed without VAULT_MCP_ALLOWED_HOSTS.
      worker('mcp-no-hosts', {
        bindings: { ...bindings, VAULT_MCP_ALLOWED_HOSTS: '' },
        durableObjects: { MCP_ENDPOINT: 'McpEndpoint' },
      }),
    ],
  })
  origin = (await mf.ready).origin
}, 120_000)

afterAll(async () => {
  await mf?.dispose()
  await proxy?.close()
  await devnet?.stop()
})

/**
 * Fetches from the named Worker directly (not by Miniflare's URL). Miniflare types the Worker's
 * Fetcher without `fetch` unless the Workers types are installed.
 */
async function workerFetch(name: string): Promise<typeof fetch> {
  const worker = (await mf.getWorker(name)) as unknown as { fetch: typeof fetch }
  return worker.fetch.bind(worker)
}

/** The headers Cloudflare's edge adds for a client at `address`. */
const at = (address: string) => ({ 'cf-connecting-ip': address })

it.each([
  ['v1', '192.0.2.1'],
  ['v2-modern', '192.0.2.2'],
] as const)(
  'a real %s MCP client lists the six tools without a token and calls each of them against the devnet',
  async (kind, address) => {
    const session = await connectHttp(`${origin}/mcp`, kind, at(address))
    try {
      const { tools } = await session.client.listTools()
      expect(tools.map((tool) => tool.name)).toEqual([...mcpToolNames])
      const args: Record<string, Record<string, unknown>> = {
        vault_get_position: { wallet: merchant },
        vault_plan_approve_usdc: { wallet: merchant, amountUsdc: '25' },
        vault_plan_deposit: { wallet: merchant, amountUsdc: '25' },
        vault_plan_withdraw: { wallet: merchant, amountUsdc: '10' },
      }
      const answers: Record<string, Record<string, unknown>> = {}
      for (const tool of tools) {
        answers[tool.name] = await callToolOk(session.client, tool.name, args[tool.name])
        expectMatchesOutputSchema(tool.outputSchema as Record<string, unknown>, answers[tool.name])
      }
      // The devnet's state, as the merchant left it: 1,000 USDC, 200 of them deposited.
      expect(answers.vault_get_position).toMatchObject({
        wallet: merchant,
        registered: true,
        liquidUsdc: { usdc: '800', atomic: '800000000' },
        deposited: { usdc: '200', atomic: '200000000' },
      })
      expect(answers.vault_status).toMatchObject({ contracts: { router: devnet.addresses.router } })
      // Bad input is a clear refusal, as over stdio.
      await callToolError(
        session.client,
        'vault_get_position',
        { wallet: '0x12' },
        'INVALID_ADDRESS',
      )
    } finally {
      await session.close()
    }
  },
)

it('each read tool is one RPC round trip from the Durable Object', async () => {
  const session = await connectHttp(`${origin}/mcp`, 'v1', at('192.0.2.3'))
  try {
    for (const name of readToolNames) {
      const args = name === 'vault_get_position' ? { wallet: merchant } : {}
      const { requests } = await proxy.measure(() => callToolOk(session.client, name, args))
      expect(requests, name).toBe(1)
    }
  } finally {
    await session.close()
  }
})

it('answers only for the host names in VAULT_MCP_ALLOWED_HOSTS: another Host is 403', async () => {
  const refused = await rawPost(origin, { host: 'evil.example', ...at('192.0.2.4') }, listTools)
  expect(refused.status).toBe(403)
  expect(JSON.parse(refused.body).error.data.reason).toBe('HOST_NOT_ALLOWED')
  expect((await rawPost(origin, at('192.0.2.4'), listTools)).status).toBe(200)
})

it('holds the per-client limit in the Durable Object, across isolates: the request past it is 429 with Retry-After', async () => {
  const other = await workerFetch('mcp-other-isolate')
  const client = at('198.51.100.7')
  const statuses: number[] = []
  // Half of the client's allowance through each isolate.
  for (let request = 0; request < rateLimit; request++) {
    const response =
      request % 2
        ? await other('http://127.0.0.1/mcp', {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json', ...client },
            body: JSON.stringify(listTools),
          })
        : await postMcp(`${origin}/mcp`, listTools, client)
    statuses.push(response.status)
    await response.arrayBuffer()
  }
  expect(statuses).toEqual(Array(rateLimit).fill(200))
  const refused = await postMcp(`${origin}/mcp`, listTools, client)
  expect(refused.status).toBe(429)
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
  expect(
    ((await refused.json()) as { error: { data: { reason: string } } }).error.data.reason,
  ).toBe('RATE_LIMITED')
  // Another client is served.
  expect((await postMcp(`${origin}/mcp`, listTools, at('198.51.100.8'))).status).toBe(200)
})

it('deployed without VAULT_MCP_ALLOWED_HOSTS, it answers 500 naming the binding, and serves nobody', async () => {
  const unset = await workerFetch('mcp-no-hosts')
  const response = await unset('http://127.0.0.1/mcp', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(listTools),
  })
  expect(response.status).toBe(500)
  const body = (await response.json()) as { error: { message: string } }
  expect(body.error.message).toMatch(/^A public server needs VAULT_MCP_ALLOWED_HOSTS/)
})

it('workerd logged one line per request, by client address, and never the RPC URL’s secret path', () => {
  expect(output.join('\n')).not.toContain(secretPath)
  expect(output.join('\n')).not.toContain('SECRETKEY')
  const requests = output
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { client: string; status: number; refusal?: string })
  expect(requests).toContainEqual(
    expect.objectContaining({ client: '198.51.100.7', status: 429, refusal: 'RATE_LIMITED' }),
  )
  expect(requests).toContainEqual(
    expect.objectContaining({ client: '192.0.2.4', status: 403, refusal: 'HOST_NOT_ALLOWED' }),
  )
})
