/** The Streamable HTTP settings of `x402-vault mcp --http`: the public mode's, and how they combine. */
import { expect, it } from 'vitest'
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
      'VAULT_MCP_PUBLIC (or --public) and VAULT_MCP_HTTP_TOKEN do not go together: a public server serves anyone without a token, a private one only clients with it. Unset one of them.',
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
