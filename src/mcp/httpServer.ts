import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { networkInterfaces } from 'node:os'
import { loadMcpConfig, McpConfigError } from './config.js'
import { keepIdleConnections } from './http/keepIdleConnections.js'
import { writeResponse } from './http/node.js'
import { createMcpHttpHandler, listenHosts, type McpHttpHandler } from './http.js'
import { loadMcpHttpConfig } from './httpConfig.js'
import { createLogger, redactLogText } from './logger.js'

/** `--host`, `--port` and `--public` of `x402-vault mcp --http`. */
export type HttpServerFlags = {
  host?: string | undefined
  port?: string | undefined
  /** Serve anyone without authentication, as `VAULT_MCP_PUBLIC=1` does. */
  public?: boolean | undefined
}

/**
 * Runs the MCP server over Streamable HTTP until SIGTERM or SIGINT: what `x402-vault mcp --http`
 * does. It answers `POST /mcp` (the MCP endpoint, see {@link createMcpHttpHandler}), `GET /healthz`
 * (no authentication, no RPC) and, with OAuth, `GET /.well-known/oauth-protected-resource[/mcp]`
 * (the protected-resource metadata, no authentication), and starts verifying the vault deployment at
 * once; when the RPC cannot be reached, the server still starts and each tool answers a retryable
 * error until it can. On SIGTERM it stops accepting connections, lets the requests in flight finish,
 * and resolves 0. A public server (`--public`) says so at start, on stderr, at the `warn` level.
 *
 * @param env - The environment, usually `process.env` (see `McpEnv`).
 * @param flags - `host` (default 127.0.0.1), `port` (default `VAULT_MCP_PORT`, else 8402) and
 *   `public`.
 * @returns The exit code: 0 after a drain, 1 when the server cannot start.
 * @example
 * process.exitCode = await runHttpServer(process.env, { port: '8402' })
 */
export async function runHttpServer(
  env: NodeJS.ProcessEnv,
  flags: HttpServerFlags = {},
): Promise<number> {
  let handler: McpHttpHandler | undefined
  const fail = (message: string) => {
    process.stderr.write(`x402-vault-mcp: ${redactLogText(message).replace(/\s*\n\s*/g, ' ')}\n`)
    return 1
  }
  let settings: ReturnType<typeof loadMcpHttpConfig>
  let config: Awaited<ReturnType<typeof loadMcpConfig>>
  try {
    config = await loadMcpConfig(env)
    settings = loadMcpHttpConfig(env, flags)
  } catch (error) {
    return fail(error instanceof McpConfigError ? error.message : String(error))
  }
  const logger = createLogger(config.logLevel)

  let draining = false
  const server = createServer((request, response) => {
    // While draining, a connection whose answer is out is closed at once: kept alive, it would hold
    // the exit for as long as idle connections are kept.
    response.once('finish', () => {
      if (draining) server.closeIdleConnections()
    })
    route(request, response, handler)
  })
  keepIdleConnections(server)
  const listening = new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(settings.port, settings.host, () => resolve())
  })
  try {
    await listening
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return fail(
      code === 'EADDRINUSE'
        ? `Port ${settings.port} on ${settings.host} is in use: pick another with --port or VAULT_MCP_PORT.`
        : `Cannot listen on ${settings.host}:${settings.port}: ${(error as Error).message}`,
    )
  }
  const { port } = server.address() as AddressInfo
  const interfaceAddresses = Object.values(networkInterfaces())
    .flat()
    .map((entry) => entry?.address)
    .filter((address): address is string => address !== undefined)
  handler = createMcpHttpHandler(config, {
    token: settings.token,
    public: settings.public,
    oauth: settings.oauth,
    allowedOrigins: settings.allowedOrigins,
    // A public server answers only for the names it is published under; a private one for its own
    // address too.
    allowedHosts: settings.public
      ? settings.allowedHosts
      : [...listenHosts(settings.host, port, interfaceAddresses), ...settings.allowedHosts],
    trustProxyHeader: settings.trustProxyHeader,
    maxConcurrent: settings.maxConcurrent,
    rateLimitPerMinute: settings.rateLimitPerMinute,
    serverRateLimitPerMinute: settings.serverRateLimitPerMinute,
    requestTimeoutMs: settings.requestTimeoutMs,
    logger,
  })
  if (settings.oauth) {
    // Before the line that says it serves (which a supervisor may wait for). Only the URLs' origins
    // reach the log, as for every URL: the words after each keep the line readable.
    const { issuer, resource, scopes = [] } = settings.oauth
    logger.info(
      `OAuth: accepting access tokens from ${issuer} for ${resource} with ${scopes.length > 0 ? `the scopes ${scopes.join(' ')}` : 'any scope'}.`,
    )
  }
  const shown = settings.host.includes(':') ? `[${settings.host}]` : settings.host
  const serving = `Serving MCP over Streamable HTTP (stateless) at POST /mcp on ${shown}:${port},`
  const verifying = `Verifying the vault deployment on ${config.chain}.`
  if (settings.public) {
    // A warning, so that it shows at every log level: anyone who reaches the port may call.
    logger.warn(
      `${serving} PUBLIC: to anyone, without authentication, for the hosts ${settings.allowedHosts.join(', ')}; ${settings.rateLimitPerMinute} requests a minute per client (by ${settings.trustProxyHeader ? `the ${settings.trustProxyHeader} header` : 'remote address'}), ${settings.serverRateLimitPerMinute} in all. ${verifying}`,
    )
  } else {
    logger.info(
      `${serving} ${settings.oauth ? 'to clients with an OAuth access token' : settings.token ? 'to clients with the bearer token' : 'to loopback clients, without a token'}. ${verifying}`,
    )
  }
  handler.verifyInBackground()

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'))
    process.once('SIGINT', () => resolve('SIGINT'))
  })
  const active = handler
  logger.info(`${signal}: draining ${active.inFlight()} request(s) in flight, then exiting.`)
  draining = true
  const closed = new Promise<void>((resolve) => server.close(() => resolve()))
  server.closeIdleConnections()
  // A request in flight is bounded by its own timeout: the drain needs no other deadline.
  await active.drain()
  await active.close()
  server.closeIdleConnections()
  await closed
  logger.info('Drained; exiting.')
  return 0
}

function route(
  request: IncomingMessage,
  response: ServerResponse,
  handler: McpHttpHandler | undefined,
): void {
  const path = (request.url ?? '/').split('?')[0] ?? '/'
  if (path === '/healthz' && (request.method === 'GET' || request.method === 'HEAD')) {
    // Liveness only: it neither needs the token nor touches the RPC.
    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' })
    response.end(request.method === 'HEAD' ? undefined : '{"status":"ok"}')
    return
  }
  const metadata = handler?.resourceMetadata
  if (metadata?.paths.includes(path) && (request.method === 'GET' || request.method === 'HEAD')) {
    // Public: a client reads it to find the authorization server before it holds a token.
    writeResponse(metadata.response(), response).catch(() => response.destroy())
    return
  }
  if (path === '/mcp' && handler) {
    handler.node(request, response)
    return
  }
  response.writeHead(404, { 'content-type': 'application/json' })
  response.end(
    JSON.stringify({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32000,
        message: 'Not found: the MCP endpoint is POST /mcp, the health check GET /healthz.',
        data: { reason: 'NOT_FOUND' },
      },
    }),
  )
}
