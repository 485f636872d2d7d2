/**
 * The MCP Bundle that Claude Desktop installs with a double-click: `npm run build:mcpb`'s script packs
 * it, `mcpb validate` accepts its manifest, and the server starts from the unpacked bundle the way the
 * manifest tells a host to start it, with the form's (user_config) values in its environment.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mcpToolNames } from '../../harness/mcpToolNames.js'
import { connectStdio } from '../support/mcp.js'

const run = promisify(execFile)
const root = join(import.meta.dirname, '../..')
const mcpbCli = join(root, 'node_modules/@anthropic-ai/mcpb/dist/cli/cli.js')
const mcpb = (...args: string[]) => run(process.execPath, [mcpbCli, ...args], { cwd: root })

type Manifest = {
  version: string
  server: {
    entry_point: string
    mcp_config: { command: string; args: string[]; env: Record<string, string> }
  }
  tools: { name: string }[]
  user_config: Record<string, { default?: string | number }>
}

let work: string
let unpacked: string
let bundle: string

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'x402-vault-mcpb-'))
  bundle = join(work, 'x402-vault.mcpb')
  unpacked = join(work, 'unpacked')
  await run(process.execPath, [join(root, 'scripts/build-mcpb.mjs'), bundle], { cwd: root })
  await mcpb('unpack', bundle, unpacked)
}, 120_000)

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true })
})

describe('the MCP Bundle', () => {
  it('mcpb validate accepts the manifest; it is the package’s version and its tools', async () => {
    const { stdout } = await mcpb('validate', 'mcpb/manifest.json')
    expect(stdout).toContain('validation passes')
    const manifest = JSON.parse(
      await readFile(join(root, 'mcpb/manifest.json'), 'utf8'),
    ) as Manifest
    const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'))
    expect(manifest.version).toBe(pkg.version)
    expect(manifest.tools.map(({ name }) => name)).toEqual([...mcpToolNames])
    // The bundle carries the MCP bin and what it loads, not the whole CLI.
    expect((await stat(bundle)).size).toBeLessThan(1024 * 1024)
  })

  it('starts from the manifest’s entry point with the form’s values: a real MCP client lists the tools', async () => {
    const manifest = JSON.parse(await readFile(join(unpacked, 'manifest.json'), 'utf8')) as Manifest
    const { command, args, env } = manifest.server.mcp_config
    expect(command).toBe('node')
    expect(args).toEqual([`\${__dirname}/${manifest.server.entry_point}`])
    // What a host does: the user's answers (here, an RPC URL on which nothing listens) or the defaults.
    const answers: Record<string, string | number | undefined> = {
      ...Object.fromEntries(
        Object.entries(manifest.user_config).map(([key, { default: value }]) => [key, value]),
      ),
      rpc_url: 'http://127.0.0.1:9',
    }
    const fill = (text: string) =>
      text.replace(/\$\{(?:__dirname|user_config\.(\w+))\}/g, (_, key?: string) =>
        key ? String(answers[key]) : unpacked,
      )
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: args.map(fill),
      env: Object.fromEntries(Object.entries(env).map(([name, value]) => [name, fill(value)])),
      stderr: 'pipe',
    })
    const { client, stderr } = await connectStdio(transport)
    try {
      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name).sort()).toEqual(
        manifest.tools.map(({ name }) => name).sort(),
      )
    } finally {
      await client.close()
    }
    expect(stderr()).toBe('')
  })
})
