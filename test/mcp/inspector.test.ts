/**
 * The MCP Inspector's CLI (2.12, `--strict`) lists the built server's tools and finds no schema
 * portability issue: no `type: [a, b]` (one type per field), nothing a one-type dialect drops. A
 * server with such a schema is the control: the same command must report it, so a pass means the
 * check ran. The Inspector's package declares Node ≥ 22.19 (npm warns about it on Node 20), but its
 * CLI's listing and strict check run on Node 20 as on 22 and 24, so the test runs on every Node.
 */
import { execFile } from 'node:child_process'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'
import { mcpToolNames } from '../../harness/mcpToolNames.js'

const require = createRequire(import.meta.url)
const root = join(import.meta.dirname, '../..')
const inspector = join(
  dirname(require.resolve('@modelcontextprotocol/inspector/package.json')),
  'clients/launcher/build/index.js',
)

type Envelope = {
  result: { tools: { name: string }[] }
  schemaFindings?: { toolName: string; findings: { rule: string; path: string }[] }[]
}

/** `mcp-inspector --cli --strict --method tools/list` against a stdio server. */
async function inspectTools(server: string[]): Promise<{ envelope: Envelope; stderr: string }> {
  const { stdout, stderr } = await promisify(execFile)(
    process.execPath,
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
      ...server,
    ],
    { timeout: 30_000 },
  )
  return { envelope: JSON.parse(stdout) as Envelope, stderr }
}

it('mcp-inspector --cli --strict lists every tool with no schema finding', async () => {
  const [ours, control] = await Promise.all([
    inspectTools([join(root, 'dist/mcp/bin.js')]),
    inspectTools([join(root, 'test/support/fixtures/unportableMcpServer.mjs')]),
  ])
  // The control: a `type: ["string", "null"]` field is reported, as a warning on stderr too.
  expect(control.envelope.schemaFindings).toEqual([
    {
      toolName: 'unportable',
      findings: [expect.objectContaining({ rule: 'type-union', path: 'properties.pending' })],
    },
  ])
  expect(control.stderr).toMatch(/warning/i)

  expect(ours.envelope.result.tools.map((tool) => tool.name)).toEqual([...mcpToolNames])
  expect(ours.envelope.schemaFindings).toBeUndefined()
  expect(ours.stderr).not.toMatch(/portab|warning|error/i)
})
