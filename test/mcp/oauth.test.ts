/**
 * OAuth for a private endpoint, end to end: a real authorization server (oidc-provider) on loopback,
 * `createMcpHttpHandler` with `oauth` mounted through its Web `fetch` face in a Hono app, and the MCP
 * SDK client's own OAuth flow: the 401, the protected-resource metadata, the issuer's metadata, dynamic
 * registration, the authorization (PKCE, the resource indicator) and the token, then calls. Then each
 * token the server must refuse, each with its status and `WWW-Authenticate`. Offline: the calls need
 * no RPC to pass the check (nothing listens on port 9).
 */
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js'
import { Hono } from 'hono'
import { decodeJwt, decodeProtectedHeader, generateKeyPair, importJWK, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postMcp } from '../../harness/mcpHttp.js'
import { mcpToolNames } from '../../harness/mcpToolNames.js'
import {
  createMcpHttpHandler,
  loadMcpConfig,
  type McpHttpHandler,
  type McpLogger,
  type McpOAuthOptions,
} from '../../src/mcp/index.js'
import {
  startAuthorizationServer,
  type TestAuthorizationServer,
} from '../support/authorizationServer.js'

const quiet: McpLogger = { debug() {}, info() {}, warn() {}, error() {} }
const listTools = { jsonrpc: '2.0', id: 1, method: 'tools/list' }
const closers: (() => Promise<void>)[] = []
const logLines: string[] = []

let as: TestAuthorizationServer
let origin: string
/** `<origin>/mcp`: the resource, the audience every token must name. */
let resource: string
let metadataUrl: string
let challenge: string
/** Each handler, by path: `/mcp` (the defaults), `/mcp-rotating` (keys refetched without cooldown). */
const handlers: Record<string, McpHttpHandler> = {}

beforeAll(async () => {
  as = await startAuthorizationServer()
  closers.push(() => as.close())
  const config = await loadMcpConfig({ BASE_SEPOLIA_RPC_URL: 'http://127.0.0.1:9' })
  const app = new Hono()
  const port = await new Promise<number>((resolve) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
      resolve((info as AddressInfo).port),
    )
    closers.push(() => new Promise((done) => server.close(() => done())))
  })
  origin = `http://127.0.0.1:${port}`
  resource = `${origin}/mcp`
  metadataUrl = `${origin}/.well-known/oauth-protected-resource/mcp`
  challenge = `Bearer resource_metadata="${metadataUrl}", scope="vault:read"`
  for (const [path, extra] of [
    ['/mcp', {}],
    ['/mcp-rotating', { keysRefetchCooldownMs: 0 }],
  ] as const) {
    const oauth: McpOAuthOptions = {
      issuer: as.issuer,
      resource,
      scopes: ['vault:read'],
      ...extra,
    }
    const mcp = createMcpHttpHandler(config, {
      oauth,
      logger: quiet,
      logRequest: (line) => logLines.push(line),
    })
    handlers[path] = mcp
    closers.push(() => mcp.close())
    app.all(path, (c) => mcp.fetch(c.req.raw))
  }
  const metadata = handlers['/mcp']?.resourceMetadata
  if (!metadata) throw new Error('no resource metadata with oauth')
  for (const path of metadata.paths) app.get(path, () => metadata.response())
})

afterAll(async () => {
  for (const close of closers.reverse()) await close()
  // No token, nor any part of one, reaches the request log.
  for (const line of logLines) expect(line).not.toMatch(/eyJ|authorization|bearer/i)
})

/** An in-memory OAuth client, as an app keeps it; the browser step is `as.authorize`. */
class TestOAuthClient implements OAuthClientProvider {
  readonly redirectUrl = 'http://127.0.0.1:9/callback'
  authorizationUrl: URL | undefined
  private information: OAuthClientInformationMixed | undefined
  private saved: OAuthTokens | undefined
  private verifier = ''
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'x402-vault OAuth test',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }
  }
  clientInformation() {
    return this.information
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information
  }
  tokens() {
    return this.saved
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }
  codeVerifier() {
    return this.verifier
  }
}

/** Lists the tools at `path` with `token`: the response, as a client receives it. */
function list(token: string, path = '/mcp') {
  return postMcp(`${origin}${path}`, listTools, { authorization: `Bearer ${token}` })
}

/** The claims and header of `token`, signed again with `key` (a JWK with its `kid`). */
async function resign(
  token: string,
  key: { kid?: string | undefined; [name: string]: unknown },
  claims: Record<string, unknown> = {},
) {
  const header = decodeProtectedHeader(token)
  return new SignJWT({ ...decodeJwt(token), ...claims })
    .setProtectedHeader({ alg: 'RS256', typ: header.typ, kid: key.kid })
    .sign(await importJWK(key, 'RS256'))
}

describe('the MCP SDK client’s own OAuth flow', () => {
  it('finds the issuer from the 401 and the metadata, registers, is authorized, gets a token for this resource and calls', async () => {
    const provider = new TestOAuthClient()
    const first = new StreamableHTTPClientTransport(new URL(resource), { authProvider: provider })
    // No token yet: the server's 401 names its metadata; the SDK discovers, registers, and sends
    // the user to the authorization server.
    await expect(
      new Client({ name: 'oauth-test', version: '1.0.0' }).connect(first),
    ).rejects.toThrow(UnauthorizedError)
    const authorizationUrl = provider.authorizationUrl
    if (!authorizationUrl) throw new Error('the SDK did not start the authorization')
    expect(authorizationUrl.origin).toBe(as.issuer)
    expect(authorizationUrl.searchParams.get('resource')).toBe(resource)
    expect(authorizationUrl.searchParams.get('scope')).toBe('vault:read')
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256')

    const back = await as.authorize(authorizationUrl)
    expect(back.origin + back.pathname).toBe(provider.redirectUrl)
    const code = back.searchParams.get('code')
    if (!code) throw new Error(`no code: ${back}`)
    await first.finishAuth(code)
    const tokens = provider.tokens()
    if (!tokens) throw new Error('no tokens')
    expect(decodeJwt(tokens.access_token)).toMatchObject({ aud: resource, iss: as.issuer })

    const client = new Client({ name: 'oauth-test', version: '1.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(resource), { authProvider: provider }),
    )
    try {
      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name)).toEqual([...mcpToolNames])
      // Past the check, into the tool: it answers the RPC's absence, not a refusal.
      const status = await client.callTool({ name: 'vault_status', arguments: {} })
      expect(status.isError).toBe(true)
      expect(JSON.stringify(status.content)).not.toMatch(/token|unauthori[sz]ed/i)
    } finally {
      await client.close()
    }
  })

  it('publishes the protected-resource metadata, without authentication, at RFC 9728’s path and the bare one', async () => {
    for (const url of [metadataUrl, `${origin}/.well-known/oauth-protected-resource`]) {
      const response = await fetch(url)
      expect(response.status, url).toBe(200)
      expect(response.headers.get('access-control-allow-origin')).toBe('*')
      expect(await response.json()).toEqual({
        resource,
        authorization_servers: [as.issuer],
        scopes_supported: ['vault:read'],
        bearer_methods_supported: ['header'],
        resource_name: 'x402-vault',
      })
    }
  })
})

describe('tokens the server refuses', () => {
  it('no token: 401 naming the metadata and the scope, without error', async () => {
    const response = await postMcp(resource, listTools)
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toBe(challenge)
    expect((await response.json()).error.data.reason).toBe('UNAUTHORIZED')
  })

  it('a token for this resource with the scope passes (the control for the refusals below)', async () => {
    const token = await as.clientCredentialsToken(resource, 'vault:read')
    const response = await list(token)
    expect(response.status).toBe(200)
  })

  it('an expired token: 401 invalid_token', async () => {
    // The issuer's own token as it stands two hours after it was issued: its claims, its key.
    const token = await as.clientCredentialsToken(resource, 'vault:read')
    const now = Math.floor(Date.now() / 1000)
    const expired = await resign(token, as.signingKey(), { iat: now - 7200, exp: now - 3600 })
    expect((await list(await resign(token, as.signingKey()))).status).toBe(200)
    const response = await list(expired)
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toBe(
      `${challenge}, error="invalid_token", error_description="it has expired"`,
    )
  })

  it('a token for another audience: 401 invalid_token', async () => {
    const token = await as.clientCredentialsToken('https://other.example/mcp', 'vault:read')
    expect(decodeJwt(token).aud).toBe('https://other.example/mcp')
    const response = await list(token)
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toBe(
      `${challenge}, error="invalid_token", error_description="it was not issued for this server (its audience)"`,
    )
  })

  it('a wrong signature: 401 invalid_token, whether the claims were altered or the key is another’s under the issuer’s key id', async () => {
    const token = await as.clientCredentialsToken(resource, 'vault:plan')
    const [header, , signature] = token.split('.')
    const altered = `${header}.${Buffer.from(
      JSON.stringify({ ...decodeJwt(token), scope: 'vault:read vault:plan' }),
    ).toString('base64url')}.${signature}`
    const { privateKey } = await generateKeyPair('RS256', { extractable: true })
    const { exportJWK } = await import('jose')
    const forged = await resign(await as.clientCredentialsToken(resource, 'vault:read'), {
      ...(await exportJWK(privateKey)),
      kid: as.signingKey().kid,
    })
    for (const refused of [altered, forged]) {
      const response = await list(refused)
      expect(response.status).toBe(401)
      expect(response.headers.get('www-authenticate')).toBe(
        `${challenge}, error="invalid_token", error_description="its signature does not verify with the authorization server keys"`,
      )
    }
  })

  it('a missing scope: 403 insufficient_scope naming the scope', async () => {
    const token = await as.clientCredentialsToken(resource, 'vault:plan')
    const response = await list(token)
    expect(response.status).toBe(403)
    expect(response.headers.get('www-authenticate')).toBe(
      `${challenge}, error="insufficient_scope", error_description="the token lacks a required scope"`,
    )
    expect((await response.json()).error.message).toContain('lacks the scope vault:read')
  })

  it('a flood of made-up key ids costs the issuer no fetch within the cooldown', async () => {
    // The keys are held already (the tests above); each made-up kid would otherwise refetch them.
    const token = await as.clientCredentialsToken(resource, 'vault:read')
    expect((await list(token)).status).toBe(200)
    const before = as.keySetFetches()
    const responses = await Promise.all(
      Array.from({ length: 20 }, async (_, index) =>
        list(await resign(token, { ...as.signingKey(), kid: `made-up-${index}` })),
      ),
    )
    for (const response of responses) {
      expect(response.status).toBe(401)
      expect(response.headers.get('www-authenticate')).toBe(
        `${challenge}, error="invalid_token", error_description="it is signed with a key the authorization server does not publish"`,
      )
    }
    expect(as.keySetFetches()).toBe(before)
  })

  it('a rotated key: a token signed with the new key passes (the keys are fetched again once); one signed with the retired key is refused 401', async () => {
    const path = '/mcp-rotating'
    const old = await as.clientCredentialsToken(resource, 'vault:read')
    expect((await list(old, path)).status).toBe(200)
    await as.rotateKeys()
    const fresh = await as.clientCredentialsToken(resource, 'vault:read')
    expect(decodeProtectedHeader(fresh).kid).not.toBe(decodeProtectedHeader(old).kid)
    const before = as.keySetFetches()
    expect((await list(fresh, path)).status).toBe(200)
    expect(as.keySetFetches()).toBe(before + 1)
    const response = await list(old, path)
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toBe(
      `${challenge}, error="invalid_token", error_description="it is signed with a key the authorization server does not publish"`,
    )
  })
})
