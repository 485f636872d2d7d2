import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { BenchContext } from './context.js'
import { percentile, roundMs } from './stats.js'

/** Fresh-process timings, in ms: medians and every run. */
export type ImportTime = {
  sdkImportMs: number
  nodeStartMs: number
  runs: { sdkImportMs: number[]; nodeStartMs: number[] }
}

/**
 * Times, from spawn to exit, a fresh `node -e "await import('<root>/dist/index.js')"` (the SDK's
 * `import('x402-vault')`) and a bare `node -e 0`, interleaved so that a noisy machine slows both
 * alike. Both include Node's own start: the difference is what loading the SDK costs.
 *
 * @param ctx - The built package and the sample count (7, or 1 in a smoke run).
 * @returns The medians and every run.
 * @example
 * const { sdkImportMs, nodeStartMs } = measureImportTime(ctx)
 */
export function measureImportTime(ctx: BenchContext): ImportTime {
  const runs = ctx.smoke ? 1 : 7
  const entry = pathToFileURL(join(ctx.distDir, 'index.js')).href
  const importArgs = ['--input-type=module', '-e', `await import(${JSON.stringify(entry)})`]
  const sdk: number[] = []
  const node: number[] = []
  for (let run = 0; run < runs; run++) {
    ctx.progress(`import time: run ${run + 1} of ${runs}`)
    node.push(timeNode(['-e', '0']))
    sdk.push(timeNode(importArgs))
  }
  return {
    sdkImportMs: roundMs(percentile(sdk, 50)),
    nodeStartMs: roundMs(percentile(node, 50)),
    runs: { sdkImportMs: sdk.map(roundMs), nodeStartMs: node.map(roundMs) },
  }
}

/**
 * Runs Node with `args` in a clean environment and returns the wall time to its exit.
 *
 * @param args - Node's arguments, such as `['-e', '0']`.
 * @returns The time from spawn to exit, in ms.
 * @example
 * const nodeStartMs = timeNode(['-e', '0'])
 */
export function timeNode(args: string[]): number {
  const started = performance.now()
  // A clean environment: no NODE_OPTIONS (tsx's loader) in the measured process.
  const result = spawnSync(process.execPath, args, { env: {}, stdio: ['ignore', 'ignore', 'pipe'] })
  const elapsed = performance.now() - started
  if (result.status !== 0) {
    throw new Error(`node ${args.join(' ')} failed: ${result.stderr.toString('utf8').trim()}`)
  }
  return elapsed
}
