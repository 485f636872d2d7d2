import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { buildSync } from 'esbuild'
import { isRunning } from '../src/devnet/anvil.js'

const root = join(import.meta.dirname, '..')
/** Where the bundles are written: inside the repository, so that their external imports resolve. */
const folder = join(root, 'node_modules/.cache/x402-vault-harness')

type Bundle = { outfile: string; inputs: string[]; builtAtMs: number }
/** Kept on `globalThis`: a test worker reloads this module for every file, and builds once. */
const bundlesKey = Symbol.for('x402-vault.harness.nodeScripts')
const store = globalThis as { [bundlesKey]?: Map<string, Bundle> }

/**
 * Removes the bundles of processes that have ended: a test worker that is killed at the end of a
 * run never gets to remove its own.
 */
function removeOrphans(): void {
  for (const file of readdirSync(folder)) {
    const pid = Number(/-(\d+)\.mjs$/.exec(file)?.[1])
    if (pid && pid !== process.pid && !isRunning(pid)) rmSync(join(folder, file), { force: true })
  }
}

/** True when a source the bundle was made from has changed since (or is gone). */
function isStale(bundle: Bundle): boolean {
  return bundle.inputs.some((input) => {
    try {
      return statSync(input).mtimeMs > bundle.builtAtMs
    } catch {
      return true
    }
  })
}

/**
 * The path of a harness process's entry (a TypeScript file), bundled with its dependencies into one
 * ES module that plain `node` runs. Loading through tsx costs such a process about 2.5 s of CPU (it
 * compiles the sources and resolves hundreds of modules), the bundle about 0.45 s; the tests start
 * dozens of them. Built once per process, and again when a source it was made from changes.
 *
 * @param entry - The entry's absolute path, e.g. `harness/merchantProcess.ts`.
 * @returns The bundle's absolute path, under `node_modules/.cache`, named with this process's id:
 *   removed when it exits, or by the next process that bundles once it has ended.
 * @example
 * spawn(process.execPath, [nodeScript(join(import.meta.dirname, 'merchantProcess.ts'))])
 */
export function nodeScript(entry: string): string {
  store[bundlesKey] ??= new Map()
  const bundles = store[bundlesKey]
  const known = bundles.get(entry)
  if (known && !isStale(known)) return known.outfile
  const name = relative(root, entry)
    .replace(/[^\w.-]+/g, '_')
    .replace(/\.ts$/, '')
  const outfile = join(folder, `${name}-${process.pid}.mjs`)
  mkdirSync(folder, { recursive: true })
  if (bundles.size === 0) removeOrphans()
  const builtAtMs = Date.now()
  const result = buildSync({
    absWorkingDir: root,
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // `pg` stays the app's own install, as the bins leave it.
    external: ['pg'],
    // CommonJS dependencies (Express) require Node's built-in modules at run time.
    banner: {
      js: "import { createRequire as __harnessRequire } from 'node:module'; const require = __harnessRequire(import.meta.url);",
    },
    metafile: true,
    logLevel: 'silent',
  })
  const inputs = Object.keys(result.metafile?.inputs ?? {})
    .filter((input) => !input.includes('node_modules/'))
    .map((input) => join(root, input))
  if (!known) process.once('exit', () => rmSync(outfile, { force: true }))
  bundles.set(entry, { outfile, inputs, builtAtMs })
  return outfile
}
