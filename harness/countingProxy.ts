import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { nodeHttpFetch } from '../src/sdk/shared.js'

/**
 * What the proxy does to a request instead of answering it faithfully, as a real RPC provider
 * sometimes does:
 * - `status`: an HTTP error status (429, 500, …) with an optional `Retry-After` header;
 * - `malformed-json`: a 200 whose body is cut off mid-JSON;
 * - `not-json-rpc`: a 200 with valid JSON that is not a JSON-RPC answer;
 * - `empty-number`: the real answer, except `0x` where a number is due: the result of `eth_chainId`,
 *   `eth_blockNumber`, `eth_estimateGas`, …, and the gas of `eth_fillTransaction`; other calls pass;
 * - `method-not-found`: the real answer, except that each call of one of `methods` is answered with the
 *   JSON-RPC error -32601 (method not found), as a provider without that method answers it; in a batch,
 *   the other calls keep their answers;
 * - `reset`: the connection is dropped unanswered (the RPC is unreachable);
 * - `drop-answer`: the request is forwarded, and its connection dropped once the target has answered:
 *   the RPC acted on it (a transaction was sent) but the client never hears so;
 * - `hang`: the request is never answered (past any client timeout);
 * - `call-result`: the real answer, except `result` as the result of every call of `method` (default
 *   `eth_call`), such as `0x`, 32 zero bytes, a number or `null` for an `eth_call` (what a broken RPC
 *   or gateway sends), or `null` for an `eth_getTransactionReceipt` (a node behind a load balancer
 *   that has not seen the block yet).
 *
 * A `status` fault's body is `error <status>` as plain text unless `body` and `contentType` say
 * otherwise (an HTML page, or a page under a JSON content type, as some providers send for a bad key).
 */
export type RpcFault =
  | { kind: 'status'; status: number; retryAfter?: string; body?: string; contentType?: string }
  | { kind: 'call-result'; result: unknown; method?: string }
  | { kind: 'malformed-json' }
  | { kind: 'not-json-rpc' }
  | { kind: 'empty-number' }
  | { kind: 'method-not-found'; methods: readonly string[] }
  | { kind: 'reset' }
  | { kind: 'drop-answer' }
  | { kind: 'hang' }

/** Which requests a fault hits, and for how long. */
export type RpcFaultOptions = {
  /** Only requests that carry one of these JSON-RPC methods (a batch counts if any call does). */
  methods?: readonly string[]
  /** Only the next `times` requests it hits; then the proxy answers faithfully again. */
  times?: number
}

/**
 * A JSON-RPC HTTP proxy in front of an RPC (anvil): it counts the round trips (HTTP requests) a
 * process outside the test makes, such as a spawned MCP server, and injects RPC faults.
 */
export type CountingProxy = {
  /** The proxy's URL. Any path and query are accepted (and ignored), like a provider's key. */
  url: string
  /** HTTP requests received since the last `reset()`, faulted ones included. */
  readonly requests: number
  /** Their JSON-RPC methods, in order (a batch lists each of its calls). */
  readonly methods: readonly string[]
  reset: () => void
  /** Runs `fn` and returns its result and the round trips made while it ran. */
  measure: <T>(fn: () => Promise<T>) => Promise<{ result: T; requests: number; methods: string[] }>
  /** Injects `fault` until it is cleared with `setFault(undefined)` (or `options.times` runs out). */
  setFault: (fault: RpcFault | undefined, options?: RpcFaultOptions) => void
  /** While down, every connection is dropped unanswered: `setFault({ kind: 'reset' })`. */
  setDown: (down: boolean) => void
  /** Forwards to another RPC from now on, such as a node of another chain. */
  retarget: (targetUrl: string) => void
  /**
   * Decides the fault of each request that no `setFault` fault hits, from the request's path (and
   * query) and its calls: one proxy can then serve several RPC URLs that each fail their own way.
   * `undefined` removes it.
   */
  setRule: (rule: FaultRule | undefined) => void
  /**
   * Sees each request before it is forwarded (and counted): it may hold it (return a promise) or
   * answer it with an HTTP status instead of forwarding it (return the status). `undefined` removes it.
   */
  setInterceptor: (interceptor: Interceptor | undefined) => void
  /**
   * Requests held by a `hang` fault whose client has not gone yet: a client that aborts its request
   * (or exits) closes the connection, which takes it off this count.
   */
  readonly hanging: number
  /** Called with each forwarded request's calls once the target has answered it. */
  setAnsweredListener: (listener: ((calls: RpcCall[]) => void) | undefined) => void
  close: () => Promise<void>
}

/** One JSON-RPC call of a request. */
export type RpcCall = { method: string; params?: unknown[] }

/** A request's fault from its path (with the query) and its calls; `undefined` forwards it. */
export type FaultRule = (request: { path: string; calls: RpcCall[] }) => RpcFault | undefined

/** Decides a request's fate: `undefined` forwards it, a number answers that HTTP status instead. */
export type Interceptor = (calls: RpcCall[]) => number | undefined | Promise<number | undefined>

/** Methods whose result is a hex quantity: where `empty-number` answers `0x`. */
const numberMethods = new Set([
  'eth_chainId',
  'eth_blockNumber',
  'eth_getTransactionCount',
  'eth_gasPrice',
  'eth_maxPriorityFeePerGas',
  'eth_estimateGas',
  'eth_getBalance',
])

type JsonRpcCall = { id?: unknown; method?: unknown; params?: unknown }

const toRpcCall = (call: JsonRpcCall): RpcCall => ({
  method: String(call.method),
  ...(Array.isArray(call.params) ? { params: call.params } : {}),
})

/**
 * Starts a counting proxy on 127.0.0.1 that forwards every POST body to `targetUrl`.
 *
 * @param targetUrl - The RPC to forward to, such as a devnet's `rpcUrl`.
 * @returns The proxy.
 * @example
 * const proxy = await startCountingProxy(devnet.rpcUrl)
 * const { requests } = await proxy.measure(() => client.callTool({ name: 'vault_status' }))
 * proxy.setFault({ kind: 'status', status: 429, retryAfter: '1' }, { times: 1 })
 */
export async function startCountingProxy(targetUrl: string): Promise<CountingProxy> {
  let target = targetUrl
  let requests = 0
  let hanging = 0
  let methods: string[] = []
  let fault: { fault: RpcFault; methods?: readonly string[]; timesLeft: number } | undefined

  /** The fault this request gets, if any (and uses up one of its `times`). */
  const faultFor = (calls: JsonRpcCall[]): RpcFault | undefined => {
    if (!fault) return undefined
    const wanted = fault.methods
    if (wanted && !calls.some((call) => wanted.includes(String(call.method)))) return undefined
    const hit = fault.fault
    fault.timesLeft--
    if (fault.timesLeft <= 0) fault = undefined
    return hit
  }
  let rule: FaultRule | undefined
  let interceptor: Interceptor | undefined
  let answered: ((calls: RpcCall[]) => void) | undefined

  const server = createServer(async (request, response) => {
    const body = await readBody(request)
    const calls = callsOf(body)
    const rpcCalls = calls.map(toRpcCall)
    const status = await interceptor?.(rpcCalls)
    if (status !== undefined) {
      answer(response, JSON.stringify({ error: `injected HTTP ${status}` }), status)
      return
    }
    requests++
    methods.push(...calls.map((call) => (call.method === undefined ? '?' : String(call.method))))
    const injected = faultFor(calls) ?? rule?.({ path: request.url ?? '/', calls: rpcCalls })
    if (injected?.kind === 'reset') {
      request.socket.destroy()
      return
    }
    if (injected?.kind === 'hang') {
      // Answered by nothing: the client's timeout (or its abort) must end it.
      hanging++
      response.once('close', () => hanging--)
      return
    }
    if (injected?.kind === 'status') {
      const headers: Record<string, string> =
        injected.retryAfter === undefined ? {} : { 'Retry-After': injected.retryAfter }
      if (injected.contentType) headers['Content-Type'] = injected.contentType
      response.writeHead(injected.status, headers).end(injected.body ?? `error ${injected.status}`)
      return
    }
    if (injected?.kind === 'malformed-json') return answer(response, '{"jsonrpc":"2.0","id":1,"res')
    if (injected?.kind === 'not-json-rpc') return answer(response, '{"status":"ok","data":[]}')
    try {
      const forwarded = await nodeHttpFetch(target, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body,
      })
      const text = await forwarded.text()
      if (injected?.kind === 'drop-answer') {
        request.socket.destroy()
        answered?.(rpcCalls)
        return
      }
      if (injected?.kind === 'empty-number') return answer(response, emptyNumbers(text, calls))
      if (injected?.kind === 'method-not-found') {
        return answer(response, methodsNotFound(text, calls, injected.methods))
      }
      if (injected?.kind === 'call-result') {
        const method = injected.method ?? 'eth_call'
        return answer(response, replaceResults(text, calls, method, injected.result))
      }
      answer(response, text, forwarded.status)
      answered?.(rpcCalls)
    } catch {
      response.writeHead(502).end()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  const setFault: CountingProxy['setFault'] = (next, options = {}) => {
    fault = next && {
      fault: next,
      ...(options.methods ? { methods: options.methods } : {}),
      timesLeft: options.times ?? Number.POSITIVE_INFINITY,
    }
  }
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return requests
    },
    get methods() {
      return methods
    },
    get hanging() {
      return hanging
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
    setFault,
    setDown: (down) => setFault(down ? { kind: 'reset' } : undefined),
    setRule(value) {
      rule = value
    },
    retarget(url) {
      target = url
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

function answer(response: ServerResponse, body: string, status = 200): void {
  response.writeHead(status, { 'Content-Type': 'application/json' }).end(body)
}

/** A request's body, as text. */
export function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    request.on('error', reject)
  })
}

/** The JSON-RPC calls of a request body: one, or each call of a batch. */
function callsOf(body: string): JsonRpcCall[] {
  try {
    const parsed = JSON.parse(body) as JsonRpcCall | JsonRpcCall[]
    return Array.isArray(parsed) ? parsed : [parsed]
  } catch {
    return [{ method: '(not JSON)' }]
  }
}

/** The upstream answer with a -32601 error in place of each answer to one of `methods`. */
function methodsNotFound(text: string, calls: JsonRpcCall[], methods: readonly string[]): string {
  const methodOf = new Map(calls.map((call) => [call.id, String(call.method)]))
  const refuse = (item: { id?: unknown }) => {
    const method = methodOf.get(item.id)
    if (!method || !methods.includes(method)) return item
    return {
      jsonrpc: '2.0',
      id: item.id,
      error: { code: -32601, message: `the method ${method} does not exist/is not available` },
    }
  }
  const parsed = JSON.parse(text) as { id?: unknown } | { id?: unknown }[]
  return JSON.stringify(Array.isArray(parsed) ? parsed.map(refuse) : refuse(parsed))
}

/** The upstream answer with `0x` as every number a call returns (a filled transaction's gas too). */
function emptyNumbers(text: string, calls: JsonRpcCall[]): string {
  const methodOf = new Map(calls.map((call) => [call.id, String(call.method)]))
  const blank = (item: { id?: unknown; result?: unknown }) => {
    const method = methodOf.get(item.id)
    if (!method || !('result' in item)) return item
    if (numberMethods.has(method)) return { ...item, result: '0x' }
    const filled = item.result as { tx?: object } | null
    if (method === 'eth_fillTransaction' && filled?.tx) {
      return { ...item, result: { ...filled, tx: { ...filled.tx, gas: '0x' } } }
    }
    return item
  }
  const parsed = JSON.parse(text) as { id?: unknown } | { id?: unknown }[]
  return JSON.stringify(Array.isArray(parsed) ? parsed.map(blank) : blank(parsed))
}

/** The upstream answer with `result` as the result of every call to `method`. */
function replaceResults(text: string, calls: JsonRpcCall[], method: string, result: unknown) {
  const methodOf = new Map(calls.map((call) => [call.id, String(call.method)]))
  const replace = (item: { id?: unknown; result?: unknown }) =>
    methodOf.get(item.id) === method && 'result' in item ? { ...item, result } : item
  const parsed = JSON.parse(text) as { id?: unknown } | { id?: unknown }[]
  return JSON.stringify(Array.isArray(parsed) ? parsed.map(replace) : replace(parsed))
}
