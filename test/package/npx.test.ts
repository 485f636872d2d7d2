/**
 * The registration most users write, exactly: command `npx`, args `-y x402-vault@beta`, run by a real
 * MCP client with an empty npm cache against a registry on loopback that holds this package's tarball
 * under `beta` and serves every other package as the public registry does (its real metadata,
 * recorded). So the first start is seen as users meet it: what npx asks the registry for, not only
 * what it installs. A declared peer, even an optional one, made npx fetch the full metadata of each
 * and of their own peers (17 documents, 23 MB, one after the other) before the server started.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type LocalRegistry, packPackage, startLocalRegistry } from '../../harness/localRegistry.js'
import { mcpToolNames } from '../../harness/mcpToolNames.js'
import { connectStdio } from '../support/mcp.js'

let work: string
let registry: LocalRegistry | undefined

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'x402-vault-npx-'))
  const [packed, started] = await Promise.all([packPackage(work), startLocalRegistry()])
  registry = started
  await registry.publish(packed.tarball, 'beta')
  registry.takeRequests()
}, 180_000)

afterAll(async () => {
  await registry?.stop()
  if (work) await rm(work, { recursive: true, force: true })
})

describe('npx -y x402-vault@beta, from a registry, with an empty cache', () => {
  it('serves MCP: a real MCP client lists every tool; npx fetched and installed the package alone', async () => {
    if (!registry) throw new Error('no registry')
    const cache = join(work, 'npm-cache')
    const transport = new StdioClientTransport({
      command: 'npx',
      args: ['-y', 'x402-vault@beta'],
      cwd: work,
      // Nothing listens on port 9: listing the tools needs no RPC.
      env: {
        ...registry.npmEnv(cache),
        BASE_SEPOLIA_RPC_URL: 'http://127.0.0.1:9',
        MCP_LOG_LEVEL: 'error',
      },
      stderr: 'pipe',
    })
    const { client } = await connectStdio(transport)
    try {
      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name).sort()).toEqual([...mcpToolNames].sort())
    } finally {
      await client.close()
    }
    // npx keeps what it installed under `_npx/<hash>/node_modules` in the cache.
    const [install] = await readdir(join(cache, '_npx'))
    const installed = await readdir(join(cache, '_npx', install as string, 'node_modules'))
    expect(installed.filter((name) => !name.startsWith('.'))).toEqual(['x402-vault'])
    // Nothing but this package's metadata and tarball: no peer's metadata, however optional.
    const asked = registry
      .takeRequests()
      .map(({ kind, packageName }) => `${kind} ${packageName ?? ''}`)
    expect([...new Set(asked)].sort()).toEqual(['packument x402-vault', 'tarball x402-vault'])
  }, 120_000)
})
