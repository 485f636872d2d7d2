/**
 * Vitest's global set-up: the tests that run the built package (the bins, `dist/index.js`, the README's
 * snippets) must not pass or fail on a stale build. `npm test` has just built the code, so this does
 * nothing there (scripts/test.mjs builds the code alone, and says so with `X402_VAULT_BUILD=code`:
 * only the code is checked and built then; the package tests need the types too); `npm run test:unit`
 * after an edit in `src/` builds once here.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

const root = join(import.meta.dirname, '../..')
/** What the build reads besides `src/`. */
const buildInputs = ['package.json', 'tsup.config.ts', 'tsconfig.json']
/** Whether the run needs the code alone (tsup.config.ts reads the same variable). */
const codeOnly = process.env.X402_VAULT_BUILD === 'code'
/** One output of each of tsup's three builds, and the types unless only the code is needed. */
const buildOutputs = [
  'dist/index.js',
  'dist/cli/index.js',
  'dist/mcp/bin.js',
  ...(codeOnly ? [] : ['dist/index.d.ts']),
]

/** The latest modification time of the files under `dir`, in ms. */
function newestUnder(dir: string): number {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .reduce(
      (newest, entry) => Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs),
      0,
    )
}

/** Builds `dist/` with tsup when an output is missing or older than a source. */
export default function setup(): void {
  const outputs = buildOutputs.map((file) => join(root, file))
  const oldestOutput = outputs.every(existsSync)
    ? Math.min(...outputs.map((file) => statSync(file).mtimeMs))
    : 0
  const newestInput = Math.max(
    newestUnder(join(root, 'src')),
    ...buildInputs.map((file) => statSync(join(root, file)).mtimeMs),
  )
  if (oldestOutput >= newestInput) return
  process.stderr.write('dist/ is missing or older than the sources: building it first\n')
  execFileSync(join(root, 'node_modules/.bin/tsup'), ['--silent'], { cwd: root, stdio: 'inherit' })
}
