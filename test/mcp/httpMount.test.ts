/**
 * `createMcpHttpHandler` mounted as a developer mounts it: in an Express app (its Node face, with and
 * without `express.json()` in front) and in a Hono app (its Web-standard face). A real MCP client
 * lists the tools through each; the token still guards each. Offline: `tools/list` needs no RPC.
 */
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import express from 'express'
import { Hono } from 'hono'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { connectHttp, postMcp, rpcAnswer } from '../../harness/mcpHttp.js'
import { mcpToolNames } from '../../harness/mcpToolNames.js'
import { createMcpHttpHandler, loadMcpConfig, type McpLogger } from '../../src/mcp/index.js'

const quiet: McpLogger = { debug() {}, info() {}, warn() {}, error() {} }
const token = 'mount-token-0123456789abcdef'
const auth = { authorization: `Bearer ${token}` }
const closers: (() => Promise<void>)[] = []
const urls: Record<'express' | 'expressJson' | 'hono', string> = {
  express: '',
  expressJson: '',
  hono: '',
}

beforeAll(async () => {
  // Nothing listens on port 9: a tool call would fail at once, a listing needs no RPC.
  const config = await loadMcpConfig({ BASE_SEPOLIA_RPC_URL: 'http://127.0.0.1:9' })
  const mcp = createMcpHttpHandler(config, { token, logger: quiet, logRequest: () => {} })
  closers.push(() => mcp.close())

  for (const withJson of [false, true]) {
    const app = express()
    if (withJson) app.use(express.json())
    app.all('/mcp', mcp.node)
    const server = app.listen(0, '127.0.0.1')
    await new Promise((resolve) => server.once('listening', resolve))
    closers.push(() => new Promise((resolve) => server.close(() => resolve())))
    urls[withJson ? 'expressJson' : 'express'] =
      `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`
  }

  const hono = new Hono()
  hono.all('/mcp', (c) => mcp.fetch(c.req.raw))
  const port = await new Promise<number>((resolve) => {
    const server = serve({ fetch: hono.fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
      resolve(info.port),
    )
    closers.push(() => new Promise((done) => server.close(() => done())))
  })
  urls.hono = `http://127.0.0.1:${port}/mcp`
})
afterAll(async () => {
  for (const close of closers.reverse()) await close()
})

it.each(['express', 'expressJson', 'hono'] as const)(
  'mounted in %s, a real MCP client lists every tool; without the token, 401',
  async (mount) => {
    for (const kind of ['v1', 'v2-modern'] as const) {
      const session = await connectHttp(urls[mount], kind, auth)
      try {
        expect((await session.client.listTools()).tools).toHaveLength(mcpToolNames.length)
      } finally {
        await session.close()
      }
    }
    const refused = await postMcp(urls[mount], { jsonrpc: '2.0', id: 1, method: 'tools/list' })
    expect(refused.status).toBe(401)
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer/)
  },
)

it('2025-era calls share one server: a listing answers as a server of its own does, each time; a _meta request still gets its own', async () => {
  const headers = { ...auth, 'mcp-protocol-version': '2025-11-25' }
  const list = async (id: number | string, params?: object) => {
    const response = await postMcp(
      urls.hono,
      { jsonrpc: '2.0', id, method: 'tools/list', ...(params ? { params } : {}) },
      headers,
    )
    expect(response.status).toBe(200)
    return rpcAnswer(response)
  }
  // A listing with _meta (a progress token) is served by a server of its own, through the SDK.
  const ownServer = await list(1, { _meta: { progressToken: 'p' } })
  const [first, second, third] = [await list(2), await list('three'), await list(4, {})]
  expect((ownServer.result as { tools: unknown[] }).tools).toHaveLength(mcpToolNames.length)
  for (const [answer, id] of [
    [first, 2],
    [second, 'three'],
    [third, 4],
  ] as const) {
    expect(answer).toEqual({ jsonrpc: '2.0', id, result: ownServer.result })
  }
  // A protocol version the SDK refuses is refused every time, never answered from a listing.
  for (let attempt = 0; attempt < 2; attempt++) {
    const refused = await postMcp(
      urls.hono,
      { jsonrpc: '2.0', id: 5, method: 'tools/list' },
      { ...auth, 'mcp-protocol-version': '1999-01-01' },
    )
    expect(refused.status).toBe(400)
  }
})

it('clients that use the same request id at the same time each get their own answer, under their own id', async () => {
  const headers = { ...auth, 'mcp-protocol-version': '2025-06-18' }
  const post = (message: object) =>
    postMcp(urls.express, { jsonrpc: '2.0', id: 7, ...message }, headers).then(rpcAnswer)
  // At once, all with id 7: a listing, a ping, a call the RPC fails (nothing listens on port 9), a
  // call refused for its arguments, and an unknown method.
  const [listing, ping, failed, refused, unknown] = await Promise.all([
    post({ method: 'tools/list' }),
    post({ method: 'ping' }),
    post({ method: 'tools/call', params: { name: 'vault_status', arguments: {} } }),
    post({ method: 'tools/call', params: { name: 'vault_status', arguments: [1] } }),
    post({ method: 'no/such/method' }),
  ])
  for (const answer of [listing, ping, failed, refused, unknown]) expect(answer.id).toBe(7)
  expect((listing.result as { tools: unknown[] }).tools).toHaveLength(mcpToolNames.length)
  expect(ping.result).toEqual({})
  const text = (answer: Record<string, unknown>) =>
    (answer.result as { isError: boolean; content: { text: string }[] }).content[0]?.text
  expect(text(failed)).toMatch(/^RPC_/)
  expect(text(refused)).toMatch(/^INVALID_ARGUMENT: .*not an array/)
  expect((unknown.error as { code: number }).code).toBe(-32601)
})
