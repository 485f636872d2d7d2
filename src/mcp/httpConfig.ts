import { McpConfigError, type McpEnv } from './config.js'
import type { McpOAuthOptions } from './http/resourceMetadata.js'

/** The Streamable HTTP server's settings, read by {@link loadMcpHttpConfig}. */
export type McpHttpConfig = {
  /** The address to listen on; `127.0.0.1` by default. */
  host: string
  /** The port; `0` picks a free one. */
  port: number
  /** The bearer token every `POST /mcp` must carry; none on loopback when unset. */
  token?: string | undefined
  /** OAuth instead of the token: the issuer, this server's public URL and the required scopes. */
  oauth?: McpOAuthOptions | undefined
  /** Origins (`https://app.example.com`) whose browser pages may call, and whose hosts may be `Host`. */
  allowedOrigins: string[]
  /** Requests per minute one client (one remote address) may make. */
  rateLimitPerMinute: number
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
 * `VAULT_MCP_PORT`), the bearer token or OAuth, the origin allowlist and the limits. A server that
 * listens beyond loopback must have a token or OAuth.
 *
 * @param env - The environment, usually `process.env`.
 * @param flags - `host` and `port` from the command line; they win over the environment.
 * @returns The checked settings.
 * @throws {McpConfigError} naming the variable: a port that is not 0–65535, a missing or weak token
 *   on a non-loopback host (without OAuth), OAuth with a token, an OAuth issuer or resource that is
 *   not an https URL (http on loopback), a scope that is not a scope token, an origin that is not `http(s)://host[:port]`, a limit that is not a
 *   positive whole number.
 * @example
 * const http = loadMcpHttpConfig(process.env, { port: '8402' })
 */
export function loadMcpHttpConfig(
  env: McpEnv,
  flags: { host?: string | undefined; port?: string | undefined } = {},
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
  if (token === undefined && oauth === undefined && !isLoopbackHost(host)) {
    throw new McpConfigError(
      `VAULT_MCP_HTTP_TOKEN is required to listen on ${host}: beyond this machine, anyone who reaches the port could call the tools. Set VAULT_MCP_HTTP_TOKEN to a long random secret (such as the output of \`openssl rand -hex 32\`) and give it to your clients as the header "Authorization: Bearer <token>", or accept OAuth access tokens (VAULT_MCP_OAUTH_ISSUER and VAULT_MCP_OAUTH_RESOURCE), or listen on loopback only (--host 127.0.0.1).`,
      { variable: 'VAULT_MCP_HTTP_TOKEN' },
    )
  }
  return {
    host,
    port,
    token,
    oauth,
    allowedOrigins: parseOrigins(env.VAULT_MCP_ALLOWED_ORIGINS),
    rateLimitPerMinute: env.VAULT_MCP_RATE_LIMIT
      ? wholeNumber(env.VAULT_MCP_RATE_LIMIT, 'VAULT_MCP_RATE_LIMIT', 1)
      : 600,
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
