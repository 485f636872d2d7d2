import { createHash, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import {
  createMcpHandler,
  isLegacyRequest,
  type JSONRPCMessage,
  type RequestId,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server'
import type { McpConfig } from './config.js'
import { isLoopbackHost } from './httpConfig.js'
import { isPlainObject } from './isPlainObject.js'
import { checkJsonRpcMessage, isEmptyParams, isRequestId } from './jsonRpcCheck.js'
import { createLogger, type McpLogger } from './logger.js'
import { createVaultMcp } from './server.js'
import { createSharedLegacyServer } from './sharedLegacyServer.js'
import { type AnyVaultTool, guardToolCall } from './tool.js'

/** What {@link createMcpHttpHandler} takes besides the server's configuration. */
export type McpHttpHandlerOptions = {
  /**
   * The bearer token every request must carry (`Authorization: Bearer <token>`), compared in
   * constant time. Without one, anyone who reaches the handler may call it: leave it out only on
   * loopback.
   */
  token?: string | undefined
  /**
   * Origins (`https://app.example.com`) whose browser pages may call. A request with another
   * `Origin` is refused (403); one without `Origin` (a non-browser client) passes.
   */
  allowedOrigins?: readonly string[] | undefined
  /**
   * `Host` values to accept, as `host` (any port) or `host:port`, besides the hosts of
   * `allowedOrigins`. Default: the loopback names (`localhost`, `127.0.0.1`, `[::1]`) on any port. A
   * request for another host is refused (403): that is what defeats DNS rebinding.
   */
  allowedHosts?: readonly string[] | undefined
  /** The largest request body, in bytes; default 65,536 (64 KiB). Larger is refused with 413. */
  maxBodyBytes?: number | undefined
  /** How long a request may take, in milliseconds; default 30,000. Longer is answered 504. */
  requestTimeoutMs?: number | undefined
  /** Requests served at once; default 128. More are refused with 503 and `Retry-After`. */
  maxConcurrent?: number | undefined
  /** Requests per minute one client may make; default 600. More are refused with 429 and `Retry-After`. */
  rateLimitPerMinute?: number | undefined
  /** Where the server's log lines go; by default stderr at `config.logLevel`. */
  logger?: McpLogger | undefined
  /**
   * Where the one JSON line per request goes (method, tool, status, duration, client); by default
   * stderr, unless `config.logLevel` is `warn` or `error`. It never holds a header, the body or
   * the RPC URL.
   */
  logRequest?: ((line: string) => void) | undefined
  /** The tools to serve, in listing order. Default: all six of {@link vaultTools}. */
  tools?: readonly AnyVaultTool[] | undefined
}

/** Who is calling, for the rate limit and the request log: the Node adapter gives the remote address. */
export type McpHttpRequestInfo = {
  /** A stable name for the caller, such as its IP address; `unknown` when left out. */
  client?: string | undefined
}

/**
 * The MCP server as an HTTP request handler, stateless: mount it at `POST /mcp` of your own app.
 * Every request is served on its own, so several replicas can sit behind a load balancer without
 * session affinity.
 */
export type McpHttpHandler = {
  /** The Web-standard form, for Hono (`c.req.raw`), Bun, Deno or workers. */
  fetch: (request: Request, info?: McpHttpRequestInfo) => Promise<Response>
  /** The Node form, for Express or `node:http`: `app.all('/mcp', handler.node)`. */
  node: (request: IncomingMessage, response: ServerResponse) => void
  /** Requests being served now (their response bodies included). */
  inFlight: () => number
  /**
   * Stops taking requests (new ones get 503 with `Retry-After`) and resolves once those in flight
   * have finished: for a graceful shutdown.
   */
  drain: () => Promise<void>
  /** Starts verifying the vault deployment without waiting for it. */
  verifyInBackground: () => void
  /** Cancels the requests in flight; the handler refuses new ones with 503. */
  close: () => Promise<void>
}

const defaults = {
  maxBodyBytes: 64 * 1024,
  requestTimeoutMs: 30_000,
  maxConcurrent: 128,
  rateLimitPerMinute: 600,
}

/**
 * Creates the x402-vault MCP server as a stateless Streamable HTTP request handler: the same six tools
 * as over stdio, for clients that speak the 2025-era protocol (`initialize`) or the 2026-07-28
 * revision. The vault connection and the tool listing are built once. A 2025-era call (`tools/call`,
 * `tools/list`, `ping`) goes to one long-lived server; `initialize`, a 2026-07-28 request and
 * anything unusual get a new `McpServer` and the SDK's single-request transport.
 *
 * In front of the MCP SDK it checks, in order: `Host` and `Origin` (403), the client's rate (429),
 * the bearer token (401 with `WWW-Authenticate: Bearer`), the method (405), the number of requests in
 * flight (503), `Content-Type` (415), an `Accept` that does not allow JSON (406), the body's size
 * (413), its JSON (400, -32700) and the JSON-RPC envelope (400, -32600 or -32602). A refusal is a
 * JSON-RPC error body whose message says what to fix; it never echoes the token. Every answer is one
 * JSON body.
 *
 * @param config - From {@link loadMcpConfig}.
 * @param options - The token, the allowlists and the limits.
 * @returns `{ fetch, node, inFlight, drain, verifyInBackground, close }`.
 * @throws {VaultConfigError} `ADDRESSES_FILE_INVALID` when `config.addresses` is not a full, valid set.
 * @example
 * const mcp = createMcpHttpHandler(await loadMcpConfig(process.env), { token: process.env.MCP_TOKEN })
 * app.all('/mcp', (c) => mcp.fetch(c.req.raw)) // Hono
 * app.all('/mcp', mcp.node) // Express, before express.json()
 */
export function createMcpHttpHandler(
  config: McpConfig,
  options: McpHttpHandlerOptions = {},
): McpHttpHandler {
  const logger = options.logger ?? createLogger(config.logLevel)
  const vault = createVaultMcp(config, { logger, tools: options.tools })
  const maxBodyBytes = options.maxBodyBytes ?? defaults.maxBodyBytes
  const timeoutMs = options.requestTimeoutMs ?? defaults.requestTimeoutMs
  const maxConcurrent = options.maxConcurrent ?? defaults.maxConcurrent
  const allowedOrigins = new Set(options.allowedOrigins ?? [])
  const hostCheck = hostMatcher([
    ...(options.allowedHosts ?? ['localhost', '127.0.0.1', '[::1]']),
    ...[...allowedOrigins].map((origin) => new URL(origin).host),
  ])
  const tokenDigest = options.token === undefined ? undefined : digest(options.token)
  const limiter = rateLimiter(options.rateLimitPerMinute ?? defaults.rateLimitPerMinute)
  const logRequest =
    options.logRequest ??
    (config.logLevel === 'warn' || config.logLevel === 'error'
      ? () => {}
      : (line: string) => process.stderr.write(line))

  // The refusals guardToolCall kept, by the request the SDK hands to the server factory.
  const refusals = new WeakMap<Request, Map<RequestId, string>>()
  // The 2026-07-28 revision. 2025-era requests are served below instead: the SDK's own stateless
  // fallback always answers them with an event stream, whose framing and stream wrappers cost more
  // per request than the whole tool call does when 50 clients share one process.
  const modern = createMcpHandler(
    (context) =>
      vault.newServer({
        refused: context.requestInfo ? refusals.get(context.requestInfo) : undefined,
      }),
    {
      legacy: 'reject',
      maxRequestBodySize: maxBodyBytes,
      onerror: (error) => logger.debug(`MCP: ${error.message}`),
    },
  )

  // 2025-era calls, on one server for the process (see createSharedLegacyServer).
  const shared = createSharedLegacyServer(vault, logger)

  // The `tools/list` result as the shared server answered it: the listing never changes, and under
  // load building it again is most of a request's time.
  let listing: Buffer | undefined

  /**
   * A 2025-era request that the shared server does not take (`initialize`, a notification, one with
   * `_meta` or odd headers), stateless: a new server instance over the shared parts, answered with one
   * JSON body (the protocol lets a server answer a POST with JSON or an event stream; this server
   * sends nothing before a result, so a stream would only frame that one message).
   */
  async function serveLegacy(
    request: Request,
    message: unknown,
    refused: Map<RequestId, string>,
    signal: AbortSignal,
  ): Promise<Response> {
    const server = vault.newServer({ refused })
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    })
    transport.onerror = (error) => logger.debug(`MCP: ${error.message}`)
    const teardown = () => {
      transport.close().catch(() => {})
      server.close().catch(() => {})
    }
    signal.addEventListener('abort', teardown, { once: true })
    await server.connect(transport)
    try {
      return await transport.handleRequest(request, { parsedBody: message })
    } finally {
      signal.removeEventListener('abort', teardown)
      teardown()
    }
  }

  let inFlight = 0
  let closed = false
  let idle: (() => void)[] = []
  const finished = () => {
    inFlight -= 1
    if (inFlight === 0) for (const resolve of idle.splice(0)) resolve()
  }

  /**
   * One request. `readRequestBody` reads the body once the request has passed the checks before it:
   * the Node adapter reads its stream straight, without a Web stream in between.
   */
  async function handle(
    request: Request,
    info: McpHttpRequestInfo,
    readRequestBody: () => Promise<string | undefined>,
  ): Promise<Response> {
    const started = performance.now()
    const client = info.client ?? 'unknown'
    const entry: RequestLog = { method: undefined, tool: undefined }
    const done = (response: Response): Response => {
      const write = () =>
        logRequest(
          `${JSON.stringify({
            time: new Date().toISOString(),
            http: request.method,
            method: entry.method ?? null,
            tool: entry.tool ?? null,
            status: response.status,
            durationMs: Math.round((performance.now() - started) * 10) / 10,
            client,
            ...(entry.refusal ? { refusal: entry.refusal } : {}),
          })}\n`,
        )
      if (!entry.counted) {
        write()
        return response
      }
      if (!isEventStream(response)) {
        // A JSON answer is whole already: nothing runs for it any longer.
        entry.cleanup?.()
        write()
        finished()
        return response
      }
      // A streamed answer counts (and stays under its timer) until its body ends.
      return trackBody(response, () => {
        entry.cleanup?.()
        write()
        finished()
      })
    }
    const refuse = (status: number, refusal: string, message: string, headers = {}) => {
      entry.refusal = refusal
      return done(jsonRpcError(status, message, refusal, entry.id, headers))
    }

    const host = request.headers.get('host')
    if (!hostCheck(host)) {
      return refuse(
        403,
        'HOST_NOT_ALLOWED',
        `Host ${JSON.stringify((host ?? '').slice(0, 100))} is not an address this server answers for (a guard against DNS rebinding). Call it by the address it listens on, or add the origin you serve it under to VAULT_MCP_ALLOWED_ORIGINS.`,
      )
    }
    const origin = request.headers.get('origin')
    if (origin !== null && !allowedOrigins.has(origin)) {
      return refuse(
        403,
        'ORIGIN_NOT_ALLOWED',
        `Origin ${JSON.stringify(origin.slice(0, 100))} may not call this server (a guard against DNS rebinding). To let a web app call it, add its origin to VAULT_MCP_ALLOWED_ORIGINS.`,
      )
    }
    const wait = limiter(client)
    if (wait > 0) {
      const seconds = Math.ceil(wait / 1000)
      return refuse(
        429,
        'RATE_LIMITED',
        `Too many requests from this client: try again in ${seconds} s.`,
        { 'retry-after': String(seconds) },
      )
    }
    if (tokenDigest && !bearerMatches(request.headers.get('authorization'), tokenDigest)) {
      return refuse(
        401,
        'UNAUTHORIZED',
        'This server needs the header "Authorization: Bearer <token>" with the token it was started with (VAULT_MCP_HTTP_TOKEN).',
        { 'www-authenticate': 'Bearer realm="x402-vault"' },
      )
    }
    if (request.method !== 'POST') {
      return refuse(
        405,
        'METHOD_NOT_ALLOWED',
        `Method ${request.method} is not served: this stateless server answers POST only (no SSE stream to GET, no session to DELETE).`,
        { allow: 'POST' },
      )
    }
    if (closed || inFlight >= maxConcurrent) {
      return refuse(
        503,
        closed ? 'SHUTTING_DOWN' : 'TOO_MANY_REQUESTS_IN_FLIGHT',
        closed
          ? 'The server is shutting down: try another replica or try again shortly.'
          : `The server is serving ${maxConcurrent} requests already: try again in a second.`,
        { 'retry-after': '1' },
      )
    }
    inFlight += 1
    entry.counted = true
    try {
      return done(await serve(request, entry, readRequestBody))
    } catch (error) {
      logger.error(`HTTP request failed: ${error instanceof Error ? error.message : error}`)
      entry.refusal = 'INTERNAL_ERROR'
      return done(jsonRpcError(500, 'The server hit an unexpected error.', 'INTERNAL_ERROR'))
    }
  }

  async function serve(
    request: Request,
    entry: RequestLog,
    readRequestBody: () => Promise<string | undefined>,
  ): Promise<Response> {
    if (!isJsonContentType(request.headers.get('content-type'))) {
      entry.refusal = 'UNSUPPORTED_MEDIA_TYPE'
      return jsonRpcError(
        415,
        'Content-Type must be application/json: the body is one JSON-RPC message.',
        entry.refusal,
      )
    }
    if (!acceptsJson(request.headers.get('accept'))) {
      entry.refusal = 'NOT_ACCEPTABLE'
      return jsonRpcError(
        406,
        'This server answers with JSON: Accept must allow application/json (as application/json, application/* or */*), or be left out.',
        entry.refusal,
      )
    }
    const body = await readRequestBody()
    if (request.signal.aborted) {
      entry.refusal = 'CLIENT_CLOSED'
      return new Response(null, { status: 499 })
    }
    if (body === undefined) {
      entry.refusal = 'BODY_TOO_LARGE'
      return jsonRpcError(
        413,
        `The request body is larger than ${maxBodyBytes} bytes, the most this server reads.`,
        entry.refusal,
      )
    }
    let message: unknown
    try {
      message = JSON.parse(body)
    } catch {
      entry.refusal = 'PARSE_ERROR'
      return jsonRpcError(
        400,
        'Parse error: the body is not valid JSON.',
        entry.refusal,
        null,
        {},
        -32700,
      )
    }
    describe(message, entry)
    if (listing !== undefined && isPlainToolsList(message) && shared.takes(request, message)) {
      // Bytes, not a string: a string body is checked character by character for lone surrogates,
      // which for the listing cost more than the rest of the request.
      const answer = Buffer.concat([
        Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":`),
        listing,
        Buffer.from('}'),
      ])
      return new Response(answer, { status: 200, headers: { 'content-type': 'application/json' } })
    }
    const invalid = checkJsonRpcMessage(message)
    if (invalid !== undefined) {
      // Over HTTP even a notification gets its refusal, as a 400 (the MCP transport allows it).
      entry.refusal = 'INVALID_MESSAGE'
      return new Response(JSON.stringify(invalid.refusal), {
        status: 400,
        headers: { 'content-type': 'application/json' },
      })
    }

    const controller = new AbortController()
    const abort = () => controller.abort()
    request.signal.addEventListener('abort', abort, { once: true })
    const timer = setTimeout(abort, timeoutMs)
    const refused = new Map<RequestId, string>()
    for (const one of Array.isArray(message) ? message : [message]) {
      if (typeof one === 'object' && one !== null) {
        guardToolCall(one as JSONRPCMessage, vault.tools, refused)
      }
    }
    const timedOut = new Promise<Response>((resolve) => {
      controller.signal.addEventListener('abort', () => {
        entry.refusal = request.signal.aborted ? 'CLIENT_CLOSED' : 'TIMEOUT'
        resolve(
          request.signal.aborted
            ? new Response(null, { status: 499 })
            : jsonRpcError(
                504,
                `The request took longer than ${timeoutMs / 1000} s and was stopped; try again.`,
                'TIMEOUT',
                entry.id,
              ),
        )
      })
    })
    entry.cleanup = () => {
      clearTimeout(timer)
      request.signal.removeEventListener('abort', abort)
    }
    if (shared.takes(request, message)) {
      const answered = shared
        .answer(request, message, refused.get(message.id), controller.signal)
        .then(async (response) => {
          if (listing === undefined && isPlainToolsList(message) && response.status === 200) {
            const { result } = JSON.parse(await response.clone().text()) as { result?: unknown }
            if (result !== undefined) listing = Buffer.from(JSON.stringify(result))
          }
          return response
        })
      return Promise.race([answered, timedOut])
    }
    // The SDK gets the parsed body, so the request it sees carries none.
    const forwarded = new Request(request.url, {
      method: 'POST',
      headers: headersForSdk(request.headers),
      signal: controller.signal,
    })
    if (refused.size > 0) refusals.set(forwarded, refused)
    // A modern answer may still be an event stream, opened before the tool has run. The server sends
    // nothing before the result (no progress), so hold the headers until the first event: then a
    // timeout or a client that hangs up is still a status (504, 499), not a cut stream.
    const answered = (
      (await isLegacyRequest(forwarded, message))
        ? serveLegacy(forwarded, message, refused, controller.signal)
        : modern.fetch(forwarded, { parsedBody: message })
    ).then((response) => untilFirstEvent(response, controller.signal))
    return Promise.race([answered, timedOut])
  }

  return {
    fetch: (request, info = {}) => handle(request, info, () => readBody(request, maxBodyBytes)),
    node(request, response) {
      const controller = new AbortController()
      response.once('close', () => {
        if (!response.writableFinished) controller.abort()
      })
      handle(
        toWebRequest(request, controller.signal),
        { client: request.socket.remoteAddress },
        () => readNodeBody(request, maxBodyBytes),
      ).then(
        (answer) => writeResponse(answer, response),
        (error: unknown) => {
          logger.error(`HTTP request failed: ${error instanceof Error ? error.message : error}`)
          if (!response.headersSent) response.writeHead(500)
          response.end()
        },
      )
    },
    inFlight: () => inFlight,
    drain() {
      closed = true
      return inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => idle.push(resolve))
    },
    verifyInBackground: vault.verifyInBackground,
    async close() {
      closed = true
      await Promise.all([modern.close(), shared.close()])
      if (inFlight === 0) for (const resolve of idle.splice(0)) resolve()
      idle = []
    },
  }
}

type RequestLog = {
  method: string | undefined
  tool: string | undefined
  id?: RequestId | null | undefined
  refusal?: string | undefined
  counted?: boolean | undefined
  cleanup?: (() => void) | undefined
}

/** The JSON-RPC method, the tool called and the request id, for the log and error bodies. */
function describe(message: unknown, entry: RequestLog): void {
  const first = Array.isArray(message) ? message[0] : message
  if (typeof first !== 'object' || first === null) return
  const { method, id, params } = first as { method?: unknown; id?: unknown; params?: unknown }
  if (typeof method === 'string') entry.method = method.slice(0, 64)
  if (typeof id === 'string' || typeof id === 'number') entry.id = id
  const name = (params as { name?: unknown } | undefined)?.name
  if (entry.method === 'tools/call' && typeof name === 'string') entry.tool = name.slice(0, 64)
}

function jsonRpcError(
  status: number,
  message: string,
  reason: string,
  id: RequestId | null | undefined = null,
  headers: Record<string, string> = {},
  code = -32000,
): Response {
  return new Response(
    JSON.stringify({ jsonrpc: '2.0', id: id ?? null, error: { code, message, data: { reason } } }),
    { status, headers: { 'content-type': 'application/json', ...headers } },
  )
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest()
}

/** Compares digests, so that neither the token's length nor its content shows in the time taken. */
function bearerMatches(header: string | null, tokenDigest: Buffer): boolean {
  const match = /^Bearer +(\S+) *$/i.exec(header ?? '')
  return match?.[1] !== undefined && timingSafeEqual(digest(match[1]), tokenDigest)
}

function hostMatcher(allowed: readonly string[]): (host: string | null) => boolean {
  const anyPort = new Set<string>()
  const exact = new Set<string>()
  for (const entry of allowed) {
    const parsed = parseHost(entry)
    if (!parsed) continue
    if (parsed.port) exact.add(`${parsed.hostname}:${parsed.port}`)
    else anyPort.add(parsed.hostname)
  }
  return (host) => {
    const parsed = host ? parseHost(host) : undefined
    if (!parsed) return false
    return anyPort.has(parsed.hostname) || exact.has(`${parsed.hostname}:${parsed.port}`)
  }
}

function parseHost(host: string): { hostname: string; port: string } | undefined {
  if (/[/@?#\\\s]/.test(host)) return undefined
  try {
    const url = new URL(`http://${host}`)
    return { hostname: url.hostname, port: url.port }
  } catch {
    return undefined
  }
}

/**
 * The host names a server listening on `host:port` answers for: the address itself, and for a
 * loopback listener the other loopback names.
 *
 * @param host - The listen address.
 * @param port - The port bound.
 * @param interfaceAddresses - For a wildcard listener (`0.0.0.0`, `::`), the machine's addresses.
 * @returns `host:port` entries for `allowedHosts`.
 * @example
 * listenHosts('127.0.0.1', 8402, []) // ['127.0.0.1:8402', 'localhost:8402', '[::1]:8402']
 */
export function listenHosts(
  host: string,
  port: number,
  interfaceAddresses: readonly string[],
): string[] {
  const bracket = (address: string) => (address.includes(':') ? `[${address}]` : address)
  const names = isLoopbackHost(host)
    ? [host, 'localhost', '127.0.0.1', '::1']
    : host === '0.0.0.0' || host === '::'
      ? ['localhost', '127.0.0.1', '::1', ...interfaceAddresses]
      : [host]
  return [...new Set(names.map((name) => `${bracket(name.replace(/^\[|\]$/g, ''))}:${port}`))]
}

function rateLimiter(perMinute: number): (client: string) => number {
  const perMs = perMinute / 60_000
  const buckets = new Map<string, { tokens: number; at: number }>()
  return (client) => {
    const now = performance.now()
    let bucket = buckets.get(client)
    if (!bucket) {
      // Forget clients whose bucket has refilled, so that the map cannot grow without bound.
      if (buckets.size >= 10_000) {
        for (const [key, old] of buckets) {
          if (old.tokens + (now - old.at) * perMs >= perMinute) buckets.delete(key)
        }
      }
      bucket = { tokens: perMinute, at: now }
      buckets.set(client, bucket)
    }
    bucket.tokens = Math.min(perMinute, bucket.tokens + (now - bucket.at) * perMs)
    bucket.at = now
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1
      return 0
    }
    return (1 - bucket.tokens) / perMs
  }
}

function isJsonContentType(value: string | null): boolean {
  return value?.split(';')[0]?.trim().toLowerCase() === 'application/json'
}

/**
 * An `Accept` that allows JSON (or says nothing), the one form this server answers in: every answer
 * is a single JSON body, since no tool sends anything before its result.
 */
function acceptsJson(accept: string | null): boolean {
  if (accept === null || accept.trim() === '') return true
  return accept.split(',').some((part) => {
    const [type = '', ...parameters] = part.split(';').map((piece) => piece.trim().toLowerCase())
    const refused = parameters.some((parameter) => /^q=0(\.0*)?$/.test(parameter))
    return !refused && ['application/json', 'application/*', '*/*'].includes(type)
  })
}

/**
 * The headers the MCP SDK is given: the client's, with an `Accept` that names both forms. The SDK's
 * 2025-era transport refuses (406) any request whose `Accept` does not name them both, even one that
 * allows JSON, the form this server answers in; {@link acceptsJson} has judged the client's already.
 */
function headersForSdk(headers: Headers): Headers {
  const copy = new Headers(headers)
  copy.set('accept', 'application/json, text/event-stream')
  return copy
}

/** The body as text, or `undefined` once it passes `limit` bytes (it is not read further). */
async function readBody(request: Request, limit: number): Promise<string | undefined> {
  const length = Number(request.headers.get('content-length') ?? 0)
  if (length > limit) return undefined
  if (!request.body) return ''
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = request.body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      return undefined
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/**
 * For an event stream, resolves once its first event with data (the result, for this server) has come,
 * with a response that replays what was read; a JSON response as it is.
 */
async function untilFirstEvent(response: Response, signal: AbortSignal): Promise<Response> {
  if (!response.body || !response.headers.get('content-type')?.startsWith('text/event-stream')) {
    return response
  }
  const reader = response.body.getReader()
  const read: Uint8Array[] = []
  const decoder = new TextDecoder()
  let text = ''
  signal.addEventListener('abort', () => reader.cancel().catch(() => {}), { once: true })
  // A stream the SDK stopped (the request aborted) reads as ended.
  const next = () =>
    reader
      .read()
      .catch((): ReadableStreamReadResult<Uint8Array> => ({ done: true, value: undefined }))
  for (;;) {
    const { done, value } = await next()
    if (done || signal.aborted) break
    read.push(value)
    text += decoder.decode(value, { stream: true })
    if (/(^|\n)data:[^\n]*\n(.*\n)*?\r?\n/.test(text)) break
  }
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of read) controller.enqueue(chunk)
    },
    async pull(controller) {
      const { done, value } = await next()
      if (done) controller.close()
      else controller.enqueue(value)
    },
    cancel(reason) {
      return reader.cancel(reason)
    },
  })
  return new Response(body, { status: response.status, headers: response.headers })
}

/** `tools/list` with no parameters (no cursor, no `_meta`): a request whose answer never changes. */
function isPlainToolsList(message: unknown): message is { id: RequestId } {
  if (!isPlainObject(message)) return false
  const { jsonrpc, method, id, params } = message
  return (
    jsonrpc === '2.0' &&
    method === 'tools/list' &&
    isRequestId(id) &&
    isEmptyParams(params) &&
    Object.keys(message).length === (params === undefined ? 3 : 4)
  )
}

function isEventStream(response: Response): boolean {
  return response.headers.get('content-type')?.startsWith('text/event-stream') ?? false
}

/** Calls `onEnd` once the response's body has been read to its end or cancelled. */
function trackBody(response: Response, onEnd: () => void): Response {
  let ended = false
  const end = () => {
    if (ended) return
    ended = true
    onEnd()
  }
  if (!response.body) {
    end()
    return response
  }
  const reader = response.body.getReader()
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read()
        if (done) {
          controller.close()
          end()
        } else controller.enqueue(value)
      } catch (error) {
        end()
        controller.error(error)
      }
    },
    cancel(reason) {
      end()
      return reader.cancel(reason)
    },
  })
  return new Response(body, { status: response.status, headers: response.headers })
}

/** The Web form of a Node request, without its body: {@link readNodeBody} reads that. */
function toWebRequest(request: IncomingMessage, signal: AbortSignal): Request {
  const headers = new Headers()
  for (const [name, value] of Object.entries(request.headers)) {
    if (Array.isArray(value)) for (const one of value) headers.append(name, one)
    else if (value !== undefined) headers.set(name, value)
  }
  const url = `http://${request.headers.host ?? 'localhost'}${request.url ?? '/'}`
  return new Request(url, { method: request.method ?? 'GET', headers, signal })
}

/** A Node request's body as text, or `undefined` once it passes `limit` bytes (the rest is discarded). */
function readNodeBody(request: IncomingMessage, limit: number): Promise<string | undefined> {
  // A body parser that ran before (express.json()) has read the stream: use what it parsed.
  const parsed = (request as { body?: unknown }).body
  if (request.readableEnded && parsed !== undefined) {
    const text = JSON.stringify(parsed)
    return Promise.resolve(Buffer.byteLength(text) > limit ? undefined : text)
  }
  if (Number(request.headers['content-length'] ?? 0) > limit) return Promise.resolve(undefined)
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let size = 0
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength
      if (size <= limit) chunks.push(chunk)
      else {
        request.off('data', onData)
        request.resume()
        resolve(undefined)
      }
    }
    request.on('data', onData)
    request.once('end', () =>
      resolve(size > limit ? undefined : Buffer.concat(chunks).toString('utf8')),
    )
    // A client that hangs up mid-body: the caller sees its request aborted.
    request.once('close', () => resolve(undefined))
    request.once('error', () => resolve(undefined))
  })
}

async function writeResponse(answer: Response, response: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {}
  answer.headers.forEach((value, name) => {
    headers[name] = value
  })
  response.writeHead(answer.status, headers)
  if (!answer.body) {
    response.end()
    return
  }
  if (!isEventStream(answer)) {
    // A JSON answer is whole: one write.
    response.end(Buffer.from(await answer.arrayBuffer()))
    return
  }
  const reader = answer.body.getReader()
  response.once('close', () => {
    reader.cancel().catch(() => {})
  })
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      response.write(value)
    }
  } catch {
    // The client went away or the stream was stopped: nothing more to write.
  }
  response.end()
}
