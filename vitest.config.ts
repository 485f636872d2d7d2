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
          setupFiles: ['test/support/isolateUnitFiles.ts'],
        },
      },
      { extends: true, test: { name: 'devnet', include: [devnetTests] } },
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
