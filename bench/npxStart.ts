import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import {
  bytesUnder,
  packPackage,
  type RegistryRequest,
  startLocalRegistry,
} from '../harness/localRegistry.js'
import type { BenchContext } from './context.js'
import { timeNode } from './importTime.js'
import { percentile, roundMs } from './stats.js'

/** What one start asked the registry for. */
export type NpxFetched = {
  /** Each package document (packument): full (`application/json`) or abbreviated, and its size. */
  packuments: { name: string; full: boolean; bytes: number }[]
  tarballs: { name: string; bytes: number }[]
  /** Everything it fetched, in bytes. */
  bytes: number
}

/** `npx -y x402-vault@beta` as an MCP client starts it: medians, every run, and what npx fetched. */
export type NpxStart = {
  /** An empty npm cache: npx fetches the package from the registry and installs it. Median. */
  coldMs: number
  /** The slowest of those runs. */
  coldMaxMs: number
  /** The same cache again: npx asks the registry for `@beta`, then runs what it has. Median. */
  warmMs: number
  /** `node -e 0`, timed before each of the runs above, median: how fast this machine is right now. */
  nodeMs: number
  /** The size of what npx installed for the bin (its `node_modules`), in MB. */
  installedMb: number
  /** What one cold start asked the registry for. */
  coldFetched: NpxFetched
  /** What one warm start asked the registry for. */
  warmFetched: NpxFetched
  /**
   * The first cold start, not counted above: it recorded any other package's answer from the public
   * registry, so its time includes the network, while the runs above get the recording.
   */
  firstRunMs: number
  /** Where other packages' metadata came from, such as `https://registry.npmjs.org/`. */
  upstream: string
  /** The machine's 1-minute load average when the runs started and when they ended. */
  loadAverage: { before: number; after: number }
  coldRunsMs: number[]
  warmRunsMs: number[]
  nodeRunsMs: number[]
}

/**
 * Times `npx -y x402-vault@beta`, from spawning npx to the answer of `tools/list`, as users meet it:
 * against a registry on loopback that serves the packed package under `beta` and any other package's
 * real metadata at its real size (recorded from the registry npm is configured with, see
 * harness/localRegistry.ts), with `node -e 0` timed before each run. The cold runs each start
 * from an empty npm cache, after a first one that records; the warm ones reuse the last cold cache.
 * Skipped in a smoke run: `test/package/npx.test.ts` starts the same command in `npm test`.
 *
 * @param ctx - The sample count (9 cold, 5 warm) and the built package to pack.
 * @returns The medians, the slowest cold run, every run, what npx fetched and the installed size;
 *   `null` in a smoke run.
 * @example
 * const npx = await measureNpxStart(ctx)
 */
export async function measureNpxStart(ctx: BenchContext): Promise<NpxStart | null> {
  if (ctx.smoke) return null
  const coldRuns = 9
  const warmRuns = 5
  const work = await mkdtemp(join(tmpdir(), 'x402-vault-bench-npx-'))
  const [packed, registry] = await Promise.all([packPackage(work), startLocalRegistry()])
  try {
    await registry.publish(packed.tarball, 'beta')
    registry.takeRequests()
    const start = async (cache: string) => {
      const started = performance.now()
      const client = new Client({ name: 'x402-vault-bench', version: '1.0.0' })
      await client.connect(
        new StdioClientTransport({
          command: 'npx',
          args: ['-y', 'x402-vault@beta'],
          cwd: work,
          env: { ...registry.npmEnv(cache), BASE_SEPOLIA_RPC_URL: ctx.devnet.rpcUrl },
          stderr: 'ignore',
        }),
      )
      await client.listTools()
      const ms = performance.now() - started
      await client.close()
      return { ms, fetched: fetchedBy(registry.takeRequests()) }
    }
    const before = loadavg()[0] ?? 0
    ctx.progress('npx -y x402-vault@beta, empty cache: a first run, which records the registry')
    const first = await start(join(work, 'cache-first'))
    const coldRunsMs: number[] = []
    const warmRunsMs: number[] = []
    const nodeRunsMs: number[] = []
    let cache = ''
    let coldFetched = first.fetched
    for (let run = 0; run < coldRuns; run++) {
      ctx.progress(`npx -y x402-vault@beta, empty cache: run ${run + 1} of ${coldRuns}`)
      cache = join(work, `cache-${run}`)
      nodeRunsMs.push(timeNode(['-e', '0']))
      const cold = await start(cache)
      coldRunsMs.push(cold.ms)
      coldFetched = cold.fetched
    }
    let warmFetched = coldFetched
    for (let run = 0; run < warmRuns; run++) {
      ctx.progress(`npx -y x402-vault@beta, warm cache: run ${run + 1} of ${warmRuns}`)
      nodeRunsMs.push(timeNode(['-e', '0']))
      const warm = await start(cache)
      warmRunsMs.push(warm.ms)
      warmFetched = warm.fetched
    }
    const after = loadavg()[0] ?? 0
    // npx installs into `_npx/<hash>/node_modules` in its cache.
    const [install = ''] = await readdir(join(cache, '_npx'))
    const installedMb = (await bytesUnder(join(cache, '_npx', install, 'node_modules'))) / 1e6
    return {
      coldMs: roundMs(percentile(coldRunsMs, 50)),
      coldMaxMs: roundMs(Math.max(...coldRunsMs)),
      warmMs: roundMs(percentile(warmRunsMs, 50)),
      nodeMs: roundMs(percentile(nodeRunsMs, 50)),
      installedMb: Math.round(installedMb * 100) / 100,
      coldFetched,
      warmFetched,
      firstRunMs: roundMs(first.ms),
      upstream: registry.upstream,
      loadAverage: { before: Math.round(before * 100) / 100, after: Math.round(after * 100) / 100 },
      coldRunsMs: coldRunsMs.map(roundMs),
      warmRunsMs: warmRunsMs.map(roundMs),
      nodeRunsMs: nodeRunsMs.map(roundMs),
    }
  } finally {
    await registry.stop()
    await rm(work, { recursive: true, force: true })
  }
}

/** The package documents and tarballs among a start's requests, with their sizes. */
function fetchedBy(requests: RegistryRequest[]): NpxFetched {
  const packuments = requests
    .filter((request) => request.kind === 'packument')
    .map(({ packageName = '', full, bytes }) => ({ name: packageName, full, bytes }))
  const tarballs = requests
    .filter((request) => request.kind === 'tarball')
    .map(({ packageName = '', bytes }) => ({ name: packageName, bytes }))
  const bytes = [...packuments, ...tarballs].reduce((sum, { bytes }) => sum + bytes, 0)
  return { packuments, tarballs, bytes }
}
