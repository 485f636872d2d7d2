/**
 * Every entry point of the built package loads, with `import` and with `require`, and both give the
 * same names. The package tests install the tarball and check this too, but they run outside
 * `npm test` (scripts/test-node-versions.mjs); this is the quick check that a build step (such as
 * tsup's conversion of the split ESM build to CommonJS) did not emit code Node refuses to parse.
 */
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)
const root = join(import.meta.dirname, '..')
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  exports: Record<string, { import?: { default: string }; require?: { default: string } }>
}
const entries = Object.entries(manifest.exports).filter(
  ([, conditions]) => conditions.import && conditions.require,
)

/** The sorted export names of `file` as Node loads it in a fresh process, with `import` or `require`. */
async function exportNames(file: string, how: 'import' | 'require'): Promise<string[]> {
  const path = JSON.stringify(join(root, file))
  const script =
    how === 'require'
      ? `process.stdout.write(JSON.stringify(Object.keys(require(${path})).sort()))`
      : `import(${path}).then((m) => process.stdout.write(JSON.stringify(Object.keys(m).filter((k) => k !== 'default').sort())))`
  const { stdout } = await run(process.execPath, ['--input-type=commonjs', '-e', script], {
    cwd: root,
  })
  return JSON.parse(stdout) as string[]
}

/** The Node modules that `file` (built ESM) and the chunks it imports statically import. */
function staticNodeImports(file: string): string[] {
  const builtins = new Set([...builtinModules, ...builtinModules.map((name) => `node:${name}`)])
  const found = new Set<string>()
  const seen = new Set<string>()
  const queue = [join(root, file)]
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
    if (seen.has(next)) continue
    seen.add(next)
    const text = readFileSync(next, 'utf8')
    for (const [, specifier] of text.matchAll(
      /(?:^|\n)\s*(?:import|export)\s*(?:[^'"]*?\sfrom\s*)?["']([^"']+)["']/g,
    )) {
      if (specifier?.startsWith('.')) queue.push(join(dirname(next), specifier))
      else if (specifier && builtins.has(specifier)) found.add(specifier.replace(/^node:/, ''))
    }
  }
  return [...found].sort()
}

describe('the built entry points', () => {
  it('lists more than the root', () => {
    expect(entries.map(([subpath]) => subpath)).toEqual(
      expect.arrayContaining(['.', './mcp', './devnet']),
    )
  })

  it.each(entries)(
    '%s loads with import and with require, with the same names',
    async (_, conditions) => {
      const [esm, cjs] = await Promise.all([
        exportNames(conditions.import?.default ?? '', 'import'),
        exportNames(conditions.require?.default ?? '', 'require'),
      ])
      expect(esm.length).toBeGreaterThan(0)
      expect(cjs).toEqual(esm)
    },
  )

  // The root and the Hono plugin run in browsers and edge runtimes too: the Node-only code they
  // share with the bins (nodeHttpFetch) reads Node's modules when it is called, not at import.
  it.each(['dist/index.js', 'dist/plugins/hono.js'])(
    '%s imports none of Node’s network modules',
    (file) => {
      const imported = staticNodeImports(file)
      expect(imported.length).toBeGreaterThan(0)
      expect(
        imported.filter((name) => /^(http|https|http2|net|tls|stream)(\/|$)/.test(name)),
      ).toEqual([])
    },
  )
})
