import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { bytesUnder, packPackage, startLocalRegistry } from '../test/support/localRegistry.js'
import type { BenchContext } from './context.js'
import { percentile, roundMs } from './stats.js'

/** `npx -y x402-vault@beta` as an MCP client starts it: medians, every run, and what npx installed. */
export type NpxStart = {
  /** An empty npm cache: npx fetches the package from the registry and installs it. */
  coldMs: number
  /** The same cache again: npx asks the registry for `@beta`, then runs what it has. */
  warmMs: number
  /** The size of what npx installed for the bin (its `node_modules`), in MB. */
  installedMb: number
  coldRunsMs: number[]
  warmRunsMs: number[]
}

/**
 * Times `npx -y x402-vault@beta`, from spawning npx to the answer of `tools/list`, against a private
 * registry on loopback (verdaccio) that serves the packed package under `beta` and proxies nothing.
 * Skipped in a smoke run: `test/package/npx.test.ts` starts the same command in `npm test`.
 *
 * @param ctx - The sample count (3 cold, 3 warm) and the built package to pack.
 * @returns The medians, every run and the installed size; `null` in a smoke run.
 * @example
 * const npx = await measureNpxStart(ctx)
 */
export async function measureNpxStart(ctx: BenchContext): Promise<NpxStart | null> {
  if (ctx.smoke) return null
  const runs = 3
  const work = await mkdtemp(join(tmpdir(), 'x402-vault-bench-npx-'))
  const [packed, registry] = await Promise.all([packPackage(work), startLocalRegistry()])
  try {
    await registry.publish(packed.tarball, 'beta')
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
      return ms
    }
    const coldRunsMs: number[] = []
    const warmRunsMs: number[] = []
    let cache = ''
    for (let run = 0; run < runs; run++) {
      ctx.progress(`npx -y x402-vault@beta, empty cache: run ${run + 1} of ${runs}`)
      cache = join(work, `cache-${run}`)
      coldRunsMs.push(await start(cache))
    }
    for (let run = 0; run < runs; run++) {
      ctx.progress(`npx -y x402-vault@beta, warm cache: run ${run + 1} of ${runs}`)
      warmRunsMs.push(await start(cache))
    }
    // npx installs into `_npx/<hash>/node_modules` in its cache.
    const [install = ''] = await readdir(join(cache, '_npx'))
    const installedMb = (await bytesUnder(join(cache, '_npx', install, 'node_modules'))) / 1e6
    return {
      coldMs: roundMs(percentile(coldRunsMs, 50)),
      warmMs: roundMs(percentile(warmRunsMs, 50)),
      installedMb: Math.round(installedMb * 100) / 100,
      coldRunsMs: coldRunsMs.map(roundMs),
      warmRunsMs: warmRunsMs.map(roundMs),
    }
  } finally {
    await registry.stop()
    await rm(work, { recursive: true, force: true })
  }
}
