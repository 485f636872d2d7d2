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
import { connectHttp, postMcp } from '../support/mcpHttp.js'

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
