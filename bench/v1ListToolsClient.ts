/**
 * One fresh process of the official MCP TypeScript client v1 (`@modelcontextprotocol/sdk`), as an app
 * starts it: connects to the MCP server at the URL given, calls `listTools()` once and prints one JSON
 * line, `{ cpuMs, wallMs, tools }`: the CPU this process spent in the call (the client parses the
 * listing and compiles every output schema with Ajv), and its wall time.
 *
 *   node --import tsx bench/v1ListToolsClient.ts http://127.0.0.1:8402/mcp
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'

const url = process.argv[2]
if (!url) throw new Error('usage: v1ListToolsClient.ts <MCP endpoint URL>')
const client = new Client({ name: 'x402-vault-bench-v1', version: '1.0.0' })
await client.connect(new StreamableHTTPClientTransport(new URL(url)))
const before = process.cpuUsage()
const started = performance.now()
const { tools } = await client.listTools()
const wallMs = performance.now() - started
const cpu = process.cpuUsage(before)
process.stdout.write(
  `${JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000, wallMs, tools: tools.length })}\n`,
)
await client.close()
