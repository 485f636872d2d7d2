/**
 * The public endpoint from a real browser (Chromium): a page on the allowed origin calls it with
 * `fetch` (its CORS preflight answered) and gets the six tools, and reads a refusal; a page on another
 * origin is blocked by the browser, its preflight refused before the call is sent. No chain:
 * `tools/list` needs no RPC.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import chromium from '@sparticuz/chromium'
import { type Browser, chromium as playwright } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { type HttpMcp, startHttpMcp } from '../../harness/mcpHttp.js'
import { mcpToolNames } from '../../harness/mcpToolNames.js'

let allowedPage: string
let otherPage: string
let mcp: HttpMcp
let browser: Browser
const pages: Server[] = []

/** Serves an empty page: the test's scripts run in it, on its origin. */
async function servePage(): Promise<string> {
  const server = createServer((_, response) => {
    response.writeHead(200, { 'content-type': 'text/html' })
    response.end('<!doctype html><title>client</title>')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  pages.push(server)
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

beforeAll(async () => {
  allowedPage = await servePage()
  otherPage = await servePage()
  mcp = await startHttpMcp(
    {
      // Nothing listens on port 9: a listing needs no RPC.
      BASE_SEPOLIA_RPC_URL: 'http://127.0.0.1:9',
      VAULT_MCP_ALLOWED_HOSTS: '127.0.0.1',
      VAULT_MCP_ALLOWED_ORIGINS: allowedPage,
    },
    ['--public'],
  )
  browser = await playwright.launch({
    executablePath: await chromium.executablePath(),
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  })
})
afterAll(async () => {
  await browser?.close()
  await mcp?.stop()
  for (const server of pages) await new Promise((resolve) => server.close(resolve))
})

/** In a page on `origin`: a `tools/list` as a browser MCP client sends it, and a GET it may not make. */
async function callFrom(origin: string) {
  const page = await browser.newPage()
  try {
    await page.goto(origin)
    return await page.evaluate(async (url) => {
      const attempt = async (init: RequestInit) => {
        try {
          const response = await fetch(url, init)
          return {
            status: response.status,
            body: (await response.json()) as Record<string, unknown>,
          }
        } catch (error) {
          return { blocked: String(error) }
        }
      }
      return {
        list: await attempt({
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-11-25',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        }),
        get: await attempt({ method: 'GET' }),
      }
    }, mcp.url)
  } finally {
    await page.close()
  }
}

it('a page on the allowed origin lists the six tools with fetch, and reads a refusal’s reason', async () => {
  const { list, get } = await callFrom(allowedPage)
  expect(list).toMatchObject({ status: 200 })
  const tools = (list.body as { result: { tools: { name: string }[] } } | undefined)?.result.tools
  expect(tools?.map((tool) => tool.name)).toEqual([...mcpToolNames])
  expect(get).toMatchObject({
    status: 405,
    body: { error: { data: { reason: 'METHOD_NOT_ALLOWED' } } },
  })
  // The browser asked first, and the server answered the preflight. The GET's line comes last: once
  // it is written, so are the others.
  await mcp.untilRequest((line) => line.http === 'GET' && line.status === 405)
  expect(mcp.requests()).toContainEqual(
    expect.objectContaining({ http: 'OPTIONS', status: 204, refusal: 'CORS_PREFLIGHT' }),
  )
})

it('a page on another origin is blocked: its preflight is refused, so the call is never sent', async () => {
  const before = mcp.requests().length
  const { list, get } = await callFrom(otherPage)
  expect(list).toEqual({ blocked: expect.stringMatching(/Failed to fetch/) })
  // A GET needs no preflight: it reaches the server, is refused 403, and the page may not read it.
  expect(get).toEqual({ blocked: expect.stringMatching(/Failed to fetch/) })
  await mcp.untilRequest((line) => line.http === 'GET' && line.status === 403)
  const seen = mcp.requests().slice(before)
  expect(seen).toContainEqual(
    expect.objectContaining({ http: 'OPTIONS', status: 403, refusal: 'ORIGIN_NOT_ALLOWED' }),
  )
  expect(seen.filter((line) => line.http === 'POST')).toEqual([])
})
