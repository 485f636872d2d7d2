import type { IncomingMessage, ServerResponse } from 'node:http'
import {
  createMcpHandler,
  isLegacyRequest,
  type JSONRPCMessage,
  type RequestId,
} from '@modelcontextprotocol/server'
import { type McpConfig, McpConfigError } from './config.js'
import { acceptsJson } from './http/acceptsJson.js'
import { accessToken } from './http/accessToken.js'
import { addCorsHeaders } from './http/addCorsHeaders.js'
import { bearerToken } from './http/bearerToken.js'
import { bodyWithinLimit } from './http/bodyWithinLimit.js'
import {
  firstRefusal,
  type HttpCheck,
  type HttpRefusal,
  type HttpRequestFacts,
  refusalResponse,
  refuse,
} from './http/check.js'
import { clientAddress, headerNamePattern } from './http/clientAddress.js'
import { corsPreflight } from './http/corsPreflight.js'
import { hostAllowed } from './http/hostAllowed.js'
import { jsonContentType } from './http/jsonContentType.js'
import { isPlainToolsList, listingAnswer } from './http/listing.js'
import { readNodeBody, toWebRequest, writeResponse } from './http/node.js'
import { originAllowed } from './http/originAllowed.js'
import { parseJsonBody } from './http/parseJsonBody.js'
import { postOnly } from './http/postOnly.js'
import { readBody } from './http/readBody.js'
import { describeMessage, type RequestLog, requestLogLine } from './http/requestLog.js'
import { requestStopped } from './http/requestStopped.js'
import {
  type McpOAuthOptions,
  type ResourceMetadata,
  resourceMetadata,
} from './http/resourceMetadata.js'
import { serveSingleRequest } from './http/serveSingleRequest.js'
import { isEventStream, trackBody, untilFirstEvent } from './http/streams.js'
import { validJsonRpc } from './http/validJsonRpc.js'
import { withinCapacity } from './http/withinCapacity.js'
import { withinRateLimit } from './http/withinRateLimit.js'
import { withinServerRateLimit } from './http/withinServerRateLimit.js'
import { createLogger, type McpLogger } from './logger.js'
import { createVaultMcp } from './server.js'
import { createSharedLegacyServer } from './sharedLegacyServer.js'
import { type AnyVaultTool, guardToolCall } from './tool.js'

export { listenHosts } from './http/listenHosts.js'
export type { McpOAuthOptions, ResourceMetadata } from './http/resourceMetadata.js'

/** What {@link createMcpHttpHandler} takes besides the server's configuration. */
export type McpHttpHandlerOptions = {
  /**
   * The bearer token every request must carry (`Authorization: Bearer <token>`), compared in
   * constant time. Without one, anyone who reaches the handler may call it: leave it out only on
   * loopback.
   */
  token?: string | undefined
  /**
   * Serves anyone, without authentication, on purpose (a public read-and-plan endpoint): the handler
   * then refuses to be created with a `token`, or without `allowedHosts` (the names it is reached by).
   * Limit it with `rateLimitPerMinute` per client (see `trustProxyHeader`) and
   * `serverRateLimitPerMinute` in all.
   */
  public?: boolean | undefined
  /**
   * OAuth instead of a static token: every request must carry an access token the issuer signed for
   * `resource`, with the `scopes`; serve {@link McpHttpHandler.resourceMetadata} beside the endpoint
   * so that clients find the issuer. Not with `token`.
   */
  oauth?: McpOAuthOptions | undefined
  /**
   * Origins (`https://app.example.com`) whose browser pages may call. A request with another
   * `Origin` is refused (403); one without `Origin` (a non-browser client) passes. The handler answers
   * their CORS preflights and lets them read every answer (`Access-Control-Allow-Origin`).
   */
  allowedOrigins?: readonly string[] | undefined
  /**
   * `Host` values to accept, as `host` (any port) or `host:port`, besides the hosts of
   * `allowedOrigins`. Default: the loopback names (`localhost`, `127.0.0.1`, `[::1]`) on any port. A
   * request for another host is refused (403): that is what defeats DNS rebinding.
   */
  allowedHosts?: readonly string[] | undefined
  /**
   * The request header in which the proxy in front writes the client's address (`x-forwarded-for`,
   * whose last entry counts, `cf-connecting-ip`, `x-real-ip`…): the per-client rate limit and the
   * request log then go by it instead of the connection's address. Unset by default: set it only
   * when every request comes through that proxy, since a client can write any address there.
   */
  trustProxyHeader?: string | undefined
  /** The largest request body, in bytes; default 65,536 (64 KiB). Larger is refused with 413. */
  maxBodyBytes?: number | undefined
  /** How long a request may take, in milliseconds; default 30,000. Longer is answered 504. */
  requestTimeoutMs?: number | undefined
  /** Requests served at once; default 128. More are refused with 503 and `Retry-After`. */
  maxConcurrent?: number | undefined
  /** Requests per minute one client may make; default 600. More are refused with 429 and `Retry-After`. */
  rateLimitPerMinute?: number | undefined
  /**
   * Requests per minute the handler takes from all its clients together; default 6,000. More are
   * refused with 429 and `Retry-After`.
   */
  serverRateLimitPerMinute?: number | undefined
  /** Where the server's log lines go; by default stderr at `config.logLevel`. */
  logger?: McpLogger | undefined
  /**
   * Where the one JSON line per request goes (method, tool, status, duration, client); by default
   * stderr, unless `config.logLevel` is `warn` or `error`. It never holds a header, the body or
   * the RPC URL.
   */
  logRequest?: ((line: string) => void) | undefined
  /** The tools to serve, in listing order. Default: every one of {@link vaultTools}. */
  tools?: readonly AnyVaultTool[] | undefined
}

/** Who is calling, for the rate limit and the request log: the Node adapter gives the remote address. */
export type McpHttpRequestInfo = {
  /**
   * A stable name for the caller, such as its IP address; `unknown` when left out. The header named
   * by `trustProxyHeader`, when the request has it, wins.
   */
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
  /**
   * With `oauth`: the protected-resource metadata (RFC 9728) to serve, without authentication, to
   * `GET` at each of its `paths` on the endpoint's origin; `undefined` without `oauth`.
   */
  resourceMetadata: ResourceMetadata | undefined
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
  serverRateLimitPerMinute: 6_000,
  allowedHosts: ['localhost', '127.0.0.1', '[::1]'],
}

/**
 * Creates the x402-vault MCP server as a stateless Streamable HTTP request handler: the same tools
 * ({@link vaultTools}) as over stdio, for clients that speak the 2025-era protocol (`initialize`) or
 * the 2026-07-28 revision. The vault connection and the tool listing are built once. A 2025-era call
 * (`tools/call`, `tools/list`, `ping`) goes to one long-lived server; `initialize`, a 2026-07-28
 * request and anything unusual get a new `McpServer` and the SDK's single-request transport.
 *
 * In front of the MCP SDK it checks, in order: `Host` and `Origin` (403), then answers an allowed
 * origin's CORS preflight (204), checks the client's rate and the server's (429), the bearer token or
 * the OAuth access token (401 with `WWW-Authenticate: Bearer`, 403 for a token lacking a scope), the
 * method (405), the number of requests in flight (503), `Content-Type` (415), an `Accept` that does
 * not allow JSON (406), the body's size (413), its JSON (400, -32700) and the JSON-RPC envelope (400,
 * -32600 or -32602). A refusal is a JSON-RPC error body whose message says what to fix; it never
 * echoes the token. Every answer is one JSON body.
 *
 * @param config - From {@link loadMcpConfig}.
 * @param options - The token, OAuth or `public`; the allowlists and the limits.
 * @returns `{ fetch, node, inFlight, drain, resourceMetadata, verifyInBackground, close }`.
 * @throws {VaultConfigError} `ADDRESSES_FILE_INVALID` when `config.addresses` is not a full, valid set.
 * @throws {McpConfigError} `public` with a `token` or OAuth, or without `allowedHosts`; a
 *   `trustProxyHeader` that is no header name.
 * @throws {TypeError} when given both `token` and `oauth`.
 * @example
 * const mcp = createMcpHttpHandler(await loadMcpConfig(process.env), { token: process.env.MCP_TOKEN })
 * app.all('/mcp', (c) => mcp.fetch(c.req.raw)) // Hono
 * app.all('/mcp', mcp.node) // Express, before express.json()
 * // Public, behind Cloudflare:
 * createMcpHttpHandler(config, { public: true, allowedHosts: ['mcp.example.com'], trustProxyHeader: 'cf-connecting-ip' })
 */
export function createMcpHttpHandler(
  config: McpConfig,
  options: McpHttpHandlerOptions = {},
): McpHttpHandler {
  checkHandlerOptions(options)
  if (options.oauth !== undefined && options.token !== undefined) {
    throw new TypeError('createMcpHttpHandler takes either a token or oauth, not both.')
  }
  const logger = options.logger ?? createLogger(config.logLevel)
  const vault = createVaultMcp(config, { logger, tools: options.tools })
  const maxBodyBytes = options.maxBodyBytes ?? defaults.maxBodyBytes
  const timeoutMs = options.requestTimeoutMs ?? defaults.requestTimeoutMs
  const allowedOrigins = new Set(options.allowedOrigins ?? [])
  const trustProxyHeader = options.trustProxyHeader?.toLowerCase()
  const logRequest =
    options.logRequest ??
    (config.logLevel === 'warn' || config.logLevel === 'error'
      ? () => {}
      : (line: string) => process.stderr.write(line))

  let inFlight = 0
  let closed = false
  let idle: (() => void)[] = []
  const finished = () => {
    inFlight -= 1
    if (inFlight === 0) for (const resolve of idle.splice(0)) resolve()
  }

  // What a request must pass before it takes a slot, in order; each is its own file in http/, and the
  // first refusal answers it. Another rule is one more entry. The checks before authorization answer
  // without it: a CORS preflight carries no token.
  const beforeAuthorization: HttpCheck[] = [
    hostAllowed([
      ...(options.allowedHosts ?? defaults.allowedHosts),
      ...[...allowedOrigins].map((origin) => new URL(origin).host),
    ]),
    originAllowed(allowedOrigins),
    // An early answer, before the token: a preflight carries none.
    corsPreflight(allowedOrigins),
    withinRateLimit(options.rateLimitPerMinute ?? defaults.rateLimitPerMinute),
    // After the client's own limit: a client past it spends none of the server's.
    withinServerRateLimit(options.serverRateLimitPerMinute ?? defaults.serverRateLimitPerMinute),
  ]
  // The static token, or an OAuth access token, whose signature is checked asynchronously: after the
  // rate limit (a flood of forged tokens costs no verification), before the slot.
  const authorization =
    options.oauth === undefined
      ? bearerToken(options.token)
      : accessToken(options.oauth, (message) => logger.warn(`OAuth: ${message}`))
  const beforeSlot: HttpCheck[] = [
    postOnly,
    jsonContentType,
    acceptsJson,
    // Last: a request refused by its headers alone never waits for, nor takes, a slot.
    withinCapacity(options.maxConcurrent ?? defaults.maxConcurrent, () => ({ inFlight, closed })),
  ]

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
   * One request. `readRequestBody` reads the body once the request has passed the checks before it:
   * the Node adapter reads its stream straight, without a Web stream in between.
   */
  async function handle(
    request: Request,
    info: McpHttpRequestInfo,
    readRequestBody: () => Promise<string | undefined>,
  ): Promise<Response> {
    const facts: HttpRequestFacts = {
      method: request.method,
      headers: request.headers,
      client: clientAddress(request.headers, trustProxyHeader, info.client),
    }
    const started = performance.now()
    const entry: RequestLog = { method: undefined, tool: undefined }
    const done = (answer: Response): Response => {
      const response = addCorsHeaders(answer, facts.headers.get('origin'), allowedOrigins)
      const write = () =>
        logRequest(
          requestLogLine(
            { http: facts.method, client: facts.client, started },
            entry,
            response.status,
          ),
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

    const denied = firstRefusal(beforeAuthorization, facts) ?? authorization(facts)
    const refusal =
      (denied instanceof Promise ? await denied : denied) ?? firstRefusal(beforeSlot, facts)
    // Nothing is awaited between the capacity check (last of beforeSlot) and taking the slot.
    if (refusal !== undefined) return done(answerRefusal(refusal, entry))
    inFlight += 1
    entry.counted = true
    try {
      return done(await serve(request, entry, readRequestBody))
    } catch (error) {
      logger.error(`HTTP request failed: ${error instanceof Error ? error.message : error}`)
      return done(
        answerRefusal(refuse(500, 'INTERNAL_ERROR', 'The server hit an unexpected error.'), entry),
      )
    }
  }

  /** A request holding a slot: the rest of the checks, then one of the ways of serving it. */
  async function serve(
    request: Request,
    entry: RequestLog,
    readRequestBody: () => Promise<string | undefined>,
  ): Promise<Response> {
    // The body is read holding the slot: slow uploads count against the cap, so they cannot pile up.
    const read = bodyWithinLimit(await readRequestBody(), request.signal.aborted, maxBodyBytes)
    if (read.refusal !== undefined) return answerRefusal(read.refusal, entry)
    const parsed = parseJsonBody(read.body)
    if (parsed.refusal !== undefined) return answerRefusal(parsed.refusal, entry)
    const { message } = parsed
    describeMessage(message, entry)
    // Served from the listing kept: no MCP server, no timer.
    if (listing !== undefined && isPlainToolsList(message) && shared.takes(request, message)) {
      return listingAnswer(message.id, listing)
    }
    const invalid = validJsonRpc(message)
    if (invalid !== undefined) return answerRefusal(invalid, entry)

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
    const stopped = new Promise<Response>((resolve) => {
      controller.signal.addEventListener('abort', () => {
        resolve(answerRefusal(requestStopped(request.signal.aborted, timeoutMs, entry.id), entry))
      })
    })
    entry.cleanup = () => {
      clearTimeout(timer)
      request.signal.removeEventListener('abort', abort)
    }
    // A 2025-era call: on the shared server, which also fills the listing kept.
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
      return Promise.race([answered, stopped])
    }
    // The SDK gets the parsed body, so the request it sees carries none.
    const forwarded = new Request(request.url, {
      method: 'POST',
      headers: headersForSdk(request.headers),
      signal: controller.signal,
    })
    if (refused.size > 0) refusals.set(forwarded, refused)
    // Any other 2025-era request on a server of its own; a 2026-07-28 one through the SDK's handler.
    // A modern answer may still be an event stream, opened before the tool has run. The server sends
    // nothing before the result (no progress), so hold the headers until the first event: then a
    // timeout or a client that hangs up is still a status (504, 499), not a cut stream.
    const answered = (
      (await isLegacyRequest(forwarded, message))
        ? serveSingleRequest({ vault, logger }, forwarded, message, refused, controller.signal)
        : modern.fetch(forwarded, { parsedBody: message })
    ).then((response) => untilFirstEvent(response, controller.signal))
    return Promise.race([answered, stopped])
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
    resourceMetadata: options.oauth === undefined ? undefined : resourceMetadata(options.oauth),
    verifyInBackground: vault.verifyInBackground,
    async close() {
      closed = true
      await Promise.all([modern.close(), shared.close()])
      if (inFlight === 0) for (const resolve of idle.splice(0)) resolve()
      idle = []
    },
  }
}

/** Refuses options that contradict each other, before anything is built. */
function checkHandlerOptions(options: McpHttpHandlerOptions): void {
  if (options.public && options.oauth !== undefined) {
    throw new McpConfigError(
      'A public MCP handler takes no OAuth: it serves anyone on purpose. Leave out either `public` or `oauth`.',
      { variable: 'VAULT_MCP_PUBLIC' },
    )
  }
  if (options.public && options.token !== undefined) {
    throw new McpConfigError(
      'A public MCP handler takes no token: it serves anyone on purpose. Leave out either `public` or `token`.',
      { variable: 'VAULT_MCP_PUBLIC' },
    )
  }
  if (options.public && !options.allowedHosts?.length) {
    throw new McpConfigError(
      'A public MCP handler needs `allowedHosts`, the host names clients reach it by (such as mcp.example.com): a request for any other Host is refused, the guard against DNS rebinding.',
      { variable: 'VAULT_MCP_ALLOWED_HOSTS' },
    )
  }
  const header = options.trustProxyHeader
  if (header !== undefined && !headerNamePattern.test(header)) {
    throw new McpConfigError(
      `trustProxyHeader must be a header name such as x-forwarded-for or cf-connecting-ip, not ${JSON.stringify(header.slice(0, 40))}.`,
      { variable: 'VAULT_MCP_TRUST_PROXY' },
    )
  }
}

/** A refusal as the answer, noted in the request's log line. */
function answerRefusal(refusal: HttpRefusal, entry: RequestLog): Response {
  entry.refusal = refusal.reason
  return refusalResponse(refusal)
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
