import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { BenchContext } from './context.js'
import { percentile, roundMs } from './stats.js'

/** The MCP server's cold start: the median, and every run. */
export type ColdStart = { medianMs: number; runsMs: number[] }

/**
 * Times the built MCP server's cold start as a client sees it: from spawning `dist/mcp/bin.js` to
 * the answer of `tools/list`. The server needs no RPC answer for that (it verifies the deployment
 * after the handshake, in the background).
 *
 * @param ctx - The devnet (its RPC URL) and the sample count (7, or 2 in a smoke run).
 * @returns The median and every run, in ms.
 * @example
 * const { medianMs } = await measureColdStart(ctx)
 */
export async function measureColdStart(ctx: BenchContext): Promise<ColdStart> {
  const runs = ctx.smoke ? 2 : 7
  const runsMs: number[] = []
  for (let run = 0; run < runs; run++) {
    ctx.progress(`MCP cold start: run ${run + 1} of ${runs}`)
    const started = performance.now()
    const client = new Client({ name: 'x402-vault-bench', version: '1.0.0' })
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [join(ctx.distDir, 'mcp/bin.js')],
        env: { BASE_SEPOLIA_RPC_URL: ctx.devnet.rpcUrl, MCP_LOG_LEVEL: 'error' },
        stderr: 'ignore',
      }),
    )
    await client.listTools()
    runsMs.push(performance.now() - started)
    await client.close()
  }
  return { medianMs: roundMs(percentile(runsMs, 50)), runsMs: runsMs.map(roundMs) }
}
