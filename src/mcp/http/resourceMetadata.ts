/** The OAuth settings of a private endpoint: who issues its tokens, for what, with which scopes. */
export type McpOAuthOptions = {
  /**
   * The authorization server's issuer URL (`https://auth.example.com`). Its metadata
   * (`/.well-known/oauth-authorization-server` or `/.well-known/openid-configuration`) must name its
   * `jwks_uri`. This server is never an authorization server itself.
   */
  issuer: string
  /**
   * This server's public URL as clients reach it (`https://mcp.example.com/mcp`): the resource
   * indicator (RFC 8707) clients ask tokens for, and the audience every token must carry.
   */
  resource: string
  /** Scopes every token must hold (`vault:read`); none by default. */
  scopes?: readonly string[] | undefined
  /**
   * The shortest time between two fetches of the issuer's keys (for a token naming a key id they
   * lack) and between two attempts on an issuer that failed, in milliseconds; default 30,000.
   */
  keysRefetchCooldownMs?: number | undefined
}

/** Where and what the protected-resource metadata is. */
export type ResourceMetadata = {
  /**
   * The paths to serve it at (GET, no authentication): RFC 9728's, the resource's path appended to
   * `/.well-known/oauth-protected-resource`, and the bare one for clients that look there.
   */
  paths: readonly string[]
  /** Its absolute URL, as `WWW-Authenticate` names it. */
  url: string
  /** The metadata as a 200 JSON response, readable from any origin. */
  response: () => Response
}

const wellKnown = '/.well-known/oauth-protected-resource'

/**
 * The protected-resource metadata (RFC 9728) a private endpoint publishes so that an MCP client finds
 * its authorization server: the resource, the issuer, the scopes, tokens in the header only.
 *
 * @param oauth - The issuer, the resource and the scopes.
 * @returns Its paths, its URL and its response.
 * @example
 * resourceMetadata({ issuer: 'https://auth.example.com', resource: 'https://mcp.example.com/mcp' }).url
 * // 'https://mcp.example.com/.well-known/oauth-protected-resource/mcp'
 */
export function resourceMetadata(oauth: McpOAuthOptions): ResourceMetadata {
  const resource = new URL(oauth.resource)
  const path = resource.pathname === '/' ? '' : resource.pathname.replace(/\/$/, '')
  const document = JSON.stringify({
    resource: oauth.resource,
    authorization_servers: [oauth.issuer],
    ...(oauth.scopes?.length ? { scopes_supported: oauth.scopes } : {}),
    bearer_methods_supported: ['header'],
    resource_name: 'x402-vault',
  })
  return {
    paths: path === '' ? [wellKnown] : [`${wellKnown}${path}`, wellKnown],
    url: `${resource.origin}${wellKnown}${path}`,
    response: () =>
      new Response(document, {
        status: 200,
        headers: {
          'content-type': 'application/json',
          'cache-control': 'max-age=300',
          // Public by design: browser-based clients read it before they hold a token.
          'access-control-allow-origin': '*',
        },
      }),
  }
}
