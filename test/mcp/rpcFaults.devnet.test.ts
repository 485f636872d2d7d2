import type { ChildProcess } from 'node:child_process'
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest'
import { writeAddressesFile } from '../../harness/addressesFile.js'
import {
  type CountingProxy,
  type RpcFault,
  startCountingProxy,
} from '../../harness/countingProxy.js'
import { initializeRequest, spawnJsonLines } from '../../harness/jsonLinesProcess.js'
import { mcpToolNames } from '../../harness/mcpToolNames.js'
import { type Devnet, startDevnet } from '../../src/devnet/startDevnet.js'
import {
  callTool,
  callToolError,
  callToolOk,
  connectMcp,
  expectNoInternals,
  type McpSession,
  mcpBin,
} from '../support/mcp.js'

// The real stdio server behind a fault-injecting proxy. Its RPC URL carries a provider-style key in
// its path and query: no answer and no log line may show it.

let devnet: Devnet
let proxy: CountingProxy
let mcp: McpSession
let wallet: string
const secret = /SECRETKEY|QUERYSECRET/

beforeAll(async () => {
  devnet = await startDevnet({ chain: 'base-sepolia' })
  proxy = await startCountingProxy(devnet.rpcUrl)
  wallet = devnet.accounts.merchant.address
  mcp = await connectMcp({
    BASE_SEPOLIA_RPC_URL: `${proxy.url}/v2/SECRETKEY?apikey=QUERYSECRET`,
    VAULT_ADDRESSES: await writeAddressesFile(devnet),
    MCP_LOG_LEVEL: 'debug',
  })
  await callToolOk(mcp.client, 'vault_status') // verified before any fault
  await startHangingCall()
})
afterEach(() => {
  proxy.setFault(undefined)
  proxy.retarget(devnet.rpcUrl)
  expect(mcp.stderr()).not.toMatch(secret)
})
afterAll(async () => {
  await hanging?.mcp.close()
  await hanging?.proxy.close()
  await mcp?.close()
  await proxy?.close()
  await devnet?.stop()
})

/**
 * A second server behind a proxy of its own, whose call meets a hanging RPC as soon as the file has
 * started: it waits out the server's own timeouts (two attempts of 8 s, as users have them) while the
 * other tests run, and the test that reads it only awaits its answer.
 */
let hanging: {
  proxy: CountingProxy
  mcp: McpSession
  answer: Promise<{ answer: Awaited<ReturnType<typeof callTool>>; elapsed: number }>
}
async function startHangingCall() {
  const hangingProxy = await startCountingProxy(devnet.rpcUrl)
  const hangingMcp = await connectMcp({
    BASE_SEPOLIA_RPC_URL: `${hangingProxy.url}/v2/SECRETKEY?apikey=QUERYSECRET`,
    VAULT_ADDRESSES: await writeAddressesFile(devnet),
    MCP_LOG_LEVEL: 'debug',
  })
  await callToolOk(hangingMcp.client, 'vault_status')
  hangingProxy.setFault({ kind: 'hang' })
  const started = performance.now()
  const answer = callTool(hangingMcp.client, 'vault_status', {}).then((answer) => ({
    answer,
    elapsed: performance.now() - started,
  }))
  // Read by its test; a failure before then must not go unhandled.
  answer.catch(() => {})
  hanging = { proxy: hangingProxy, mcp: hangingMcp, answer }
}

/** A read, a read with input, and two plans: each reaches the RPC. */
const calls = (): [string, Record<string, unknown>][] => [
  ['vault_status', {}],
  ['vault_get_position', { wallet }],
  ['vault_plan_approve_usdc', { wallet, amountUsdc: '10' }],
  ['vault_plan_deposit', { wallet, amountUsdc: '10' }],
]

/** Calls a tool and expects an `RPC_*` retryable refusal within `withinMs`; returns its code. */
async function expectRetryableRpcError(
  name: string,
  args: Record<string, unknown>,
  withinMs: number,
): Promise<string> {
  const started = performance.now()
  const answer = await callTool(mcp.client, name, args)
  return checkRetryableRpcError(name, answer, performance.now() - started, withinMs)
}

/** Checks that `answer` is an `RPC_*` retryable refusal that came within `withinMs`; returns its code. */
function checkRetryableRpcError(
  name: string,
  answer: Awaited<ReturnType<typeof callTool>>,
  elapsed: number,
  withinMs: number,
): string {
  expect(answer.isError, answer.text).toBe(true)
  const code = /^(RPC_[A-Z_]+) \(retryable\): /.exec(answer.text)?.[1]
  expect(code, answer.text).toBeDefined()
  expect(answer.text).toContain('BASE_SEPOLIA_RPC_URL')
  expect(answer.text).not.toMatch(secret)
  expectNoInternals(answer.text)
  expect(elapsed, `${name} took ${Math.round(elapsed)} ms`).toBeLessThan(withinMs)
  return code as string
}

// The server's transport: one retry, 8 s per attempt, 250 ms base backoff, waits ≤ 5 s.
const answeredWithinMs = 3_000
const hangBoundMs = 2 * 8_000 + 3_000

describe('RPC faults through the real stdio server', () => {
  const faults: [string, RpcFault, string | undefined][] = [
    [
      'HTTP 429 with a long Retry-After',
      { kind: 'status', status: 429, retryAfter: '3600' },
      'RPC_RATE_LIMITED',
    ],
    [
      'HTTP 429 with Retry-After: 1',
      { kind: 'status', status: 429, retryAfter: '1' },
      'RPC_RATE_LIMITED',
    ],
    ['HTTP 500', { kind: 'status', status: 500 }, 'RPC_HTTP_ERROR'],
    ['malformed JSON', { kind: 'malformed-json' }, 'RPC_BAD_RESPONSE'],
    ['0x where a number is due', { kind: 'empty-number' }, 'RPC_BAD_RESPONSE'],
    ['a reset connection', { kind: 'reset' }, 'RPC_UNREACHABLE'],
    // The precise code is the test below; here any retryable RPC_* code passes.
    ['JSON that is not JSON-RPC', { kind: 'not-json-rpc' }, undefined],
  ]

  it.each(faults)(
    '%s: every tool answers a retryable RPC error in bounded time, and works again once it clears',
    async (_name, fault, expectedCode) => {
      proxy.setFault(fault)
      for (const [name, args] of calls()) {
        const code = await expectRetryableRpcError(name, args, answeredWithinMs)
        if (expectedCode) expect(code, name).toBe(expectedCode)
      }
      proxy.setFault(undefined)
      for (const [name, args] of calls()) await callToolOk(mcp.client, name, args)
    },
  )

  // Through the batching transport viem reports such an answer as "Expected N responses to batch
  // request." inside an HttpRequestError without a status: a malformed answer, not an unreachable RPC.
  it('names an answer that is JSON but not JSON-RPC RPC_BAD_RESPONSE', async () => {
    proxy.setFault({ kind: 'not-json-rpc' })
    await callToolError(mcp.client, 'vault_status', {}, 'RPC_BAD_RESPONSE', { retryable: true })
  })

  it('honours Retry-After: a 429 that asks for 1 s is retried after it, and the tool answers', async () => {
    proxy.setFault({ kind: 'status', status: 429, retryAfter: '1' }, { times: 1 })
    const started = performance.now()
    await callToolOk(mcp.client, 'vault_status')
    const elapsed = performance.now() - started
    expect(elapsed).toBeGreaterThanOrEqual(950)
    expect(elapsed).toBeLessThan(answeredWithinMs)
  })

  // Providers answer a bad key or a wrong URL path with plain text, an HTML page, or a page under a
  // JSON content type: the status decides, and retrying would never help.
  it.each([
    [401, 'text/plain', 'Unauthorized: invalid API key'],
    [403, 'text/html', '<html><body><h1>403 Forbidden</h1></body></html>'],
    [404, 'application/json', '<!DOCTYPE html><html><body>Not Found</body></html>'],
    [401, 'application/json', 'invalid project id'],
  ])(
    'HTTP %i with a %s body that is not JSON-RPC is RPC_UNAUTHORIZED, not retried',
    async (status, contentType, body) => {
      proxy.setFault({ kind: 'status', status, contentType, body })
      const started = performance.now()
      const { result: text, requests } = await proxy.measure(() =>
        callToolError(mcp.client, 'vault_status', {}, 'RPC_UNAUTHORIZED'),
      )
      expect(requests, 'no retry').toBe(1)
      expect(performance.now() - started).toBeLessThan(answeredWithinMs)
      expect(text).toContain(`HTTP ${status}`)
      expect(text).toContain('fix the URL or the key in BASE_SEPOLIA_RPC_URL')
      expect(text).not.toMatch(secret)
    },
  )

  // A broken RPC or gateway answering eth_call with something no contract returns: a malformed
  // answer (retryable), never INTERNAL_ERROR, and never "no contract" while the contracts are there.
  it.each([
    ['32 zero bytes', `0x${'0'.repeat(64)}`],
    ['a number', 123],
    ['null', null],
    ['0x', '0x'],
  ])('eth_call answered with %s is RPC_BAD_RESPONSE', async (_name, result) => {
    proxy.setFault({ kind: 'call-result', result })
    for (const [name, args] of calls()) {
      const text = await callToolError(mcp.client, name, args, 'RPC_BAD_RESPONSE', {
        retryable: true,
      })
      expect(text, name).toContain('BASE_SEPOLIA_RPC_URL')
    }
  })

  it('a call the client cancels stops its RPC request at once', async () => {
    proxy.setFault({ kind: 'hang' })
    const controller = new AbortController()
    const call = mcp.client.callTool({ name: 'vault_status', arguments: {} }, undefined, {
      signal: controller.signal,
    })
    await vi.waitFor(() => expect(proxy.hanging).toBe(1), { timeout: 3_000, interval: 20 })
    controller.abort()
    await expect(call).rejects.toThrow()
    // The server aborted the fetch: the proxy sees the connection close, long before the 8 s timeout.
    await vi.waitFor(() => expect(proxy.hanging).toBe(0), { timeout: 1_000, interval: 20 })
  })

  it('the server survives every fault: tools/list still answers', async () => {
    expect((await mcp.client.listTools()).tools).toHaveLength(mcpToolNames.length)
  })
})

describe('the client going away while an RPC request hangs', () => {
  /**
   * Waits until the server's RPC request hangs at the proxy: the server starts and loads its tools
   * first, which takes longer the busier the machine is, so the wait is bounded by the test's own
   * timeout rather than by a guess of this machine's speed.
   */
  const untilRequestHangs = () =>
    vi.waitFor(() => expect(proxy.hanging).toBeGreaterThan(0), { timeout: 45_000, interval: 20 })
  /**
   * Ends a server the test left running (when it failed), and waits for its request to be let go:
   * otherwise it would hang on into the next test, which counts hanging requests.
   */
  const endProcess = async (server: { child: ChildProcess; exited: Promise<unknown> }) => {
    if (server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGKILL')
    }
    await server.exited
    await vi.waitFor(() => expect(proxy.hanging).toBe(0), { timeout: 5_000, interval: 20 })
  }

  it('closing stdin ends the process within 1 s and aborts the hung request, and is no error', async () => {
    const server = spawnJsonLines([mcpBin], {
      BASE_SEPOLIA_RPC_URL: proxy.url,
      VAULT_ADDRESSES: await writeAddressesFile(devnet),
      // The level the client set-up examples use: only what needs someone's attention.
      MCP_LOG_LEVEL: 'error',
    })
    onTestFinished(() => endProcess(server))
    proxy.setFault({ kind: 'hang' })
    server.send(initializeRequest)
    await server.next()
    server.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    server.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'vault_status' } })
    await untilRequestHangs()
    const closed = performance.now()
    server.child.stdin.end()
    expect(await server.exited).toBe(0)
    const took = performance.now() - closed
    expect(took, `exited ${Math.round(took)} ms after stdin closed`).toBeLessThan(1_000)
    await vi.waitFor(() => expect(proxy.hanging).toBe(0), { timeout: 1_000, interval: 20 })
    // A client that goes away mid-call is not an error: nothing to say.
    expect(server.stderr()).toBe('')
  })

  it('a session that lists the tools and leaves (as the Inspector does) logs no warning', async () => {
    const server = spawnJsonLines([mcpBin], {
      BASE_SEPOLIA_RPC_URL: proxy.url,
      VAULT_ADDRESSES: await writeAddressesFile(devnet),
    })
    onTestFinished(() => endProcess(server))
    // The verification the handshake starts is still on its way when the client leaves.
    proxy.setFault({ kind: 'hang' })
    server.send(initializeRequest)
    await server.next()
    server.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    server.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' })
    await server.next()
    await untilRequestHangs()
    server.child.stdin.end()
    expect(await server.exited).toBe(0)
    expect(server.stderr()).toContain('info: Connected to raw 1')
    expect(server.stderr()).not.toMatch(/\] (warn|error): /)
  })
})

describe('a chain id that changes under the running server', () => {
  let other: Devnet
  beforeAll(async () => {
    other = await startDevnet({ chain: 'base' })
  })
  afterAll(async () => {
    await other?.stop()
  })

  it('refuses every tool with CHAIN_MISMATCH, so no plan is made for the wrong chain; the right chain again answers', async () => {
    // The same deployer and nonces: every address but the USDC's (at its live address on Base) has the
    // same contract on the other chain, so the reads and plans would succeed there without the chain check.
    expect({ ...other.addresses, usdc: devnet.addresses.usdc }).toEqual(devnet.addresses)
    expect(other.chainId).toBe(8453)
    proxy.retarget(other.rpcUrl)
    for (const [name, args] of [
      ...calls(),
      ['vault_check_yield', {}],
      ['vault_plan_withdraw', { wallet, amountUsdc: '10' }],
    ] as [string, Record<string, unknown>][]) {
      const text = await callToolError(mcp.client, name, args, 'CHAIN_MISMATCH')
      expect(text).toContain('serves chain 8453, not base-sepolia (84532)')
      expect(text).toContain('nothing was read or planned')
    }
    expect(mcp.stderr()).toContain('serves chain 8453')

    proxy.retarget(devnet.rpcUrl)
    for (const [name, args] of calls()) {
      const answer = await callToolOk(mcp.client, name, args)
      expect(answer.chainId).toBe(84532)
    }
  })

  it('a server started on the wrong chain refuses the same way, and answers once the RPC serves Base Sepolia', async () => {
    const wrongChain = await startCountingProxy(other.rpcUrl)
    const session = await connectMcp({
      BASE_SEPOLIA_RPC_URL: wrongChain.url,
      VAULT_ADDRESSES: await writeAddressesFile(devnet),
    })
    try {
      const text = await callToolError(session.client, 'vault_status', {}, 'CHAIN_MISMATCH')
      expect(text).toContain('serves chain 8453')
      wrongChain.retarget(devnet.rpcUrl)
      expect((await callToolOk(session.client, 'vault_status')).chainId).toBe(84532)
    } finally {
      await session.close()
      await wrongChain.close()
    }
  })
})

// Last: its call has waited out the server's timeouts while the tests above ran (startHangingCall).
describe('a hung RPC', () => {
  it('a request that hangs past the timeout is answered RPC_TIMEOUT, bounded, then works again', async () => {
    const { answer, elapsed } = await hanging.answer
    expect(checkRetryableRpcError('vault_status', answer, elapsed, hangBoundMs)).toBe('RPC_TIMEOUT')
    hanging.proxy.setFault(undefined)
    await callToolOk(hanging.mcp.client, 'vault_plan_deposit', { wallet, amountUsdc: '10' })
    expect(hanging.mcp.stderr()).not.toMatch(secret)
  }, 40_000)
})
