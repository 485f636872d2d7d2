import { expect, it } from 'vitest'
import { loadMcpHttpConfig, McpConfigError } from '../../src/mcp/index.js'

const oauthEnv = {
  VAULT_MCP_OAUTH_ISSUER: 'https://auth.example.com',
  VAULT_MCP_OAUTH_RESOURCE: 'https://mcp.example.com/mcp',
}

/** The error `loadMcpHttpConfig` throws for `env` (and `host`), as `{ message, variable }`. */
function refusal(env: Record<string, string>, host?: string) {
  try {
    loadMcpHttpConfig(env, { host })
  } catch (error) {
    expect(error).toBeInstanceOf(McpConfigError)
    return {
      message: (error as McpConfigError).message,
      variable: (error as McpConfigError).variable,
    }
  }
  throw new Error('loaded')
}

it('reads OAuth: the issuer, the resource and the scopes (spaces or commas); no token needed beyond loopback', () => {
  expect(
    loadMcpHttpConfig(
      { ...oauthEnv, VAULT_MCP_OAUTH_SCOPES: 'vault:read, vault:plan' },
      { host: '0.0.0.0' },
    ).oauth,
  ).toEqual({
    issuer: 'https://auth.example.com',
    resource: 'https://mcp.example.com/mcp',
    scopes: ['vault:read', 'vault:plan'],
  })
  expect(loadMcpHttpConfig({ ...oauthEnv }).oauth?.scopes).toEqual([])
  expect(loadMcpHttpConfig({}).oauth).toBeUndefined()
})

it('an http issuer or resource only on loopback (a local issuer, a test)', () => {
  const local = {
    VAULT_MCP_OAUTH_ISSUER: 'http://127.0.0.1:4000',
    VAULT_MCP_OAUTH_RESOURCE: 'http://localhost:8402/mcp',
  }
  expect(loadMcpHttpConfig(local).oauth?.issuer).toBe('http://127.0.0.1:4000')
  expect(refusal({ ...oauthEnv, VAULT_MCP_OAUTH_ISSUER: 'http://auth.example.com' }).message).toBe(
    'VAULT_MCP_OAUTH_ISSUER must be an https URL without query, fragment or credentials (http only on loopback), not "http://auth.example.com".',
  )
  expect(
    refusal({ ...oauthEnv, VAULT_MCP_OAUTH_RESOURCE: 'https://mcp.example.com/mcp#x' }).message,
  ).toMatch(/^VAULT_MCP_OAUTH_RESOURCE must be an https URL/)
})

it('refuses half a setting, a scope that cannot be quoted, and OAuth with a token', () => {
  expect(refusal({ VAULT_MCP_OAUTH_RESOURCE: 'https://mcp.example.com/mcp' })).toEqual({
    variable: 'VAULT_MCP_OAUTH_ISSUER',
    message:
      'VAULT_MCP_OAUTH_RESOURCE is set but VAULT_MCP_OAUTH_ISSUER is not: set the issuer URL of the authorization server whose access tokens this server accepts.',
  })
  expect(refusal({ VAULT_MCP_OAUTH_ISSUER: 'https://auth.example.com' }).message).toMatch(
    /^VAULT_MCP_OAUTH_RESOURCE is required with VAULT_MCP_OAUTH_ISSUER/,
  )
  expect(refusal({ ...oauthEnv, VAULT_MCP_OAUTH_SCOPES: 'vault:read "x"' }).message).toBe(
    'VAULT_MCP_OAUTH_SCOPES must be scope names separated by spaces (printable ASCII, no quote or backslash), not "\\"x\\"".',
  )
  expect(
    refusal({ ...oauthEnv, VAULT_MCP_HTTP_TOKEN: 'a-long-enough-token-0123456789' }).message,
  ).toBe(
    'Set either VAULT_MCP_HTTP_TOKEN (a static token) or VAULT_MCP_OAUTH_ISSUER (OAuth access tokens), not both.',
  )
})

it('beyond loopback, neither a token nor OAuth: refused, naming both', () => {
  expect(refusal({}, '0.0.0.0').message).toContain(
    'or accept OAuth access tokens (VAULT_MCP_OAUTH_ISSUER and VAULT_MCP_OAUTH_RESOURCE)',
  )
})
