import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { BenchContext } from './context.js'
import { percentile, roundMs } from './stats.js'

/** The MCP server's cold start beside Node's own, medians and every run, in ms. */
export type ColdStart = {
  /** Spawn → `tools/list` answered. */
  medianMs: number
  runsMs: number[]
  /** Spawn → exit of `node -e 0`, measured between the server's runs. */
  nodeMedianMs: number
  nodeRunsMs: number[]
  /** `medianMs` / `nodeMedianMs`. */
  ratio: number
  /** Spawn → the first `vault_status` answered: the start plus the rest of the server and one read. */
  firstCallMedianMs: number
}

/**
 * Times the built MCP server's cold start as a client sees it: from spawning `dist/mcp/bin.js` to
 * the answer of `tools/list`, with `node -e 0` timed between runs on the same machine for the ratio.
 * The server needs no RPC answer for the listing (it verifies the deployment after the handshake, in
 * the background). Each run then calls `vault_status`, for the time to a first answer from the chain.
 *
 * @param ctx - The devnet (its RPC URL) and the sample count (9, or 3 in a smoke run).
 * @returns The medians, the ratio and every run, in ms.
 * @example
 * const { medianMs, ratio } = await measureColdStart(ctx)
 */
export async function measureColdStart(ctx: BenchContext): Promise<ColdStart> {
  const runs = ctx.smoke ? 3 : 9
  const runsMs: number[] = []
  const nodeRunsMs: number[] = []
  const firstCallMs: number[] = []
  for (let run = 0; run < runs; run++) {
    ctx.progress(`MCP cold start: run ${run + 1} of ${runs}`)
    nodeRunsMs.push(await timeNodeStart())
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
    await client.callTool({ name: 'vault_status', arguments: {} })
    firstCallMs.push(performance.now() - started)
    await client.close()
  }
  const medianMs = percentile(runsMs, 50)
  const nodeMedianMs = percentile(nodeRunsMs, 50)
  return {
    medianMs: roundMs(medianMs),
    runsMs: runsMs.map(roundMs),
    nodeMedianMs: roundMs(nodeMedianMs),
    nodeRunsMs: nodeRunsMs.map(roundMs),
    ratio: Math.round((medianMs / nodeMedianMs) * 100) / 100,
    firstCallMedianMs: roundMs(percentile(firstCallMs, 50)),
  }
}

/** Spawn → exit of `node -e 0`, in ms. */
function timeNodeStart(): Promise<number> {
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' })
    child.on('error', reject)
    child.on('exit', () => resolve(performance.now() - started))
  })
}
