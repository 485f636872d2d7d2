import { McpConfigError, type McpEnv } from './config.js'
import { headerNamePattern } from './http/clientAddress.js'
import type { McpOAuthOptions } from './http/resourceMetadata.js'

/** The Streamable HTTP server's settings, read by {@link loadMcpHttpConfig}. */
export type McpHttpConfig = {
  /** The address to listen on; `127.0.0.1` by default. */
  host: string
  /** The port; `0` picks a free one. */
  port: number
  /** The bearer token every `POST /mcp` must carry; none on loopback when unset. */
  token?: string | undefined
  /** Serves anyone, without a token, on any address (`--public` or `VAULT_MCP_PUBLIC=1`). */
  public: boolean
  /** OAuth instead of the token: the issuer, this server's public URL and the required scopes. */
  oauth?: McpOAuthOptions | undefined
  /** Origins (`https://app.example.com`) whose browser pages may call, and whose hosts may be `Host`. */
  allowedOrigins: string[]
  /**
   * `host` or `host:port` names the server answers for (`VAULT_MCP_ALLOWED_HOSTS`): besides the
   * listen address, or, when public, instead of it.
   */
  allowedHosts: string[]
  /** The header (lower case) the proxy in front writes the client's address in; none by default. */
  trustProxyHeader?: string | undefined
  /** Requests per minute one client (one remote address) may make. */
  rateLimitPerMinute: number
  /** Requests per minute the server takes from all its clients together. */
  serverRateLimitPerMinute: number
  /** Requests served at once; more are refused with 503 until one finishes. */
  maxConcurrent: number
  /** How long one request may take, in milliseconds. */
  requestTimeoutMs: number
}

/** The port when neither `--port` nor `VAULT_MCP_PORT` gives one. */
export const defaultMcpHttpPort = 8402

/**
 * Whether an address only this machine can reach: `localhost`, `127.0.0.0/8` or `::1`.
 *
 * @param host - A host name or IP address, as given to `--host`.
 * @returns `true` for a loopback address.
 * @example
 * isLoopbackHost('127.0.0.1') // true
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase()
  return bare === 'localhost' || bare === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare)
}

/**
 * Reads and checks the Streamable HTTP settings: the listen address (`--host`, `--port` or
 * `VAULT_MCP_PORT`), the bearer token, OAuth or public mode, the host and origin allowlists, the
 * proxy header to trust and the limits. A server that listens beyond loopback must have a token or
 * OAuth, unless it is public; a public one must name its hosts and takes neither.
 *
 * @param env - The environment, usually `process.env`.
 * @param flags - `host`, `port` and `public` from the command line; they win over the environment.
 * @returns The checked settings.
 * @throws {McpConfigError} naming the variable: a port that is not 0–65535, a missing or weak token
 *   on a non-loopback host (without OAuth or public mode), OAuth with a token, an OAuth issuer or
 *   resource that is not an https URL (http on loopback), a scope that is not a scope token, public
 *   mode with a token or OAuth or without `VAULT_MCP_ALLOWED_HOSTS`, a host or origin that is not one,
 *   a header name that is not one, a limit that is not a positive whole number.
 * @example
 * const http = loadMcpHttpConfig(process.env, { port: '8402' })
 */
export function loadMcpHttpConfig(
  env: McpEnv,
  flags: {
    host?: string | undefined
    port?: string | undefined
    public?: boolean | undefined
  } = {},
): McpHttpConfig {
  const host = flags.host || '127.0.0.1'
  const portText = flags.port ?? env.VAULT_MCP_PORT
  const port = portText ? wholeNumber(portText, 'VAULT_MCP_PORT', 0, 65_535) : defaultMcpHttpPort
  const token = env.VAULT_MCP_HTTP_TOKEN || undefined
  if (token !== undefined) checkToken(token)
  const oauth = parseOAuth(env)
  if (oauth !== undefined && token !== undefined) {
    throw new McpConfigError(
      'Set either VAULT_MCP_HTTP_TOKEN (a static token) or VAULT_MCP_OAUTH_ISSUER (OAuth access tokens), not both.',
      { variable: 'VAULT_MCP_HTTP_TOKEN' },
    )
  }
  const isPublic = flags.public === true || parsePublic(env.VAULT_MCP_PUBLIC)
  const allowedHosts = parseHosts(env.VAULT_MCP_ALLOWED_HOSTS)
  if (isPublic && (token !== undefined || oauth !== undefined)) {
    throw new McpConfigError(
      `VAULT_MCP_PUBLIC (or --public) and ${token !== undefined ? 'VAULT_MCP_HTTP_TOKEN' : 'VAULT_MCP_OAUTH_ISSUER'} do not go together: a public server serves anyone without authentication, a private one only clients that authenticate. Unset one of them.`,
      { variable: 'VAULT_MCP_PUBLIC' },
    )
  }
  if (isPublic && allowedHosts.length === 0) {
    throw new McpConfigError(
      'A public server needs VAULT_MCP_ALLOWED_HOSTS: the comma-separated host names clients reach it by, such as mcp.example.com (a request for any other Host is refused: the guard against DNS rebinding).',
      { variable: 'VAULT_MCP_ALLOWED_HOSTS' },
    )
  }
  if (token === undefined && oauth === undefined && !isPublic && !isLoopbackHost(host)) {
    throw new McpConfigError(
      `VAULT_MCP_HTTP_TOKEN is required to listen on ${host}: beyond this machine, anyone who reaches the port could call the tools. Set VAULT_MCP_HTTP_TOKEN to a long random secret (such as the output of \`openssl rand -hex 32\`) and give it to your clients as the header "Authorization: Bearer <token>", accept OAuth access tokens (VAULT_MCP_OAUTH_ISSUER and VAULT_MCP_OAUTH_RESOURCE), listen on loopback only (--host 127.0.0.1), or serve anyone on purpose with --public.`,
      { variable: 'VAULT_MCP_HTTP_TOKEN' },
    )
  }
  return {
    host,
    port,
    token,
    public: isPublic,
    oauth,
    allowedOrigins: parseOrigins(env.VAULT_MCP_ALLOWED_ORIGINS),
    allowedHosts,
    trustProxyHeader: parseTrustProxy(env.VAULT_MCP_TRUST_PROXY),
    rateLimitPerMinute: env.VAULT_MCP_RATE_LIMIT
      ? wholeNumber(env.VAULT_MCP_RATE_LIMIT, 'VAULT_MCP_RATE_LIMIT', 1)
      : 600,
    serverRateLimitPerMinute: env.VAULT_MCP_SERVER_RATE_LIMIT
      ? wholeNumber(env.VAULT_MCP_SERVER_RATE_LIMIT, 'VAULT_MCP_SERVER_RATE_LIMIT', 1)
      : 6_000,
    maxConcurrent: env.VAULT_MCP_MAX_CONCURRENT
      ? wholeNumber(env.VAULT_MCP_MAX_CONCURRENT, 'VAULT_MCP_MAX_CONCURRENT', 1)
      : 128,
    requestTimeoutMs:
      (env.VAULT_MCP_REQUEST_TIMEOUT
        ? wholeNumber(env.VAULT_MCP_REQUEST_TIMEOUT, 'VAULT_MCP_REQUEST_TIMEOUT', 1, 3_600)
        : 30) * 1000,
  }
}

function wholeNumber(
  text: string,
  variable: keyof McpEnv,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const value = /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN
  if (!(value >= min && value <= max)) {
    const range = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `from ${min} to ${max}`
    throw new McpConfigError(
      `${variable} must be a whole number ${range}, not ${JSON.stringify(text.slice(0, 40))}.`,
      { variable },
    )
  }
  return value
}

function checkToken(token: string): void {
  // The bearer token syntax of RFC 6750, so that it fits in the header as it is.
  if (!/^[A-Za-z0-9\-._~+/]+=*$/.test(token) || token.length < 16) {
    // Never echo the token, not even in part.
    throw new McpConfigError(
      `VAULT_MCP_HTTP_TOKEN must be at least 16 characters of letters, digits and -._~+/ (it has ${token.length} characters${/\s/.test(token) ? ', with white space' : ''}). Use a long random secret, such as the output of \`openssl rand -hex 32\`.`,
      { variable: 'VAULT_MCP_HTTP_TOKEN' },
    )
  }
}

function parseOAuth(env: McpEnv): McpOAuthOptions | undefined {
  const issuer = env.VAULT_MCP_OAUTH_ISSUER || undefined
  const resource = env.VAULT_MCP_OAUTH_RESOURCE || undefined
  const scopes = env.VAULT_MCP_OAUTH_SCOPES || undefined
  if (issuer === undefined) {
    const stray =
      resource !== undefined ? 'VAULT_MCP_OAUTH_RESOURCE' : scopes && 'VAULT_MCP_OAUTH_SCOPES'
    if (stray) {
      throw new McpConfigError(
        `${stray} is set but VAULT_MCP_OAUTH_ISSUER is not: set the issuer URL of the authorization server whose access tokens this server accepts.`,
        { variable: 'VAULT_MCP_OAUTH_ISSUER' },
      )
    }
    return undefined
  }
  if (resource === undefined) {
    throw new McpConfigError(
      "VAULT_MCP_OAUTH_RESOURCE is required with VAULT_MCP_OAUTH_ISSUER: set it to this server's public URL as clients reach it (such as https://mcp.example.com/mcp), the audience its access tokens must name.",
      { variable: 'VAULT_MCP_OAUTH_RESOURCE' },
    )
  }
  const scopeList = (scopes ?? '').split(/[\s,]+/).filter(Boolean)
  const badScope = scopeList.find((scope) => !/^[\x21\x23-\x5B\x5D-\x7E]+$/.test(scope))
  if (badScope !== undefined) {
    throw new McpConfigError(
      `VAULT_MCP_OAUTH_SCOPES must be scope names separated by spaces (printable ASCII, no quote or backslash), not ${JSON.stringify(badScope.slice(0, 40))}.`,
      { variable: 'VAULT_MCP_OAUTH_SCOPES' },
    )
  }
  return {
    issuer: oauthUrl(issuer, 'VAULT_MCP_OAUTH_ISSUER'),
    resource: oauthUrl(resource, 'VAULT_MCP_OAUTH_RESOURCE'),
    scopes: scopeList,
  }
}

/** An https URL without query or fragment; http only for a loopback host (a test, a local issuer). */
function oauthUrl(text: string, variable: keyof McpEnv): string {
  let url: URL | undefined
  try {
    url = new URL(text)
  } catch {}
  const secure =
    url?.protocol === 'https:' || (url?.protocol === 'http:' && isLoopbackHost(url.hostname))
  if (!url || !secure || url.search !== '' || url.hash !== '' || url.username || url.password) {
    throw new McpConfigError(
      `${variable} must be an https URL without query, fragment or credentials (http only on loopback), not ${JSON.stringify(text.slice(0, 80))}.`,
      { variable },
    )
  }
  return text
}

function parseOrigins(text: string | undefined): string[] {
  if (!text) return []
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      let url: URL | undefined
      try {
        url = new URL(entry)
      } catch {}
      if (!url || !/^https?:$/.test(url.protocol) || url.origin !== entry.replace(/\/$/, '')) {
        throw new McpConfigError(
          `VAULT_MCP_ALLOWED_ORIGINS must be a comma-separated list of origins such as https://app.example.com (scheme, host and port only; no path, no wildcard), not ${JSON.stringify(entry.slice(0, 80))}.`,
          { variable: 'VAULT_MCP_ALLOWED_ORIGINS' },
        )
      }
      return url.origin
    })
}

function parsePublic(text: string | undefined): boolean {
  if (!text || text === '0' || text === 'false') return false
  if (text === '1' || text === 'true') return true
  throw new McpConfigError(
    `VAULT_MCP_PUBLIC must be 1 (or true) to serve anyone without authentication, or 0 (or false, or unset), not ${JSON.stringify(text.slice(0, 40))}.`,
    { variable: 'VAULT_MCP_PUBLIC' },
  )
}

function parseHosts(text: string | undefined): string[] {
  if (!text) return []
  return text
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter(Boolean)
    .map((entry) => {
      // A name or an address, with a port or without: no scheme, path or wildcard.
      if (!/^(\[[0-9a-f:.]+\]|[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?)(:\d{1,5})?$/.test(entry)) {
        throw new McpConfigError(
          `VAULT_MCP_ALLOWED_HOSTS must be a comma-separated list of host names such as mcp.example.com or mcp.example.com:8443 (no scheme, no path, no wildcard), not ${JSON.stringify(entry.slice(0, 80))}.`,
          { variable: 'VAULT_MCP_ALLOWED_HOSTS' },
        )
      }
      return entry
    })
}

function parseTrustProxy(text: string | undefined): string | undefined {
  if (!text) return undefined
  const header = text.trim().toLowerCase()
  if (!headerNamePattern.test(header) || header === 'forwarded') {
    throw new McpConfigError(
      `VAULT_MCP_TRUST_PROXY must name the one header in which your proxy writes the client's address, such as x-forwarded-for, cf-connecting-ip or x-real-ip (Forwarded is not read), not ${JSON.stringify(text.slice(0, 40))}.`,
      { variable: 'VAULT_MCP_TRUST_PROXY' },
    )
  }
  return header
}
