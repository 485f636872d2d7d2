import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { mcpToolNames } from '../../harness/mcpToolNames.js'
import { tempFolder } from '../../harness/tempFolder.js'
import { vaultChains } from '../../src/sdk/chains.js'
import { connectMcp } from '../support/mcp.js'

const root = join(import.meta.dirname, '../..')
const examples = join(root, 'examples/mcp')
const allowedEnv = [
  'BASE_SEPOLIA_RPC_URL',
  'VAULT_CHAIN',
  'VAULT_MCP_MAX_PLAN_USDC',
  'VAULT_ADDRESSES',
  'MCP_LOG_LEVEL',
]

type ServerEntry = { command: string; args: string[]; env: Record<string, string> }

async function jsonServers(file: string): Promise<ServerEntry[]> {
  const config = JSON.parse(await readFile(join(examples, file), 'utf8')) as Record<
    string,
    Record<string, ServerEntry>
  >
  return Object.values(config.mcpServers ?? config.mcp_servers ?? {})
}

/** The `[mcp_servers.vault]` entry of the Codex TOML example (flat keys, string values only). */
async function codexTomlServer(): Promise<ServerEntry> {
  const text = await readFile(join(examples, 'codex.config.toml'), 'utf8')
  const value = (key: string) => new RegExp(`^${key} = (.+)$`, 'm').exec(text)?.[1] ?? ''
  const env = text.split('[mcp_servers.vault.env]')[1] ?? ''
  return {
    command: JSON.parse(value('command')),
    args: JSON.parse(value('args')),
    env: Object.fromEntries(
      [...env.matchAll(/^(\w+) = "(.*)"$/gm)].map(([, key, val]) => [key as string, val as string]),
    ),
  }
}

/** Runs what `npx -y x402-vault@beta` runs, with the example's env, and lists the tools. */
async function listTools(entry: ServerEntry, addressesFile: string): Promise<string[]> {
  const env = { ...entry.env }
  if (env.VAULT_ADDRESSES) env.VAULT_ADDRESSES = addressesFile
  // Tests stay offline: nothing listens on port 9 (listing the tools needs no RPC).
  env.BASE_SEPOLIA_RPC_URL = 'http://127.0.0.1:9'
  const mcp = await connectMcp(env, { viaCli: true, cliArgs: [] })
  try {
    return (await mcp.client.listTools()).tools.map((tool) => tool.name)
  } finally {
    await mcp.close()
  }
}

describe('the MCP client configurations in examples/mcp and the MCP guide', () => {
  it('each starts `npx -y x402-vault@beta` with only the server’s variables, and it lists every tool', async () => {
    // The devnet example's VAULT_ADDRESSES is a placeholder path: a real file stands in for it.
    const addressesFile = join(await tempFolder('x402-vault-examples-'), 'a.json')
    await writeFile(
      addressesFile,
      JSON.stringify({ chain: 'base-sepolia', ...vaultChains['base-sepolia'].addresses }),
    )

    const entries: ServerEntry[] = [await codexTomlServer()]
    for (const file of [
      'claude_desktop_config.json',
      'claude-code.mcp.json',
      'cursor.mcp.json',
      'codex.mcp.json',
      'devnet.mcp.json',
    ]) {
      entries.push(...(await jsonServers(file)))
    }
    expect(entries).toHaveLength(6)
    for (const entry of entries) {
      expect(entry.command).toBe('npx')
      expect(entry.args).toEqual(['-y', 'x402-vault@beta'])
      for (const key of Object.keys(entry.env)) expect(allowedEnv).toContain(key)
      expect(await listTools(entry, addressesFile)).toHaveLength(mcpToolNames.length)
    }
  })

  it('the MCP guide shows the Claude Code command and every example file', async () => {
    const readme = await readFile(join(root, 'docs/mcp.md'), 'utf8')
    expect(readme).toContain(
      'claude mcp add --transport stdio vault --env BASE_SEPOLIA_RPC_URL=https://sepolia.base.org --env MCP_LOG_LEVEL=error -- npx -y x402-vault@beta\n',
    )
    expect(readme).toContain('claude mcp list')
    for (const file of [
      'claude_desktop_config.json',
      'claude-code.mcp.json',
      'cursor.mcp.json',
      'codex.config.toml',
      'codex.mcp.json',
      'devnet.mcp.json',
    ]) {
      expect(readme).toContain(`examples/mcp/${file}`)
    }
  })

  it('the devnet example and the MCP guide agree on the port: the guide starts the devnet on it', async () => {
    const [entry] = await jsonServers('devnet.mcp.json')
    const port = new URL(entry?.env.BASE_SEPOLIA_RPC_URL ?? '').port
    expect(port).toBe('8545')
    const guide = await readFile(join(root, 'docs/mcp.md'), 'utf8')
    expect(guide).toContain(
      `npx -y -p x402-vault@beta -p @foundry-rs/anvil x402-vault devnet --port ${port}\n`,
    )
    // The client starts the server in a working directory of its own: the path must be absolute.
    expect(entry?.env.VAULT_ADDRESSES).toMatch(/^\//)
  })
})
