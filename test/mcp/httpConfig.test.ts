/** The Streamable HTTP settings of `x402-vault mcp --http`: the public mode's, and how they combine. */
import { describe, expect, it } from 'vitest'
import { McpConfigError } from '../../src/mcp/config.js'
import { loadMcpHttpConfig } from '../../src/mcp/httpConfig.js'

const token = 'token-0123456789abcdef'

function refusal(run: () => unknown): { variable: string; message: string } {
  try {
    run()
  } catch (error) {
    expect(error).toBeInstanceOf(McpConfigError)
    return { variable: (error as McpConfigError).variable, message: (error as Error).message }
  }
  throw new Error('the settings were accepted')
}

it('by default: private, no hosts besides the listen address, no proxy header trusted, 600 a minute per client and 6,000 in all', () => {
  expect(loadMcpHttpConfig({})).toEqual({
    host: '127.0.0.1',
    port: 8402,
    token: undefined,
    public: false,
    allowedOrigins: [],
    allowedHosts: [],
    trustProxyHeader: undefined,
    rateLimitPerMinute: 600,
    serverRateLimitPerMinute: 6_000,
    maxConcurrent: 128,
    requestTimeoutMs: 30_000,
  })
})

it('public (VAULT_MCP_PUBLIC=1 or --public) listens beyond loopback without a token, for the hosts it names', () => {
  const env = { VAULT_MCP_ALLOWED_HOSTS: ' MCP.example.com, mcp.example.com:8443,[::1]:8402 ' }
  for (const settings of [
    loadMcpHttpConfig({ ...env, VAULT_MCP_PUBLIC: '1' }, { host: '0.0.0.0' }),
    loadMcpHttpConfig({ ...env, VAULT_MCP_PUBLIC: 'true' }, { host: '0.0.0.0' }),
    loadMcpHttpConfig(env, { host: '0.0.0.0', public: true }),
  ]) {
    expect(settings).toMatchObject({
      host: '0.0.0.0',
      public: true,
      token: undefined,
      allowedHosts: ['mcp.example.com', 'mcp.example.com:8443', '[::1]:8402'],
    })
  }
  expect(loadMcpHttpConfig({ ...env, VAULT_MCP_PUBLIC: '0' }).public).toBe(false)
})

it('public refuses a token (it serves anyone on purpose) and needs its host names', () => {
  expect(
    refusal(() =>
      loadMcpHttpConfig({
        VAULT_MCP_PUBLIC: '1',
        VAULT_MCP_ALLOWED_HOSTS: 'mcp.example.com',
        VAULT_MCP_HTTP_TOKEN: token,
      }),
    ),
  ).toEqual({
    variable: 'VAULT_MCP_PUBLIC',
    message:
      'VAULT_MCP_PUBLIC (or --public) and VAULT_MCP_HTTP_TOKEN do not go together: a public server serves anyone without authentication, a private one only clients that authenticate. Unset one of them.',
  })
  const noHosts = refusal(() => loadMcpHttpConfig({}, { public: true }))
  expect(noHosts.variable).toBe('VAULT_MCP_ALLOWED_HOSTS')
  expect(noHosts.message).toContain('such as mcp.example.com')
  // Without public mode, beyond loopback the token stays required, and the message names the way out.
  const private_ = refusal(() => loadMcpHttpConfig({}, { host: '0.0.0.0' }))
  expect(private_.variable).toBe('VAULT_MCP_HTTP_TOKEN')
  expect(private_.message).toContain('--public')
})

it('refuses a public switch, a host, a header or a server limit that is not one, never echoing more than a short part', () => {
  for (const [env, variable] of [
    [{ VAULT_MCP_PUBLIC: 'yes' }, 'VAULT_MCP_PUBLIC'],
    [{ VAULT_MCP_ALLOWED_HOSTS: 'https://mcp.example.com' }, 'VAULT_MCP_ALLOWED_HOSTS'],
    [{ VAULT_MCP_ALLOWED_HOSTS: '*.example.com' }, 'VAULT_MCP_ALLOWED_HOSTS'],
    [{ VAULT_MCP_ALLOWED_HOSTS: 'mcp.example.com/mcp' }, 'VAULT_MCP_ALLOWED_HOSTS'],
    [{ VAULT_MCP_TRUST_PROXY: 'x forwarded for' }, 'VAULT_MCP_TRUST_PROXY'],
    [{ VAULT_MCP_TRUST_PROXY: 'Forwarded' }, 'VAULT_MCP_TRUST_PROXY'],
    [{ VAULT_MCP_SERVER_RATE_LIMIT: '0' }, 'VAULT_MCP_SERVER_RATE_LIMIT'],
  ] as const) {
    expect(refusal(() => loadMcpHttpConfig(env)).variable, JSON.stringify(env)).toBe(variable)
  }
  expect(
    loadMcpHttpConfig({
      VAULT_MCP_TRUST_PROXY: 'CF-Connecting-IP',
      VAULT_MCP_SERVER_RATE_LIMIT: '120',
    }),
  ).toMatchObject({ trustProxyHeader: 'cf-connecting-ip', serverRateLimitPerMinute: 120 })
})

describe('OAuth settings', () => {
  const oauthEnv = {
    VAULT_MCP_OAUTH_ISSUER: 'https://auth.example.com',
    VAULT_MCP_OAUTH_RESOURCE: 'https://mcp.example.com/mcp',
  }

  /** The error `loadMcpHttpConfig` throws for `env` (and `host`), as `{ message, variable }`. */
  function oauthRefusal(env: Record<string, string>, host?: string) {
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
    expect(
      oauthRefusal({ ...oauthEnv, VAULT_MCP_OAUTH_ISSUER: 'http://auth.example.com' }).message,
    ).toBe(
      'VAULT_MCP_OAUTH_ISSUER must be an https URL without query, fragment or credentials (http only on loopback), not "http://auth.example.com".',
    )
    expect(
      oauthRefusal({ ...oauthEnv, VAULT_MCP_OAUTH_RESOURCE: 'https://mcp.example.com/mcp#x' })
        .message,
    ).toMatch(/^VAULT_MCP_OAUTH_RESOURCE must be an https URL/)
  })

  it('refuses half a setting, a scope that cannot be quoted, and OAuth with a token', () => {
    expect(oauthRefusal({ VAULT_MCP_OAUTH_RESOURCE: 'https://mcp.example.com/mcp' })).toEqual({
      variable: 'VAULT_MCP_OAUTH_ISSUER',
      message:
        'VAULT_MCP_OAUTH_RESOURCE is set but VAULT_MCP_OAUTH_ISSUER is not: set the issuer URL of the authorization server whose access tokens this server accepts.',
    })
    expect(oauthRefusal({ VAULT_MCP_OAUTH_ISSUER: 'https://auth.example.com' }).message).toMatch(
      /^VAULT_MCP_OAUTH_RESOURCE is required with VAULT_MCP_OAUTH_ISSUER/,
    )
    expect(oauthRefusal({ ...oauthEnv, VAULT_MCP_OAUTH_SCOPES: 'vault:read "x"' }).message).toBe(
      'VAULT_MCP_OAUTH_SCOPES must be scope names separated by spaces (printable ASCII, no quote or backslash), not "\\"x\\"".',
    )
    expect(
      oauthRefusal({ ...oauthEnv, VAULT_MCP_HTTP_TOKEN: 'a-long-enough-token-0123456789' }).message,
    ).toBe(
      'Set either VAULT_MCP_HTTP_TOKEN (a static token) or VAULT_MCP_OAUTH_ISSUER (OAuth access tokens), not both.',
    )
  })

  it('beyond loopback, neither a token nor OAuth: refused, naming both', () => {
    expect(oauthRefusal({}, '0.0.0.0').message).toContain(
      'accept OAuth access tokens (VAULT_MCP_OAUTH_ISSUER and VAULT_MCP_OAUTH_RESOURCE)',
    )
  })

  it('public mode takes no OAuth either: refused at start, naming both', () => {
    expect(
      oauthRefusal({
        ...oauthEnv,
        VAULT_MCP_PUBLIC: '1',
        VAULT_MCP_ALLOWED_HOSTS: 'mcp.example.com',
      }),
    ).toEqual({
      variable: 'VAULT_MCP_PUBLIC',
      message:
        'VAULT_MCP_PUBLIC (or --public) and VAULT_MCP_OAUTH_ISSUER do not go together: a public server serves anyone without authentication, a private one only clients that authenticate. Unset one of them.',
    })
  })
})
