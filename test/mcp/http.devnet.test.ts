/**
 * `x402-vault mcp --http`, the BUILT bin, through real MCP clients over Streamable HTTP: the v1 SDK's
 * client and the v2 SDK's (2025-era handshake, and pinned to the 2026-07-28 revision), every tool on a
 * devnet, every refusal in front of the MCP SDK, 100 concurrent calls, a client that hangs up mid-call,
 * and a drain on SIGTERM.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeAddressesFile } from '../../harness/addressesFile.js'
import { type CountingProxy, startCountingProxy } from '../../harness/countingProxy.js'
import { initializeRequest } from '../../harness/jsonLinesProcess.js'
import {
  connectHttp,
  type HttpClientKind,
  type HttpMcp,
  postMcp,
  rawPost,
  rpcAnswer,
  startHttpMcp,
} from '../../harness/mcpHttp.js'
import { mcpToolNames } from '../../harness/mcpToolNames.js'
import { runCli } from '../../harness/runCli.js'
import { type Devnet, startDevnet } from '../../src/devnet/startDevnet.js'
import { idleConnectionMs } from '../../src/mcp/http/keepIdleConnections.js'
import { giveMerchantPositionAndAllowance } from '../support/devnet.js'
import {
  callToolError,
  callToolOk,
  expectMatchesOutputSchema,
  expectNoInternals,
} from '../support/mcp.js'

const token = 'test-token-0123456789abcdef0123456789'
const auth = { authorization: `Bearer ${token}` }
/** The RPC URL's secret part: the server must never show it. */
const secretPath = '/v2/SECRETKEY0123456789'
const allowedOrigin = 'https://app.example.com'

let devnet: Devnet
let proxy: CountingProxy
let addresses: string
let mcp: HttpMcp
let merchant: `0x${string}`

beforeAll(async () => {
  devnet = await startDevnet({ chain: 'base-sepolia' })
  merchant = devnet.accounts.merchant.address
  await giveMerchantPositionAndAllowance(devnet)
  proxy = await startCountingProxy(devnet.rpcUrl)
  addresses = await writeAddressesFile(devnet)
  mcp = await startHttpMcp(env({ VAULT_MCP_ALLOWED_ORIGINS: allowedOrigin }))
})
afterAll(async () => {
  await mcp?.stop()
  await proxy?.close()
  await devnet?.stop()
})

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    BASE_SEPOLIA_RPC_URL: `${proxy.url}${secretPath}`,
    VAULT_ADDRESSES: addresses,
    VAULT_MCP_HTTP_TOKEN: token,
    ...extra,
  }
}

const validArguments = () =>
  ({
    vault_status: {},
    vault_check_yield: {},
    vault_get_position: { wallet: merchant },
    vault_plan_approve_usdc: { wallet: merchant, amountUsdc: '25' },
    vault_plan_deposit: { wallet: merchant, amountUsdc: '25' },
    vault_plan_withdraw: { wallet: merchant, amountUsdc: '10' },
  }) as Record<string, Record<string, unknown>>

describe.each<HttpClientKind>(['v1', 'v2', 'v2-modern'])('a real %s client', (kind) => {
  it('lists every tool and calls every one of them', async () => {
    const session = await connectHttp(mcp.url, kind, auth)
    try {
      const { tools } = await session.client.listTools()
      expect(tools.map((tool) => tool.name)).toEqual([...mcpToolNames])
      for (const tool of tools) {
        const output = await callToolOk(session.client, tool.name, validArguments()[tool.name])
        expectMatchesOutputSchema(tool.outputSchema as Record<string, unknown>, output)
      }
      await callToolError(
        session.client,
        'vault_get_position',
        { wallet: '0x12' },
        'INVALID_ADDRESS',
      )
    } finally {
      await session.close()
    }
    // The 2025-era clients open with initialize; the pinned client with server/discover.
    const opening = kind === 'v2-modern' ? 'server/discover' : 'initialize'
    expect(mcp.requests().some((line) => line.method === opening)).toBe(true)
  })
})

it('answers 100 concurrent calls, all of them', async () => {
  const session = await connectHttp(mcp.url, 'v2', auth)
  try {
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, index) =>
        callToolOk(session.client, index % 2 ? 'vault_status' : 'vault_get_position', {
          ...(index % 2 ? {} : { wallet: merchant }),
        }),
      ),
    )
    expect(answers).toHaveLength(100)
  } finally {
    await session.close()
  }
})

it('keeps an idle connection 65 s, past what clients and load balancers keep theirs, and tells clients so', async () => {
  // Node's 5 s would close it first: a request sent on it just then fails as `other side closed`.
  const response = await postMcp(mcp.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, auth)
  expect(response.status).toBe(200)
  await response.text()
  expect(response.headers.get('connection')).toBe('keep-alive')
  expect(response.headers.get('keep-alive')).toBe(`timeout=${idleConnectionMs / 1000}`)
  expect(idleConnectionMs).toBeGreaterThan(60_000)
})

describe('refusals in front of the MCP SDK', () => {
  const initialize = initializeRequest

  async function expectRefusal(
    response: Response,
    status: number,
    reason: string,
  ): Promise<string> {
    expect(response.status).toBe(status)
    expect(response.headers.get('content-type')).toMatch(/^application\/json/)
    const body = (await response.json()) as {
      jsonrpc: string
      error: { code: number; message: string; data: { reason: string } }
    }
    expect(body.jsonrpc).toBe('2.0')
    expect(body.error.data.reason).toBe(reason)
    expectNoInternals(body.error.message)
    expect(body.error.message).not.toContain(token)
    return body.error.message
  }

  it('401 with WWW-Authenticate: Bearer for a missing or wrong token; the right one passes', async () => {
    for (const headers of [
      {} as Record<string, string>,
      { authorization: 'Bearer wrong-token-0123456789' },
      { authorization: token },
    ]) {
      const response = await postMcp(mcp.url, initialize, headers)
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/)
      const message = await expectRefusal(response, 401, 'UNAUTHORIZED')
      expect(message).toContain('VAULT_MCP_HTTP_TOKEN')
    }
    expect((await postMcp(mcp.url, initialize, auth)).status).toBe(200)
    // A real client with the wrong token fails to connect.
    await expect(connectHttp(mcp.url, 'v2', { authorization: 'Bearer nope' })).rejects.toThrow()
  })

  it('403 for an Origin outside the allowlist or a Host the server does not listen on', async () => {
    const origin = await expectRefusal(
      await postMcp(mcp.url, initialize, { ...auth, origin: 'https://evil.example' }),
      403,
      'ORIGIN_NOT_ALLOWED',
    )
    expect(origin).toContain('VAULT_MCP_ALLOWED_ORIGINS')
    expect((await postMcp(mcp.url, initialize, { ...auth, origin: allowedOrigin })).status).toBe(
      200,
    )
    // A DNS-rebinding page reaches 127.0.0.1 under its own name: the Host gives it away. (fetch
    // does not let a caller set Host, so the request goes through node:http.)
    const rebound = await rawPost(mcp.origin, { host: 'evil.example', ...auth }, initialize)
    expect(rebound.status).toBe(403)
    expect(JSON.parse(rebound.body).error.data.reason).toBe('HOST_NOT_ALLOWED')
    const byName = await rawPost(
      mcp.origin,
      { host: `localhost:${new URL(mcp.origin).port}`, ...auth },
      initialize,
    )
    expect(byName.status).toBe(200)
  })

  it('405 for GET and DELETE, 415 for a body that is not JSON, 406 for an Accept it cannot serve', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(mcp.url, { method, headers: auth })
      expect(response.headers.get('allow')).toBe('POST')
      await expectRefusal(response, 405, 'METHOD_NOT_ALLOWED')
    }
    await expectRefusal(
      await postMcp(mcp.url, 'x=1', {
        ...auth,
        'content-type': 'application/x-www-form-urlencoded',
      }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    )
    await expectRefusal(
      await postMcp(mcp.url, initialize, { ...auth, accept: 'text/html' }),
      406,
      'NOT_ACCEPTABLE',
    )
  })

  it('413 past 64 KiB, 400 with -32700 for malformed JSON, a JSON-RPC error for a bad message', async () => {
    const big = { ...initialize, params: { ...initialize.params, padding: 'x'.repeat(64 * 1024) } }
    await expectRefusal(await postMcp(mcp.url, big, auth), 413, 'BODY_TOO_LARGE')
    const parse = await postMcp(mcp.url, '{"jsonrpc": "2.0", "id": 1, "method": ', auth)
    expect(parse.status).toBe(400)
    expect(((await parse.json()) as { error: { code: number } }).error.code).toBe(-32700)
    // Valid JSON, not a valid message: JSON-RPC's own codes, with a short message, not a dump.
    for (const [message, code, id] of [
      [{ jsonrpc: '2.0', id: 2, method: 42 }, -32600, 2],
      [{ jsonrpc: '1.0', id: 3, method: 'tools/list' }, -32600, 3],
      [[{ jsonrpc: '2.0', id: 4, method: 'tools/list' }], -32600, null],
      [{ jsonrpc: '2.0', id: 5, method: 'tools/call' }, -32602, 5],
    ] as const) {
      const invalid = await postMcp(mcp.url, message, auth)
      expect(invalid.status).toBe(400)
      const answer = (await invalid.json()) as {
        id: unknown
        error: { code: number; message: string }
      }
      expect([answer.id, answer.error.code]).toEqual([id, code])
      expect(answer.error.message).not.toMatch(/invalid_type|"path"|\n/)
    }
  })

  it('arguments the MCP SDK would mishandle get the tool’s own refusal', async () => {
    const call = (args: unknown) =>
      postMcp(
        mcp.url,
        {
          jsonrpc: '2.0',
          id: 7,
          method: 'tools/call',
          params: { name: 'vault_status', arguments: args },
        },
        auth,
      ).then(rpcAnswer)
    for (const [args, reason] of [
      [JSON.parse('{"__proto__":{"wallet":"x"}}'), '"__proto__"'],
      [[1, 2], 'not an array'],
      [null, 'not null'],
    ] as const) {
      const answer = (await call(args)) as {
        result: { isError: boolean; content: { text: string }[] }
      }
      expect(answer.result.isError).toBe(true)
      expect(answer.result.content[0]?.text).toMatch(/^INVALID_ARGUMENT: /)
      expect(answer.result.content[0]?.text).toContain(reason)
    }
  })

  it('GET /healthz answers without a token and without touching the RPC; other paths are 404', async () => {
    const { requests } = await proxy.measure(async () => {
      const health = await fetch(`${mcp.origin}/healthz`)
      expect(health.status).toBe(200)
      expect(await health.json()).toEqual({ status: 'ok' })
    })
    expect(requests).toBe(0)
    expect((await fetch(`${mcp.origin}/other`)).status).toBe(404)
  })
})

describe('limits', () => {
  let limited: HttpMcp
  beforeAll(async () => {
    limited = await startHttpMcp(
      env({
        VAULT_MCP_RATE_LIMIT: '6',
        VAULT_MCP_MAX_CONCURRENT: '1',
        VAULT_MCP_REQUEST_TIMEOUT: '1',
      }),
    )
  })
  afterAll(async () => {
    proxy.setFault(undefined)
    await limited?.stop()
  })

  it('a request past its timeout is 504; one past the concurrency cap is 503; past the rate, 429', async () => {
    const status = {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'vault_status', arguments: {} },
    }
    proxy.setFault({ kind: 'hang' })
    proxy.reset()
    const slow = postMcp(limited.url, status, auth)
    // The slow call holds the only slot (its RPC request hangs): the next one is refused at once.
    await waitFor(() => proxy.requests > 0)
    const busy = await postMcp(limited.url, status, auth)
    expect(busy.status).toBe(503)
    expect(busy.headers.get('retry-after')).toBe('1')
    // What the headers alone refuse needs no slot: it is refused for itself, not sent to wait.
    const wrongType = await fetch(limited.url, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'text/plain', accept: 'application/json' },
      body: JSON.stringify(status),
    })
    expect(wrongType.status).toBe(415)
    const timedOut = await slow
    expect(timedOut.status).toBe(504)
    const body = (await timedOut.json()) as { id: number; error: { data: { reason: string } } }
    expect(body).toMatchObject({ id: 3, error: { data: { reason: 'TIMEOUT' } } })
    proxy.setFault(undefined)
    // Six requests a minute: three are spent; the rest run out, then 429 with Retry-After.
    let refused: Response | undefined
    for (let attempt = 0; attempt < 8 && !refused; attempt++) {
      const response = await fetch(`${limited.url}`, { method: 'GET', headers: auth })
      if (response.status === 429) refused = response
    }
    expect(refused?.status).toBe(429)
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
  })
})

it('refuses to listen beyond loopback without a token, and says how to fix it', async () => {
  const { VAULT_MCP_HTTP_TOKEN: _, ...noToken } = env()
  const refused = await runCli(['mcp', '--http', '--host', '0.0.0.0', '--port', '0'], noToken)
  expect(refused.code).toBe(1)
  expect(refused.stderr).toMatch(/VAULT_MCP_HTTP_TOKEN is required to listen on 0\.0\.0\.0/)
  expect(refused.stderr).toContain('openssl rand -hex 32')
  const weak = await runCli(['mcp', '--http', '--port', '0'], {
    ...noToken,
    VAULT_MCP_HTTP_TOKEN: 'hunter2',
  })
  expect(weak.code).toBe(1)
  expect(weak.stderr).toContain('VAULT_MCP_HTTP_TOKEN must be at least 16 characters')
  expect(weak.stderr).not.toContain('hunter2')
})

it('starts while the RPC is down: tools answer retryably until it is back', async () => {
  proxy.setDown(true)
  const down = await startHttpMcp(env())
  try {
    const session = await connectHttp(down.url, 'v2', auth)
    await callToolError(session.client, 'vault_status', {}, 'RPC_UNREACHABLE', { retryable: true })
    proxy.setDown(false)
    await callToolOk(session.client, 'vault_status', {})
    await session.close()
  } finally {
    proxy.setDown(false)
    await down.stop()
  }
})

it('a client that hangs up mid-call leaves the server serving; SIGTERM drains the call in flight', async () => {
  const server = await startHttpMcp(env())
  let release = () => {}
  let held = 0
  proxy.setInterceptor(async () => {
    held += 1
    await new Promise<void>((resolve) => {
      release = resolve
    })
    return undefined
  })
  try {
    const call = {
      jsonrpc: '2.0',
      id: 9,
      method: 'tools/call',
      params: { name: 'vault_check_yield', arguments: {} },
    }
    const hangUp = new AbortController()
    const abandoned = postMcp(server.url, call, auth, { signal: hangUp.signal })
    await waitFor(() => held > 0)
    hangUp.abort()
    await expect(abandoned).rejects.toThrow()
    await waitFor(() => server.requests().some((line) => line.status === 499))
    release()
    proxy.setInterceptor(undefined)

    // Still serving; then a call in flight when SIGTERM comes is answered before the exit.
    const session = await connectHttp(server.url, 'v1', auth)
    await callToolOk(session.client, 'vault_status', {})
    held = 0
    proxy.setInterceptor(async () => {
      held += 1
      await new Promise((resolve) => setTimeout(resolve, 500))
      return undefined
    })
    const inFlight = callToolOk(session.client, 'vault_check_yield', {})
    await waitFor(() => held > 0)
    const exited = server.stop('SIGTERM')
    expect(await inFlight).toHaveProperty('aave')
    expect(await exited).toBe(0)
    expect(server.stderr()).toMatch(/SIGTERM: draining 1 request/)
  } finally {
    release()
    proxy.setInterceptor(undefined)
    await server.stop()
  }
})

it('logs one JSON line per request to stderr, never the token, the body or the RPC URL’s secret', () => {
  const lines = mcp.requests()
  expect(lines.length).toBeGreaterThan(100)
  for (const line of lines) {
    expect(Object.keys(line)).toEqual(
      expect.arrayContaining(['method', 'tool', 'status', 'durationMs', 'client']),
    )
  }
  expect(lines).toContainEqual(
    expect.objectContaining({ method: 'tools/call', tool: 'vault_plan_deposit', status: 200 }),
  )
  expect(lines).toContainEqual(expect.objectContaining({ status: 401, refusal: 'UNAUTHORIZED' }))
  const stderr = mcp.stderr()
  expect(stderr).not.toContain(token)
  expect(stderr).not.toContain('SECRETKEY')
  expect(stderr).not.toContain(merchant)
  expect(stderr).not.toContain(merchant.toLowerCase())
})

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
