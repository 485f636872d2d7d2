/**
 * Every well-formed message gets an answer at once, over both transports of the BUILT server: a
 * property test sends generated JSON-RPC envelopes (extra and missing members, every type for `id`,
 * `method`, `params` and `_meta`, responses, notifications) through stdio and through
 * `x402-vault mcp --http`, and each request is answered, under its id, within a second. A malformed
 * request holds no HTTP slot, and an `Accept` that allows JSON is served in both protocol eras.
 * Offline: nothing listens on the RPC's port, so a tool call fails at once with a retryable refusal.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
} from '@modelcontextprotocol/server'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  initializeRequest,
  type JsonLinesProcess,
  type JsonRpcLine,
  spawnJsonLines,
} from '../../harness/jsonLinesProcess.js'
import { type HttpMcp, startHttpMcp } from '../../harness/mcpHttp.js'
import { mcpToolNames } from '../../harness/mcpToolNames.js'
import { mcpBin } from '../support/mcp.js'
import { envelopeText, owedAnswer } from '../support/mcpEnvelopes.js'

const runs = 150
/** What "at once" means: a generous second, for a busy machine. */
const withinMs = 1_000
const env = { BASE_SEPOLIA_RPC_URL: 'http://127.0.0.1:9', MCP_LOG_LEVEL: 'error' }

describe('over stdio', () => {
  let server: JsonLinesProcess
  /** Lines read but not yet claimed by a check. */
  const pending: JsonRpcLine[] = []
  let reading: Promise<void> | undefined

  beforeAll(async () => {
    server = spawnJsonLines([mcpBin], env)
    server.send(initializeRequest)
    expect((await server.next()).id).toBe(1)
    server.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    // The whole server loads behind the early handshake: "at once" is timed once it has.
    server.send({ jsonrpc: '2.0', id: 'loaded', method: 'tools/call', params: { name: 'x' } })
    expect((await server.next()).id).toBe('loaded')
  })
  afterAll(async () => {
    server?.child.stdin.end()
    expect(await server?.exited).toBe(0)
    // Nothing on stdout was left unclaimed: no message got two answers.
    expect(pending).toEqual([])
  })

  /** The next line whose id is `id`, within the deadline; lines for other ids wait their turn. */
  async function answerTo(id: unknown, deadline: number): Promise<JsonRpcLine> {
    for (;;) {
      const index = pending.findIndex((line) => Object.is(line.id ?? null, id))
      if (index >= 0) return pending.splice(index, 1)[0] as JsonRpcLine
      const left = deadline - performance.now()
      if (left <= 0) throw new Error(`no answer to id ${JSON.stringify(id)} within ${withinMs} ms`)
      reading ??= server.next().then((line) => {
        pending.push(line)
        reading = undefined
      })
      await Promise.race([reading, new Promise((resolve) => setTimeout(resolve, left))])
    }
  }

  it(`answers each of ${runs} generated envelopes that JSON-RPC owes an answer, under its id, within a second; the session goes on`, async () => {
    let probe = 0
    await fc.assert(
      fc.asyncProperty(envelopeText, async (text) => {
        const owed = owedAnswer(text)
        const deadline = performance.now() + withinMs
        server.child.stdin.write(`${text}\n`)
        // A ping after it: answered whatever the envelope was, so the session is alive.
        probe += 1
        server.send({ jsonrpc: '2.0', id: `probe-${probe}`, method: 'ping' })
        if (owed.answer) {
          const answer = await answerTo(owed.id, deadline)
          expect('result' in answer || 'error' in answer, text).toBe(true)
        }
        expect((await answerTo(`probe-${probe}`, deadline)).result).toEqual({})
      }),
      { numRuns: runs },
    )
  })
})

describe('over HTTP', () => {
  let mcp: HttpMcp
  beforeAll(async () => {
    mcp = await startHttpMcp({
      ...env,
      // The start-up line (the port) and the request log are info lines.
      MCP_LOG_LEVEL: 'info',
      VAULT_MCP_MAX_CONCURRENT: '4',
      VAULT_MCP_RATE_LIMIT: '1000000',
    })
  })
  afterAll(async () => {
    expect(await mcp?.stop()).toBe(0)
  })

  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(mcp.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body,
      signal: AbortSignal.timeout(withinMs),
    })

  /** The protocol era a request claims: none, 2025-era, or 2026-07-28 with its method header. */
  const eraHeaders = fc.constantFrom<(method: unknown) => Record<string, string>>(
    () => ({}),
    () => ({ 'mcp-protocol-version': '2025-11-25' }),
    (method) => ({
      'mcp-protocol-version': '2026-07-28',
      ...(typeof method === 'string' ? { 'mcp-method': method } : {}),
    }),
  )

  it(`answers each of ${runs} generated envelopes within a second: a request under its id, anything else 202 or 400`, async () => {
    await fc.assert(
      fc.asyncProperty(envelopeText, eraHeaders, async (text, headersFor) => {
        const { method } = JSON.parse(text) as { method?: unknown }
        const response = await post(text, headersFor(method))
        const body = await response.text()
        expect([200, 202, 400, 404], `${response.status} ${body}`).toContain(response.status)
        const owed = owedAnswer(text)
        if (!owed.answer) {
          if (response.status !== 202) expect(JSON.parse(body).error, body).toBeDefined()
          return
        }
        const answer = JSON.parse(body) as Record<string, unknown>
        expect(answer.jsonrpc, body).toBe('2.0')
        expect('result' in answer || 'error' in answer, body).toBe(true)
        // The SDK's own refusals of a 2026-era request come before the id is trusted.
        if (answer.id !== null) expect(answer.id, body).toBe(owed.id)
      }),
      { numRuns: runs },
    )
  })

  it('four malformed requests hold no slot: with VAULT_MCP_MAX_CONCURRENT=4, a tools/list right after them is answered at once', async () => {
    const malformed = [
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'vault_status' }, extra: 1 },
      { jsonrpc: '2.0', id: null, method: 'tools/list' },
      { jsonrpc: '2.0', id: 3, method: 'tools/list', params: { _meta: { progressToken: {} } } },
    ].map((message) => JSON.stringify(message))
    malformed.push(
      '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"vault_status"},"__proto__":{}}',
    )
    const answers = await Promise.all(malformed.map((text) => post(text)))
    const codes = []
    for (const answer of answers) {
      expect(answer.status).toBe(400)
      codes.push(((await answer.json()) as { error: { code: number } }).error.code)
    }
    expect(codes).toEqual([-32600, -32600, -32602, -32600])
    const listed = await post(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/list' }))
    expect(listed.status).toBe(200)
    expect(((await listed.json()) as { result: { tools: unknown[] } }).result.tools).toHaveLength(
      mcpToolNames.length,
    )
    const refusals = mcp.requests().filter((line) => line.refusal === 'INVALID_MESSAGE')
    expect(refusals.length).toBeGreaterThanOrEqual(4)
  })

  describe('Accept', () => {
    const legacy = [
      JSON.stringify(initializeRequest),
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
      JSON.stringify({
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'vault_get_position', arguments: { wallet: '0x12' } },
      }),
    ]
    const modernList = JSON.stringify({
      jsonrpc: '2.0',
      id: 4,
      method: 'tools/list',
      params: {
        _meta: {
          [PROTOCOL_VERSION_META_KEY]: '2026-07-28',
          [CLIENT_INFO_META_KEY]: { name: 'raw', version: '1' },
          [CLIENT_CAPABILITIES_META_KEY]: {},
        },
      },
    })
    const modernHeaders = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' }

    it.each([['application/json'], ['*/*'], ['application/*;q=0.9'], [undefined]])(
      'Accept %s: every answer, in both eras, is one JSON body',
      async (accept) => {
        const requests: [string, Record<string, string>][] = [
          ...legacy.map((body): [string, Record<string, string>] => [body, {}]),
          [modernList, modernHeaders],
        ]
        for (const [body, headers] of requests) {
          const response = await fetch(mcp.url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              ...(accept === undefined ? {} : { accept }),
              ...headers,
            },
            body,
            signal: AbortSignal.timeout(withinMs * 5),
          })
          const text = await response.text()
          expect(response.status, text).toBe(200)
          expect(response.headers.get('content-type')).toMatch(/^application\/json/)
          expect(JSON.parse(text).result, text).toBeDefined()
        }
      },
    )

    it.each([['text/html'], ['text/event-stream'], ['application/json;q=0']])(
      'Accept %s: 406, with the reason, saying the server answers JSON',
      async (accept) => {
        const response = await post(legacy[1] as string, { accept })
        expect(response.status).toBe(406)
        const body = (await response.json()) as {
          error: { message: string; data: { reason: string } }
        }
        expect(body.error.data.reason).toBe('NOT_ACCEPTABLE')
        expect(body.error.message).toContain('application/json')
      },
    )
  })
})
