import { availableParallelism } from 'node:os'
import { configDefaults, defineConfig } from 'vitest/config'

/** A test that starts a devnet (anvil), itself or through a process it runs, says so in its name. */
const devnetTests = 'test/**/*.devnet.test.ts'
/** The tarball installed into empty folders: npm's registry and a minute and more, but no chain. */
const packageTests = 'test/package/**/*.test.ts'

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
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
          // As the unit files: each file starts its own devnet and stops its own processes.
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
