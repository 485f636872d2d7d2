/**
 * `x402-vault mcp --http` (the built bin) with OAuth settings: it serves the protected-resource
 * metadata beside `/mcp`, names it in the 401, and says at start whose tokens it takes. Its issuer
 * (port 9) cannot be reached: a token gets 503, and the log says why without the token. The flow and
 * the refusals of tokens against a real authorization server are in oauth.test.ts.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import { type HttpMcp, postMcp, startHttpMcp } from '../../harness/mcpHttp.js'

const resource = 'https://mcp.example.com/mcp'
const metadataUrl = 'https://mcp.example.com/.well-known/oauth-protected-resource/mcp'
const token = 'eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJzZWNyZXQtc3ViIn0.c2lnbmF0dXJl'
let mcp: HttpMcp

beforeAll(async () => {
  mcp = await startHttpMcp({
    BASE_SEPOLIA_RPC_URL: 'http://127.0.0.1:9',
    MCP_LOG_LEVEL: 'info',
    VAULT_MCP_OAUTH_ISSUER: 'http://127.0.0.1:9',
    VAULT_MCP_OAUTH_RESOURCE: resource,
    VAULT_MCP_OAUTH_SCOPES: 'vault:read',
  })
})
afterAll(async () => {
  expect(await mcp?.stop()).toBe(0)
})

it('says at start that it takes access tokens from the issuer for the resource (URLs logged as origins)', () => {
  expect(mcp.stderr()).toContain('to clients with an OAuth access token.')
  expect(mcp.stderr()).toContain(
    'OAuth: accepting access tokens from http://127.0.0.1:9 for https://mcp.example.com with the scopes vault:read.',
  )
})

it('serves the protected-resource metadata at both paths, without a token; POST there is not found', async () => {
  for (const path of [
    '/.well-known/oauth-protected-resource/mcp',
    '/.well-known/oauth-protected-resource',
  ]) {
    const response = await fetch(`${mcp.origin}${path}`)
    expect(response.status, path).toBe(200)
    expect(await response.json()).toEqual({
      resource,
      authorization_servers: ['http://127.0.0.1:9'],
      scopes_supported: ['vault:read'],
      bearer_methods_supported: ['header'],
      resource_name: 'x402-vault',
    })
  }
  const posted = await fetch(`${mcp.origin}/.well-known/oauth-protected-resource`, {
    method: 'POST',
  })
  expect(posted.status).toBe(404)
})

it('without a token: 401 naming the metadata; with one while the issuer is unreachable: 503, logged without the token', async () => {
  const refused = await postMcp(mcp.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' })
  expect(refused.status).toBe(401)
  expect(refused.headers.get('www-authenticate')).toBe(
    `Bearer resource_metadata="${metadataUrl}", scope="vault:read"`,
  )
  const unavailable = await postMcp(
    mcp.url,
    { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    { authorization: `Bearer ${token}` },
  )
  expect(unavailable.status).toBe(503)
  expect(unavailable.headers.get('retry-after')).toBe('30')
  expect(mcp.stderr()).toContain(
    'OAuth: The metadata of the authorization server http://127.0.0.1:9 could not be read',
  )
  expect(mcp.stderr()).not.toContain(token.slice(0, 16))
  expect(mcp.requests().map((line) => [line.status, line.refusal])).toEqual([
    [401, 'UNAUTHORIZED'],
    [503, 'AUTHORIZATION_SERVER_UNAVAILABLE'],
  ])
})
