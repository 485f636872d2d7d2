import { readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runCli } from '../../harness/runCli.js'
import { tempFolder } from '../../harness/tempFolder.js'
import { createLogger, loadMcpConfig, McpConfigError } from '../../src/mcp/index.js'
import { redactLogText } from '../../src/mcp/logger.js'
import { vaultChains } from '../../src/sdk/chains.js'

async function configError(env: Record<string, string>): Promise<McpConfigError> {
  try {
    await loadMcpConfig(env)
  } catch (error) {
    expect(error).toBeInstanceOf(McpConfigError)
    expect((error as Error).message).not.toContain('\n')
    return error as McpConfigError
  }
  throw new Error('expected an McpConfigError')
}

describe('loadMcpConfig', () => {
  it('applies the documented defaults (docs/mcp.md); an empty variable counts as unset', async () => {
    const expected = {
      chain: 'base-sepolia',
      rpcUrl: 'https://sepolia.base.org',
      maxPlanUsdc: 100_000_000n,
      addresses: undefined,
      logLevel: 'info',
    }
    expect(await loadMcpConfig({})).toEqual(expected)
    expect(
      await loadMcpConfig({
        BASE_SEPOLIA_RPC_URL: '',
        VAULT_CHAIN: '',
        VAULT_MCP_MAX_PLAN_USDC: '',
        VAULT_ADDRESSES: '',
        MCP_LOG_LEVEL: '',
      }),
    ).toEqual(expected)
  })

  it('reads each variable', async () => {
    const dir = await tempFolder('x402-vault-mcp-')
    const file = join(dir, 'addresses.json')
    const addresses = vaultChains['base-sepolia'].addresses
    await writeFile(file, JSON.stringify({ chain: 'base-sepolia', chainId: 84532, ...addresses }))
    expect(
      await loadMcpConfig({
        BASE_SEPOLIA_RPC_URL: 'http://127.0.0.1:8545',
        VAULT_CHAIN: 'base-sepolia',
        VAULT_MCP_MAX_PLAN_USDC: '2500.5',
        VAULT_ADDRESSES: file,
        MCP_LOG_LEVEL: 'error',
      }),
    ).toEqual({
      chain: 'base-sepolia',
      rpcUrl: 'http://127.0.0.1:8545',
      maxPlanUsdc: 2_500_500_000n,
      addresses,
      logLevel: 'error',
    })
  })

  it('reads VAULT_CHAIN case-insensitively, and names an unknown chain as such', async () => {
    for (const name of ['BASE-SEPOLIA', 'Base-Sepolia', ' base-sepolia ']) {
      expect((await loadMcpConfig({ VAULT_CHAIN: name })).chain).toBe('base-sepolia')
    }
    expect((await configError({ VAULT_CHAIN: 'BASE' })).message).toContain(
      'does not serve Base mainnet yet',
    )
    const unknown = await configError({ VAULT_CHAIN: 'sepolia' })
    expect(unknown.message).toContain('VAULT_CHAIN must be base-sepolia')
    expect(unknown.message).toContain('not a chain this server knows')
    expect(unknown.message).not.toContain('mainnet')
  })

  it('names the variable at fault', async () => {
    expect((await configError({ VAULT_CHAIN: 'base' })).variable).toBe('VAULT_CHAIN')
    expect((await configError({ VAULT_MCP_MAX_PLAN_USDC: '0' })).message).toContain(
      'greater than 0',
    )
    expect((await configError({ VAULT_MCP_MAX_PLAN_USDC: '-1' })).message).toContain(
      'signs are not allowed',
    )
    expect((await configError({ MCP_LOG_LEVEL: 'DEBUG' })).variable).toBe('MCP_LOG_LEVEL')
    expect((await configError({ BASE_SEPOLIA_RPC_URL: 'not a url' })).variable).toBe(
      'BASE_SEPOLIA_RPC_URL',
    )
    const file = join(tmpdir(), 'x402-missing', 'a.json')
    const error = await configError({ VAULT_ADDRESSES: file })
    expect(error.variable).toBe('VAULT_ADDRESSES')
    expect(error.message).toContain(file)
    expect(error.message).not.toContain('relative')
  })

  it('a relative VAULT_ADDRESSES that cannot be read: says which working directory it was resolved against', async () => {
    const error = await configError({ VAULT_ADDRESSES: '.devnet/addresses.json' })
    expect(error.variable).toBe('VAULT_ADDRESSES')
    expect(error.message).toBe(
      `VAULT_ADDRESSES: Cannot read the addresses file .devnet/addresses.json: the file does not exist. The path is relative, so it was resolved against the server's working directory, ${process.cwd()}, which the MCP client chose: give an absolute path.`,
    )
    expect(error.details).toMatchObject({ workingDirectory: process.cwd() })
  })

  it('`x402-vault mcp` names the working directory the client started it in, on one line, exit 1', async () => {
    const cwd = await tempFolder('x402-vault-client-cwd-')
    const { code, stderr } = await runCli(
      ['mcp'],
      { VAULT_ADDRESSES: '.devnet/addresses.json' },
      { cwd },
    )
    expect(code).toBe(1)
    expect(stderr.trimEnd().split('\n')).toHaveLength(1)
    expect(stderr).toContain(`resolved against the server's working directory, ${cwd}`)
  })
})

describe('the MCP Bundle’s form', () => {
  it('asks for a cap the server takes: its minimum and its default start it, anything below is refused', async () => {
    const manifest = JSON.parse(
      await readFile(join(import.meta.dirname, '../../mcpb/manifest.json'), 'utf8'),
    ) as { user_config: { max_plan_usdc: { min: number; default: number } } }
    const { min, default: fallback } = manifest.user_config.max_plan_usdc
    // The host passes the form's number in the environment as its decimal text.
    for (const value of [min, fallback]) {
      await expect(loadMcpConfig({ VAULT_MCP_MAX_PLAN_USDC: String(value) })).resolves.toBeTruthy()
    }
    expect(min).toBeGreaterThan(0)
    for (const below of [0, min / 2]) {
      const error = await configError({ VAULT_MCP_MAX_PLAN_USDC: String(below) })
      expect(error.variable).toBe('VAULT_MCP_MAX_PLAN_USDC')
    }
  })
})

describe('the logger', () => {
  it('writes each line at or above its level, redacted, on one line', () => {
    const lines: string[] = []
    const logger = createLogger('warn', (line) => lines.push(line))
    logger.debug('hidden')
    logger.info('hidden')
    logger.warn('RPC https://base-sepolia.g.alchemy.com/v2/SECRETKEY?x=1 failed\n  twice')
    logger.error('done')
    expect(lines).toEqual([
      '[x402-vault-mcp] warn: RPC https://base-sepolia.g.alchemy.com failed twice\n',
      '[x402-vault-mcp] error: done\n',
    ])
  })

  it('leaves a validation dump readable: "keys" and quoted names are no secret', () => {
    const dump =
      '[ { "code": "unrecognized_keys", "keys": [ "extra" ], "path": [], "message": "Unrecognized key: \\"extra\\"" } ]'
    expect(redactLogText(dump)).toBe(dump)
    expect(redactLogText('{ "progressToken": {} }')).toBe('{ "progressToken": {} }')
    expect(redactLogText('"apiKey": "abc123", token=xyz')).toBe(
      '"apiKey": "(redacted)", token=(redacted)',
    )
  })

  it('redacts URL paths and queries, bearer tokens, key-like values and private keys', () => {
    const key = `0x${'1f'.repeat(32)}`
    const text = redactLogText(
      `url=https://user:pw@rpc.example/v2/AAA?apikey=BBB Authorization: Bearer CCC.DDD api_key=EEE "privateKey": "${key}" token: FFF`,
    )
    for (const secret of ['AAA', 'BBB', 'CCC', 'DDD', 'EEE', 'FFF', 'pw@', key.slice(2)]) {
      expect(text, secret).not.toContain(secret)
    }
    expect(text).toContain('https://rpc.example')
  })
})
