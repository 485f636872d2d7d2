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
  close: () => Promise<void>
}

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

  const server = createServer(async (request, response) => {
    if (down) {
      request.socket.destroy()
      return
    }
    const body = await readBody(request)
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
  try {
    const parsed = JSON.parse(body) as { method?: unknown } | { method?: unknown }[]
    return (Array.isArray(parsed) ? parsed : [parsed]).map((call) => String(call.method))
  } catch {
    return ['(not JSON)']
  }
}
