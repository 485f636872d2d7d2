import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A JSON-RPC HTTP proxy in front of an RPC (anvil): it counts the round trips (HTTP requests) a
 * process outside the test makes, such as a spawned MCP server, and can play an unreachable RPC.
 */
export type CountingProxy = {
  /** The proxy's URL. Any path and query are accepted (and ignored), like a provider's key. */
  url: string
  /** HTTP requests forwarded since the last `reset()`. */
  readonly requests: number
  /** Their JSON-RPC methods, in order (a batch lists each of its calls). */
  readonly methods: readonly string[]
  reset: () => void
  /** Runs `fn` and returns its result and the round trips made while it ran. */
  measure: <T>(fn: () => Promise<T>) => Promise<{ result: T; requests: number; methods: string[] }>
  /** While down, every connection is dropped unanswered: the RPC is unreachable. */
  setDown: (down: boolean) => void
  /**
   * Sees each request before it is forwarded (and counted): it may hold it (return a promise) or
   * answer it with an HTTP status instead of forwarding it (return the status). `undefined` removes it.
   */
  setInterceptor: (interceptor: Interceptor | undefined) => void
  /** Called with each forwarded request's calls once the target has answered it. */
  setAnsweredListener: (listener: ((calls: RpcCall[]) => void) | undefined) => void
  close: () => Promise<void>
}

/** One JSON-RPC call of a request. */
export type RpcCall = { method: string; params?: unknown[] }

/** Decides a request's fate: `undefined` forwards it, a number answers that HTTP status instead. */
export type Interceptor = (calls: RpcCall[]) => number | undefined | Promise<number | undefined>

/**
 * Starts a counting proxy on 127.0.0.1 that forwards every POST body to `targetUrl`.
 *
 * @param targetUrl - The RPC to forward to, such as a devnet's `rpcUrl`.
 * @returns The proxy.
 * @example
 * const proxy = await startCountingProxy(devnet.rpcUrl)
 * const { requests } = await proxy.measure(() => client.callTool({ name: 'vault_status' }))
 */
export async function startCountingProxy(targetUrl: string): Promise<CountingProxy> {
  let requests = 0
  let methods: string[] = []
  let down = false
  let interceptor: Interceptor | undefined
  let answered: ((calls: RpcCall[]) => void) | undefined

  const server = createServer(async (request, response) => {
    if (down) {
      request.socket.destroy()
      return
    }
    const body = await readBody(request)
    const status = await interceptor?.(callsOf(body))
    if (status !== undefined) {
      response.writeHead(status, { 'Content-Type': 'application/json' })
      response.end(JSON.stringify({ error: `injected HTTP ${status}` }))
      return
    }
    requests++
    methods.push(...methodsOf(body))
    try {
      const forwarded = await fetch(targetUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body,
      })
      response.writeHead(forwarded.status, { 'Content-Type': 'application/json' })
      response.end(await forwarded.text())
      answered?.(callsOf(body))
    } catch {
      response.writeHead(502).end()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return requests
    },
    get methods() {
      return methods
    },
    reset() {
      requests = 0
      methods = []
    },
    async measure(fn) {
      requests = 0
      methods = []
      const result = await fn()
      return { result, requests, methods: [...methods] }
    },
    setDown(value) {
      down = value
    },
    setInterceptor(value) {
      interceptor = value
    },
    setAnsweredListener(value) {
      answered = value
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => (error ? reject(error) : resolve()))
      }),
  }
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    request.on('error', reject)
  })
}

function methodsOf(body: string): string[] {
  const calls = callsOf(body)
  return calls.length > 0 ? calls.map((call) => call.method) : ['(not JSON)']
}

function callsOf(body: string): RpcCall[] {
  try {
    const parsed = JSON.parse(body) as RpcCall | RpcCall[]
    return (Array.isArray(parsed) ? parsed : [parsed]).map((call) => ({
      method: String(call.method),
      ...(Array.isArray(call.params) ? { params: call.params } : {}),
    }))
  } catch {
    return []
  }
}
