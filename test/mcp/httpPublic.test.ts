/**
 * `x402-vault mcp --http --public`, the BUILT bin on loopback, without a chain: served to anyone without
 * a token, only under the host names it is given, limited per client (by the trusted proxy header) and
 * in all with 429 and `Retry-After`, with the body and time caps, the per-plan cap, CORS for the
 * allowed origin only, and logs that hold no secret a client sent. `tools/list` and the refusals need
 * no RPC; a tool call's RPC goes to a server that never answers.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  connectHttp,
  type HttpMcp,
  postMcp,
  rawPost,
  rpcAnswer,
  startHttpMcp,
} from '../../harness/mcpHttp.js'
import { mcpToolNames } from '../../harness/mcpToolNames.js'
import { runCli } from '../../harness/runCli.js'

const allowedOrigin = 'https://app.example.com'
const listTools = { jsonrpc: '2.0', id: 1, method: 'tools/list' }
/** What a client may send that the logs must never hold. */
const clientSecret = 'client-secret-0123456789abcdef'
/** The RPC URL's secret part (logs may show its origin, never its path). */
const secretPath = '/v2/RPCSECRET0123456789'

let rpc: Server
let rpcUrl: string
let env: Record<string, string>
let mcp: HttpMcp

beforeAll(async () => {
  // An RPC that takes every request and never answers: a tool call waits until its timeout.
  rpc = createServer(() => {})
  await new Promise<void>((resolve) => rpc.listen(0, '127.0.0.1', resolve))
  rpcUrl = `http://127.0.0.1:${(rpc.address() as AddressInfo).port}`
  env = {
    BASE_SEPOLIA_RPC_URL: `${rpcUrl}${secretPath}`,
    VAULT_MCP_ALLOWED_HOSTS: '127.0.0.1',
  }
  mcp = await startHttpMcp(
    {
      ...env,
      VAULT_MCP_ALLOWED_ORIGINS: allowedOrigin,
      VAULT_MCP_TRUST_PROXY: 'x-forwarded-for',
      VAULT_MCP_RATE_LIMIT: '10',
      VAULT_MCP_REQUEST_TIMEOUT: '1',
    },
    ['--public'],
  )
})
afterAll(async () => {
  await mcp?.stop()
  rpc?.closeAllConnections()
  await new Promise((resolve) => rpc?.close(resolve))
})

/** The headers of a client behind the trusted proxy, at `address`. */
const from = (address: string, extra: Record<string, string> = {}) => ({
  'x-forwarded-for': address,
  ...extra,
})

it('says at start, as a warning, that it is public, for which hosts and with which limits', () => {
  expect(mcp.stderr()).toMatch(
    /warn: Serving MCP over Streamable HTTP \(stateless\) at POST \/mcp on 127\.0\.0\.1:\d+, PUBLIC: to anyone, without authentication, for the hosts 127\.0\.0\.1; 10 requests a minute per client \(by the x-forwarded-for header\), 6000 in all\./,
  )
})

it('real MCP clients list the six tools without a token', async () => {
  for (const [kind, address] of [
    ['v1', '192.0.2.1'],
    ['v2-modern', '192.0.2.2'],
  ] as const) {
    const session = await connectHttp(mcp.url, kind, from(address))
    try {
      expect((await session.client.listTools()).tools.map((tool) => tool.name)).toEqual([
        ...mcpToolNames,
      ])
    } finally {
      await session.close()
    }
  }
})

it('answers only for the host names it is given: another Host, even this machine’s other name, is 403', async () => {
  const port = new URL(mcp.origin).port
  for (const host of ['evil.example', `localhost:${port}`]) {
    const refused = await rawPost(mcp.origin, { host, ...from('192.0.2.3') }, listTools)
    expect(refused.status, host).toBe(403)
    expect(JSON.parse(refused.body).error.data.reason).toBe('HOST_NOT_ALLOWED')
  }
  expect((await rawPost(mcp.origin, from('192.0.2.3'), listTools)).status).toBe(200)
})

it('limits each client by the address its proxy wrote, whatever the client wrote before it: 429 with Retry-After', async () => {
  const limited = '198.51.100.7'
  for (let request = 0; request < 10; request++) {
    // The client claims a new address each time; the proxy's entry, last, is what counts.
    const response = await postMcp(mcp.url, listTools, from(`10.9.9.${request}, ${limited}`))
    expect(response.status).toBe(200)
  }
  const refused = await postMcp(mcp.url, listTools, from(`10.9.9.99, ${limited}`))
  expect(refused.status).toBe(429)
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
  expect(
    ((await refused.json()) as { error: { data: { reason: string } } }).error.data.reason,
  ).toBe('RATE_LIMITED')
  // Another client is served; the log names each by its address.
  expect((await postMcp(mcp.url, listTools, from('198.51.100.8'))).status).toBe(200)
  await mcp.untilRequest(
    (line) => line.client === limited && line.status === 429 && line.refusal === 'RATE_LIMITED',
  )
})

it('caps the body (413) and the time per call (504), and a plan at VAULT_MCP_MAX_PLAN_USDC, as over stdio', async () => {
  const big = { ...listTools, params: { padding: 'x'.repeat(64 * 1024) } }
  expect((await postMcp(mcp.url, big, from('192.0.2.10'))).status).toBe(413)
  const status = await postMcp(
    mcp.url,
    {
      jsonrpc: '2.0',
      id: 4,
      method: 'tools/call',
      params: { name: 'vault_status', arguments: {} },
    },
    from('192.0.2.10'),
  )
  expect(status.status).toBe(504)
  expect(await status.json()).toMatchObject({ id: 4, error: { data: { reason: 'TIMEOUT' } } })
  const overCap = await rpcAnswer(
    await postMcp(
      mcp.url,
      {
        jsonrpc: '2.0',
        id: 5,
        method: 'tools/call',
        params: {
          name: 'vault_plan_approve_usdc',
          arguments: {
            wallet: '0x0000000000000000000000000000000000000001',
            amountUsdc: '100.000001',
          },
        },
      },
      from('192.0.2.10'),
    ),
  )
  const result = overCap.result as { isError: boolean; content: { text: string }[] }
  expect(result.isError).toBe(true)
  expect(result.content[0]?.text).toMatch(/^PLAN_CAP_EXCEEDED: /)
})

describe('CORS', () => {
  const preflight = (origin: string) =>
    fetch(mcp.url, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, mcp-protocol-version',
        ...from('192.0.2.20'),
      },
    })

  it('answers the allowed origin’s preflight (204); another origin’s gets 403 and no CORS header', async () => {
    const allowed = await preflight(allowedOrigin)
    expect(allowed.status).toBe(204)
    expect(allowed.headers.get('access-control-allow-origin')).toBe(allowedOrigin)
    expect(allowed.headers.get('access-control-allow-methods')).toBe('POST')
    expect(allowed.headers.get('access-control-allow-headers')).toContain('mcp-protocol-version')
    expect(allowed.headers.get('access-control-max-age')).toBe('7200')
    expect(allowed.headers.get('vary')).toBe('Origin')

    const other = await preflight('https://evil.example')
    expect(other.status).toBe(403)
    const corsHeaders: string[] = []
    other.headers.forEach((_, name) => {
      if (name.startsWith('access-control-')) corsHeaders.push(name)
    })
    expect(corsHeaders).toEqual([])
    expect(
      ((await other.json()) as { error: { data: { reason: string } } }).error.data.reason,
    ).toBe('ORIGIN_NOT_ALLOWED')
  })

  it('lets the allowed origin read every answer, a refusal too, and the headers a client reads', async () => {
    const listed = await postMcp(mcp.url, listTools, from('192.0.2.21', { origin: allowedOrigin }))
    expect(listed.status).toBe(200)
    expect(listed.headers.get('access-control-allow-origin')).toBe(allowedOrigin)
    expect(listed.headers.get('access-control-expose-headers')).toBe(
      'mcp-session-id, retry-after, www-authenticate',
    )
    const refused = await fetch(mcp.url, {
      method: 'GET',
      headers: from('192.0.2.21', { origin: allowedOrigin }),
    })
    expect(refused.status).toBe(405)
    expect(refused.headers.get('access-control-allow-origin')).toBe(allowedOrigin)
    // A non-browser client gets no CORS header.
    const plain = await postMcp(mcp.url, listTools, from('192.0.2.21'))
    expect(plain.headers.get('access-control-allow-origin')).toBeNull()
    expect(plain.headers.get('vary')).toBe('Origin')
  })
})

it('limits the whole server too: past VAULT_MCP_SERVER_RATE_LIMIT, every client gets 429 with Retry-After', async () => {
  const server = await startHttpMcp({ ...env, VAULT_MCP_SERVER_RATE_LIMIT: '3' }, ['--public'])
  try {
    // Each from its own address (the connection's: no proxy header is trusted here).
    for (let request = 0; request < 3; request++) {
      expect((await postMcp(server.url, listTools)).status).toBe(200)
    }
    const refused = await postMcp(server.url, listTools)
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(
      ((await refused.json()) as { error: { data: { reason: string } } }).error.data.reason,
    ).toBe('SERVER_RATE_LIMITED')
    // Without a trusted proxy header, an address a client writes there counts for nothing.
    expect(server.stderr()).toContain('by remote address')
    await server.untilRequest((line) => line.client === '127.0.0.1' && line.status === 429)
  } finally {
    await server.stop()
  }
})

it('refuses to start public with a token, or without the host names, and says why', async () => {
  const withToken = await runCli(['mcp', '--http', '--public', '--port', '0'], {
    ...env,
    VAULT_MCP_HTTP_TOKEN: 'token-0123456789abcdef',
  })
  expect(withToken.code).toBe(1)
  expect(withToken.stderr).toContain('VAULT_MCP_HTTP_TOKEN do not go together')
  expect(withToken.stderr).not.toContain('token-0123456789abcdef')
  const { VAULT_MCP_ALLOWED_HOSTS: _, ...noHosts } = env
  const hostless = await runCli(['mcp', '--http', '--public', '--port', '0'], noHosts)
  expect(hostless.code).toBe(1)
  expect(hostless.stderr).toContain('A public server needs VAULT_MCP_ALLOWED_HOSTS')
  const stdio = await runCli(['mcp', '--public'], env)
  expect(stdio.code).toBe(2)
  expect(stdio.stderr).toContain('--port, --host and --public go with --http')
})

it('logs one line per request, with the client’s address, never a header or a secret a client sent', async () => {
  await postMcp(
    mcp.url,
    { ...listTools, params: { _meta: { note: clientSecret } } },
    from('192.0.2.30', {
      authorization: `Bearer ${clientSecret}`,
      cookie: `session=${clientSecret}`,
    }),
  )
  await postMcp(mcp.url, listTools, from('192.0.2.31', { 'x-api-key': clientSecret }))
  // Both lines written (each client by its name) before the log is read.
  await mcp.untilRequest((line) => line.client === '192.0.2.30' && line.status === 200)
  await mcp.untilRequest((line) => line.client === '192.0.2.31' && line.status === 200)
  expect(mcp.stderr()).not.toContain(clientSecret)
  expect(mcp.stderr()).not.toContain('RPCSECRET')
})
