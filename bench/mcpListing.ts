import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { startHttpMcp } from '../harness/mcpHttp.js'
import type { BenchContext } from './context.js'
import { percentile, roundMs } from './stats.js'

/** What `tools/list` costs a client: its size, and the official v1 client's CPU. */
export type McpListing = {
  /** The 2025-era `tools/list` answer as the server sends it (a JSON-RPC body), in bytes. */
  bytes: number
  /** The v1 client's CPU in `listTools()` (parse, then compile every output schema), median. */
  v1ListToolsCpuMs: number
  /** Every run, each in a fresh client process. */
  v1ListToolsCpuRunsMs: number[]
  /** The same calls' wall time, median. */
  v1ListToolsWallMs: number
  /** The server's own time for those `tools/list` requests (its request log), median. */
  serverMs: number
}

const client = join(import.meta.dirname, 'v1ListToolsClient.ts')

/**
 * Measures the listing a client pays for: starts the built `x402-vault mcp --http`, reads its
 * `tools/list` answer's size, then runs the official MCP client v1 in fresh processes (as an app
 * starts it, nothing compiled yet), each calling `listTools()` once, and reads the server's own time
 * for the same requests from its log: both sides of one exchange, in one run.
 *
 * @param ctx - The devnet and the sample count (9 client processes, or 2 in a smoke run).
 * @returns The size, the client's CPU and the server's time.
 * @example
 * const { bytes, v1ListToolsCpuMs } = await measureMcpListing(ctx)
 */
export async function measureMcpListing(ctx: BenchContext): Promise<McpListing> {
  const runs = ctx.smoke ? 2 : 9
  const server = await startHttpMcp({
    PATH: process.env.PATH ?? '',
    BASE_SEPOLIA_RPC_URL: ctx.devnet.rpcUrl,
    MCP_LOG_LEVEL: 'info',
  })
  try {
    const response = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    const bytes = (await response.arrayBuffer()).byteLength
    if (response.status !== 200) throw new Error(`tools/list answered HTTP ${response.status}`)
    const cpu: number[] = []
    const wall: number[] = []
    const logged = server.requests().length
    for (let run = 0; run < runs; run++) {
      ctx.progress(`MCP listing: the v1 client's listTools, process ${run + 1} of ${runs}`)
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', client, server.url],
        { env: { PATH: process.env.PATH ?? '' } },
      )
      const result = JSON.parse(stdout) as { cpuMs: number; wallMs: number; tools: number }
      if (result.tools !== 6) throw new Error(`the v1 client listed ${result.tools} tools`)
      cpu.push(result.cpuMs)
      wall.push(result.wallMs)
    }
    const serverTimes = server
      .requests()
      .slice(logged)
      .filter((line) => line.method === 'tools/list')
      .map((line) => line.durationMs)
    return {
      bytes,
      v1ListToolsCpuMs: roundMs(percentile(cpu, 50)),
      v1ListToolsCpuRunsMs: cpu.map(roundMs),
      v1ListToolsWallMs: roundMs(percentile(wall, 50)),
      serverMs: roundMs(percentile(serverTimes, 50)),
    }
  } finally {
    await server.stop()
  }
}
