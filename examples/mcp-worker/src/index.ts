/**
 * The x402-vault MCP server as a public endpoint on Cloudflare Workers: the six tools (three reads,
 * three unsigned plans) at `POST /mcp` to anyone, without authentication, only for the host names in
 * `VAULT_MCP_ALLOWED_HOSTS`, reading the vault through the RPC URL in the `BASE_SEPOLIA_RPC_URL`
 * secret. No key anywhere: the MCP server never signs nor sends.
 *
 * The Worker forwards `/mcp` to one Durable Object, which holds the MCP handler
 * (`createMcpHttpHandler` in public mode) and so its limits: requests per client, requests from all
 * clients together, requests at once. A Worker runs in many isolates, in many locations, each with
 * its own memory: limits kept in an isolate would be per isolate, and a client that reaches several
 * (or the crowd that reaches them all) would get a multiple of each. The one object holds them for
 * every isolate and every location (README.md says what that costs).
 *
 * The settings are the bindings (wrangler.jsonc `vars`, `wrangler secret put`), under the names
 * `x402-vault mcp --http --public` reads from its environment, never `process.env`. The client's
 * address is `CF-Connecting-IP`, which Cloudflare writes on every request, over whatever the client
 * sent. It needs `nodejs_compat`.
 */

import { parseVaultAddresses, VaultError } from 'x402-vault'
import {
  createLogger,
  createMcpHttpHandler,
  loadMcpConfig,
  loadMcpHttpConfig,
  type McpHttpHandler,
} from 'x402-vault/mcp'

/** How a Worker reaches a Durable Object: the few members of the namespace binding it uses. */
type DurableObjectNamespace = {
  idFromName(name: string): unknown
  get(id: unknown): { fetch(request: Request): Promise<Response> }
}

/** The Worker's bindings. */
export type Env = {
  /** The Durable Object that holds the MCP handler and its limits (wrangler.jsonc). */
  MCP_ENDPOINT: DurableObjectNamespace
  /** The Base Sepolia RPC URL (a secret: it often holds an API key); only its origin is ever logged. */
  BASE_SEPOLIA_RPC_URL?: string
  /** Comma-separated host names the endpoint is reached by (`mcp.example.com`); required. */
  VAULT_MCP_ALLOWED_HOSTS?: string
  /** Comma-separated origins whose browser pages may call (CORS); none by default. */
  VAULT_MCP_ALLOWED_ORIGINS?: string
  /** Requests per minute per client address; default 600. */
  VAULT_MCP_RATE_LIMIT?: string
  /** Requests per minute from all clients together; default 6000. */
  VAULT_MCP_SERVER_RATE_LIMIT?: string
  /** Requests served at once; default 128. */
  VAULT_MCP_MAX_CONCURRENT?: string
  /** Seconds one request may take; default 30. */
  VAULT_MCP_REQUEST_TIMEOUT?: string
  /** The largest USDC amount one plan may move; default 100. */
  VAULT_MCP_MAX_PLAN_USDC?: string
  MCP_LOG_LEVEL?: string
  /** The vault's addresses as JSON (a devnet or a private deployment); default: the public ones. */
  VAULT_ADDRESSES_JSON?: string
}

/** The header Cloudflare writes the client's address in; a client cannot set it. */
const clientAddressHeader = 'cf-connecting-ip'

/** Builds the handler from the bindings; throws a `VaultError` naming the binding at fault. */
async function buildHandler(env: Env): Promise<McpHttpHandler> {
  const settings = { ...env, MCP_ENDPOINT: undefined }
  const config = await loadMcpConfig(settings)
  const http = loadMcpHttpConfig({
    ...settings,
    VAULT_MCP_PUBLIC: '1',
    VAULT_MCP_TRUST_PROXY: clientAddressHeader,
  })
  const quiet = config.logLevel === 'warn' || config.logLevel === 'error'
  const handler = createMcpHttpHandler(
    {
      ...config,
      addresses: env.VAULT_ADDRESSES_JSON
        ? parseVaultAddresses(JSON.parse(env.VAULT_ADDRESSES_JSON), {
            chain: config.chain,
            source: 'VAULT_ADDRESSES_JSON',
          })
        : undefined,
    },
    {
      public: true,
      allowedHosts: http.allowedHosts,
      allowedOrigins: http.allowedOrigins,
      trustProxyHeader: http.trustProxyHeader,
      rateLimitPerMinute: http.rateLimitPerMinute,
      serverRateLimitPerMinute: http.serverRateLimitPerMinute,
      maxConcurrent: http.maxConcurrent,
      requestTimeoutMs: http.requestTimeoutMs,
      // Workers Logs keep what the Worker writes to the console.
      logger: createLogger(config.logLevel, (line) => console.error(line.trimEnd())),
      logRequest: quiet ? () => {} : (line) => console.log(line.trimEnd()),
    },
  )
  handler.verifyInBackground()
  return handler
}

/**
 * The Durable Object: one instance (by name) serves every request to `/mcp`, from every isolate and
 * location, so the handler's limits count every request once. Requests interleave while each waits
 * for the RPC, as in one Node process.
 */
export class McpEndpoint {
  readonly #env: Env
  #handler: Promise<McpHttpHandler> | undefined

  constructor(_state: unknown, env: Env) {
    this.#env = env
  }

  async fetch(request: Request): Promise<Response> {
    this.#handler ??= buildHandler(this.#env).catch((error: unknown) => {
      // Built again on the next request, once the bindings are fixed.
      this.#handler = undefined
      throw error
    })
    let handler: McpHttpHandler
    try {
      handler = await this.#handler
    } catch (error) {
      // A VaultError's message names the binding and holds no secret (the RPC URL shows as its origin).
      const message =
        error instanceof VaultError ? error.message : 'The MCP endpoint could not start.'
      console.error(`x402-vault MCP endpoint: ${message}`)
      return Response.json(
        { jsonrpc: '2.0', id: null, error: { code: -32603, message } },
        { status: 500 },
      )
    }
    return handler.fetch(request)
  }
}

export default {
  fetch(request: Request, env: Env): Promise<Response> | Response {
    const { pathname } = new URL(request.url)
    if (pathname === '/mcp') {
      // Every request to the one object: its limits then hold across isolates and locations.
      return env.MCP_ENDPOINT.get(env.MCP_ENDPOINT.idFromName('mcp')).fetch(request)
    }
    if (pathname === '/healthz' && request.method === 'GET') return Response.json({ status: 'ok' })
    return Response.json({ error: 'Not found: the MCP endpoint is POST /mcp.' }, { status: 404 })
  },
}
