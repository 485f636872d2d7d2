import { spawn } from 'node:child_process'
import { join } from 'node:path'
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
}

/**
 * Times the built MCP server's cold start as a client sees it: from spawning `dist/mcp/bin.js` to
 * the answer of `tools/list`, with `node -e 0` (in a clean environment, as the import time's) timed
 * between runs for the ratio.
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
    nodeRunsMs.push(timeNode(['-e', '0']))
    const { listedMs, firstCallMs: called } = await timeServerStart(ctx)
    runsMs.push(listedMs)
    firstCallMs.push(called)
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

/**
 * One start of the built server, driven over its stdin and stdout by the smallest client there is
 * (one JSON-RPC message per line, as every MCP client writes them), so that the time is the server's
 * and not a client library's: `initialize`, `notifications/initialized` and `tools/list`, then
 * `vault_status`.
 */
function timeServerStart(ctx: BenchContext): Promise<{ listedMs: number; firstCallMs: number }> {
  const started = performance.now()
  const child = spawn(process.execPath, [join(ctx.distDir, 'mcp/bin.js')], {
    env: {
      PATH: process.env.PATH,
      BASE_SEPOLIA_RPC_URL: ctx.devnet.rpcUrl,
      MCP_LOG_LEVEL: 'error',
    },
    stdio: ['pipe', 'pipe', 'ignore'],
  })
  const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`)
  return new Promise((resolve, reject) => {
    let listedMs = 0
    let buffered = ''
    child.on('error', reject)
    child.on('exit', (code) => {
      if (!listedMs) reject(new Error(`the MCP server exited (${code}) before it answered`))
    })
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8')
      for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
        const message = JSON.parse(buffered.slice(0, end)) as { id?: number; error?: unknown }
        buffered = buffered.slice(end + 1)
        if (message.error) reject(new Error(`the MCP server answered ${JSON.stringify(message)}`))
        if (message.id === 1) {
          send({ jsonrpc: '2.0', method: 'notifications/initialized' })
          send({ jsonrpc: '2.0', id: 2, method: 'tools/list' })
        } else if (message.id === 2) {
          listedMs = performance.now() - started
          send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'vault_status' } })
        } else if (message.id === 3) {
          resolve({ listedMs, firstCallMs: performance.now() - started })
          child.stdin.end()
        }
      }
    })
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'x402-vault-bench', version: '1.0.0' },
      },
    })
  })
}
