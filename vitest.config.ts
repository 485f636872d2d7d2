import { availableParallelism } from 'node:os'
import { configDefaults, defineConfig } from 'vitest/config'
import type { TestSpecification } from 'vitest/node'
import { BaseSequencer } from 'vitest/node'

/** A test that starts a devnet (anvil), itself or through a process it runs, says so in its name. */
const devnetTests = 'test/**/*.devnet.test.ts'
/** The tarball installed into empty folders: npm's registry and a minute and more, but no chain. */
const packageTests = 'test/package/**/*.test.ts'
/**
 * Files that keep a core busy for many seconds. A fresh clone has no timings of earlier runs, so
 * vitest starts the largest files first, and these, small, would start last and run alone at the end.
 */
const slowFirst = ['test/devnet/artifacts.test.ts']
/**
 * Devnet files that spend most of their time waiting, by design: on the timeouts users have (an RPC
 * that hangs takes the MCP server 2 × 8 s), on a lock's lease, a watcher's interval, a facilitator that
 * answers late. Each used under half a core for its wall time (its CPU, its processes' included, over
 * its duration; the Cloudflare Worker's half). `npm test` runs them in a vitest process of their own,
 * with one worker, beside the two workers that run the rest: there their waits overlap work. With
 * them among the rest, both workers were at times waiting at once, and the machine sat 70 core-s
 * idle; apart, `npm test` took 30 s less (6:20 against 6:50 on the 2-core dev machine).
 */
const waitingTests = [
  'test/secrets.devnet.test.ts',
  'test/mcp/rpcFaults.devnet.test.ts',
  'test/sdk/rpcFaults.devnet.test.ts',
  'test/sdk/transport.faults.devnet.test.ts',
  'test/seller/hostileFacilitator.devnet.test.ts',
  'test/cli/devnet.devnet.test.ts',
  'test/cli/postgresLock.devnet.test.ts',
  'test/cli/status.devnet.test.ts',
  'test/cli/sweepWatch.devnet.test.ts',
  'test/cli/sweepWatchBatch.devnet.test.ts',
  'test/cli/sweepWatchLock.devnet.test.ts',
  'test/cli/watchHealth.devnet.test.ts',
  'test/examples/cloudflareWorker.devnet.test.ts',
]

/** Vitest's order (each project's files, longest or largest first), with {@link slowFirst} ahead in theirs. */
class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const rank = (file: TestSpecification) =>
      slowFirst.some((path) => file.moduleId.endsWith(path)) ? 0 : 1
    // Stable: only a project's own order moves, and the projects keep theirs.
    const projects = [...new Set(sorted.map((file) => file.project.name))]
    return projects.flatMap((name) =>
      sorted.filter((file) => file.project.name === name).sort((a, b) => rank(a) - rank(b)),
    )
  }
}

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    sequence: { sequencer: SlowFirstSequencer },
    // Vitest's default leaves one core free, which is one worker on a 2-core machine. Most devnet and
    // package tests wait on anvil, child processes and npm rather than compute, so a second worker there
    // takes about a sixth off `npm test` (436 s to 371 s for vitest on the 2-core dev machine).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Many tests run the built bins and dist/: build it first when the sources are newer.
    globalSetup: ['test/support/freshBuild.ts'],
    projects: [
      {
        extends: true,
        test: {
          // `npm run test:unit`: everything that needs neither a chain nor the registry.
          name: 'unit',
          include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
          exclude: [...configDefaults.exclude, devnetTests, packageTests],
          isolate: false,
          setupFiles: ['test/support/isolateFiles.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'devnet',
          include: [devnetTests],
          exclude: [...configDefaults.exclude, ...waitingTests],
          // As the unit files: each file starts its own devnet and stops its own processes.
          isolate: false,
          setupFiles: ['test/support/isolateFiles.ts'],
        },
      },
      {
        extends: true,
        test: {
          // The devnet files that mostly wait ({@link waitingTests}), in one worker. `npm test` runs
          // them in a process of their own; where one process runs every project, they run after the
          // rest (vitest runs projects with different worker counts one group after the other).
          name: 'devnet-waiting',
          include: waitingTests,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
          isolate: false,
          setupFiles: ['test/support/isolateFiles.ts'],
        },
      },
      // A package test that also starts a devnet runs once, with the devnet tests.
      {
        extends: true,
        test: {
          name: 'package',
          include: [packageTests],
          exclude: [...configDefaults.exclude, devnetTests],
        },
      },
    ],
  },
})
