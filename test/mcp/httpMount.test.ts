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
import { createMcpHttpHandler, loadMcpConfig, type McpLogger } from '../../src/mcp/index.js'
import { connectHttp, postMcp, rpcAnswer } from '../support/mcpHttp.js'

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
  'mounted in %s, a real MCP client lists the six tools; without the token, 401',
  async (mount) => {
    for (const kind of ['v1', 'v2-modern'] as const) {
      const session = await connectHttp(urls[mount], kind, auth)
      try {
        expect((await session.client.listTools()).tools).toHaveLength(6)
      } finally {
        await session.close()
      }
    }
    const refused = await postMcp(urls[mount], { jsonrpc: '2.0', id: 1, method: 'tools/list' })
    expect(refused.status).toBe(401)
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer/)
  },
)

it('a 2025-era tools/list is answered the same each time, the first through the MCP SDK, the rest from its answer; a listing with parameters always through the SDK', async () => {
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
  // The SDK's own answer, to a listing with parameters (a progress token), which it always builds.
  const fromSdk = await list(1, { _meta: { progressToken: 'p' } })
  const [first, second, third] = [await list(2), await list('three'), await list(4, {})]
  expect((fromSdk.result as { tools: unknown[] }).tools).toHaveLength(6)
  for (const [answer, id] of [
    [first, 2],
    [second, 'three'],
    [third, 4],
  ] as const) {
    expect(answer).toEqual({ jsonrpc: '2.0', id, result: fromSdk.result })
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
