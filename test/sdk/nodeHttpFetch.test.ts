/**
 * The CLI's and the stdio MCP server's `fetch` over Node's `http`: each case sent through it and
 * through the global `fetch` to the same local server must come back the same, and a failure, an
 * abort or a stalled body must fail as `fetch` fails.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { nodeHttpFetch } from '../../src/sdk/shared.js'

type Seen = { method: string; path: string; headers: Record<string, unknown>; body: string }

/** What the server saw of each request, in order. */
const seen: Seen[] = []
/** Responses left hanging, ended when the test closes the server. */
const hanging = new Set<ServerResponse>()

const routes: Record<string, (request: IncomingMessage, response: ServerResponse) => void> = {
  '/json': (_request, response) => {
    response.writeHead(200, 'Fine', { 'content-type': 'application/json', 'x-answer': '42' })
    response.end('{"jsonrpc":"2.0","id":1,"result":"0x1"}')
  },
  '/error': (_request, response) => {
    response.writeHead(500, { 'content-type': 'text/plain' })
    response.end('down')
  },
  '/limited': (_request, response) => {
    response.writeHead(429, { 'retry-after': '3', 'content-type': 'application/json' })
    response.end('{"error":"slow down"}')
  },
  '/empty': (_request, response) => {
    response.writeHead(204)
    response.end()
  },
  '/chunked': (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' })
    response.write('one,')
    setImmediate(() => response.end('two'))
  },
  '/keep-method': (_request, response) => {
    response.writeHead(307, { location: '/json' })
    response.end()
  },
  '/see-other': (_request, response) => {
    response.writeHead(303, { location: '/json' })
    response.end()
  },
  '/hang': (_request, response) => {
    hanging.add(response)
  },
  '/cut-body': (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' })
    response.write('{"jsonrpc":')
    setImmediate(() => response.destroy())
  },
  '/stall-body': (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' })
    response.write('{"jsonrpc":')
    hanging.add(response)
  },
}

const server = createServer((request, response) => {
  const chunks: Buffer[] = []
  request.on('data', (chunk: Buffer) => chunks.push(chunk))
  request.on('end', () => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname
    seen.push({
      method: request.method ?? '',
      path,
      headers: request.headers,
      body: Buffer.concat(chunks).toString(),
    })
    ;(routes[path] ?? routes['/error'])?.(request, response)
  })
})
let base: string

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  for (const response of hanging) response.destroy()
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

/** Everything a caller can read of a response, and what the server saw of the request(s). */
async function outcome(send: typeof fetch, path: string, init: RequestInit) {
  seen.length = 0
  const response = await send(`${base}${path}`, init)
  return {
    status: response.status,
    statusText: response.statusText,
    ok: response.ok,
    url: response.url,
    contentType: response.headers.get('content-type'),
    retryAfter: response.headers.get('retry-after'),
    answer: response.headers.get('x-answer'),
    body: await response.text(),
    seen: seen.map(({ method, path, body, headers }) => ({
      method,
      path,
      body,
      contentType: headers['content-type'],
      custom: headers['x-custom'],
    })),
  }
}

/** What sending to `path` and reading the answer's body fails with; `undefined` when it does not fail. */
function failureOf(send: typeof fetch, path: string, init: RequestInit): Promise<unknown> {
  return send(`${base}${path}`, init)
    .then((response) => response.text())
    .then(
      () => undefined,
      (error: unknown) => error,
    )
}

const post: RequestInit = {
  method: 'POST',
  headers: { 'Content-Type': 'application/json', 'X-Custom': 'yes' },
  body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}',
}

describe('nodeHttpFetch answers as fetch does', () => {
  it.each([
    ['a JSON answer with its status text and headers', '/json', post],
    ['an HTTP 500 with a text body', '/error', post],
    ['a 429 with Retry-After', '/limited', post],
    ['a 204 without a body', '/empty', post],
    ['a body in two chunks', '/chunked', { method: 'GET' }],
    ['a 307 redirect: the same method and body again', '/keep-method', post],
    ['a 303 redirect: a GET without the body', '/see-other', post],
    ['a byte body', '/json', { method: 'POST', body: new TextEncoder().encode('bytes') }],
  ] as const)('%s', async (_name, path, init) => {
    const expected = await outcome(fetch, path, init)
    const actual = await outcome(nodeHttpFetch, path, init)
    expect(actual).toEqual(expected)
    expect(actual.seen.length).toBeGreaterThan(0)
  })

  it('a refused connection rejects with TypeError("fetch failed") and the system error as its cause', async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/`
    await new Promise((resolve) => closed.close(resolve))
    const failure = await nodeHttpFetch(url, post).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(TypeError)
    expect(failure).toMatchObject({ message: 'fetch failed', cause: { code: 'ECONNREFUSED' } })
  })

  it('an abort before the answer rejects with the signal’s reason, as fetch does', async () => {
    const expected = await failureOf(fetch, '/hang', { ...post, signal: AbortSignal.timeout(50) })
    const actual = await failureOf(nodeHttpFetch, '/hang', {
      ...post,
      signal: AbortSignal.timeout(50),
    })
    expect((actual as Error).name).toBe('TimeoutError')
    expect((actual as Error).name).toBe((expected as Error).name)
  })

  it('an abort while the body arrives rejects with the signal’s reason', async () => {
    const controller = new AbortController()
    seen.length = 0
    const sending = nodeHttpFetch(`${base}/stall-body`, { ...post, signal: controller.signal })
    await vi.waitFor(() => expect(seen.map(({ path }) => path)).toEqual(['/stall-body']))
    controller.abort(new Error('stop reading'))
    await expect(sending).rejects.toThrow('stop reading')
  })

  it('a body cut short fails as fetch fails: TypeError("fetch failed")', async () => {
    const expected = await failureOf(fetch, '/cut-body', post)
    const actual = await failureOf(nodeHttpFetch, '/cut-body', post)
    expect(expected).toBeInstanceOf(TypeError)
    expect(actual).toBeInstanceOf(TypeError)
    expect((actual as Error).message).toBe('fetch failed')
  })

  it('a signal already aborted rejects at once and sends nothing', async () => {
    seen.length = 0
    const reason = new Error('too late')
    await expect(
      nodeHttpFetch(`${base}/json`, { ...post, signal: AbortSignal.abort(reason) }),
    ).rejects.toBe(reason)
    expect(seen).toEqual([])
  })
})
