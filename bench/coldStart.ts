import { join } from 'node:path'
import { spawnJsonLines } from '../harness/jsonLinesProcess.js'
import type { BenchContext } from './context.js'
import { timeNode } from './importTime.js'
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
  /**
   * The same start through the primary bin with no sub-command (`x402-vault`, as `npx -y x402-vault`
   * runs it for an MCP client): spawn → `tools/list` answered, median and every run, and its ratio.
   */
  primaryBin: { medianMs: number; runsMs: number[]; ratio: number }
}

/**
 * Times the built MCP server's cold start as a client sees it: from spawning `dist/mcp/bin.js`
 * (`x402-vault-mcp`), and `dist/cli/index.js` with no sub-command (`x402-vault`), to the answer of
 * `tools/list`, with `node -e 0` (in a clean environment, as the import time's) timed between runs for
 * the ratio.
 * The server needs no RPC answer for the listing (it verifies the deployment after the handshake, in
 * the background). Each run then calls `vault_status`, for the time to a first answer from the chain.
 *
 * @param ctx - The devnet (its RPC URL) and the sample count (9, or 1 in a smoke run).
 * @returns The medians, the ratio and every run, in ms.
 * @example
 * const { medianMs, ratio } = await measureColdStart(ctx)
 */
export async function measureColdStart(ctx: BenchContext): Promise<ColdStart> {
  const runs = ctx.smoke ? 1 : 9
  const runsMs: number[] = []
  const nodeRunsMs: number[] = []
  const firstCallMs: number[] = []
  const primaryRunsMs: number[] = []
  for (let run = 0; run < runs; run++) {
    ctx.progress(`MCP cold start: run ${run + 1} of ${runs}`)
    nodeRunsMs.push(timeNode(['-e', '0']))
    const { listedMs, firstCallMs: called } = await timeServerStart(ctx, 'mcp/bin.js')
    runsMs.push(listedMs)
    firstCallMs.push(called)
    primaryRunsMs.push((await timeServerStart(ctx, 'cli/index.js')).listedMs)
  }
  const medianMs = percentile(runsMs, 50)
  const nodeMedianMs = percentile(nodeRunsMs, 50)
  const primaryMedianMs = percentile(primaryRunsMs, 50)
  return {
    medianMs: roundMs(medianMs),
    runsMs: runsMs.map(roundMs),
    nodeMedianMs: roundMs(nodeMedianMs),
    nodeRunsMs: nodeRunsMs.map(roundMs),
    ratio: Math.round((medianMs / nodeMedianMs) * 100) / 100,
    firstCallMedianMs: roundMs(percentile(firstCallMs, 50)),
    primaryBin: {
      medianMs: roundMs(primaryMedianMs),
      runsMs: primaryRunsMs.map(roundMs),
      ratio: Math.round((primaryMedianMs / nodeMedianMs) * 100) / 100,
    },
  }
}

/**
 * One start of the built server, driven over its stdin and stdout by the smallest client there is
 * (one JSON-RPC message per line, as every MCP client writes them), so that the time is the server's
 * and not a client library's: `initialize`, `notifications/initialized` and `tools/list`, then
 * `vault_status`.
 */
async function timeServerStart(
  ctx: BenchContext,
  bin: 'mcp/bin.js' | 'cli/index.js',
): Promise<{ listedMs: number; firstCallMs: number }> {
  const started = performance.now()
  const server = spawnJsonLines([join(ctx.distDir, bin)], {
    PATH: process.env.PATH,
    BASE_SEPOLIA_RPC_URL: ctx.devnet.rpcUrl,
    MCP_LOG_LEVEL: 'error',
  })
  // Rejects if the server exits; once it has answered everything, its exit is expected.
  const exited = server.exited.then((code) => {
    throw new Error(`the MCP server exited (${code}) before it answered`)
  })
  exited.catch(() => {})
  const answer = async (id: number) => {
    const message = await Promise.race([server.next(), exited])
    if (message.id !== id || message.error) {
      throw new Error(`the MCP server answered ${JSON.stringify(message)}`)
    }
  }
  try {
    server.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'x402-vault-bench', version: '1.0.0' },
      },
    })
    await answer(1)
    server.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    server.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' })
    await answer(2)
    const listedMs = performance.now() - started
    server.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'vault_status' } })
    await answer(3)
    return { listedMs, firstCallMs: performance.now() - started }
  } finally {
    // Wait for the exit: a server still shutting down would share the CPU with the next start.
    server.child.stdin.end()
    await server.exited
  }
}
