/**
 * The SDK root must import fast (its budget: ≤ 0.25 s, docs/performance.md). A timing test would be flaky on a shared
 * machine, so this checks statically what makes it slow: `viem/chains` (a barrel of every chain, 0.5 s)
 * and anything of the seller side (web frameworks, x402). `npm run bench` reports the time itself.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '../..')
const forbidden = [/^viem\/chains(\/|$)/, /^(express|hono)(\/|$)/, /^@hono\//, /^@x402\//]

/** Every file a module loads, following relative imports, and the packages they import. */
function moduleGraph(entry: string): { files: string[]; packages: Set<string> } {
  const files: string[] = []
  const packages = new Set<string>()
  const pending = [entry]
  while (pending.length) {
    const file = pending.pop() as string
    if (files.includes(file)) continue
    files.push(file)
    const text = readFileSync(file, 'utf8')
    for (const [, specifier] of text.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)) {
      if (!specifier) continue
      if (specifier.startsWith('.')) pending.push(join(dirname(file), specifier))
      else packages.add(specifier)
    }
  }
  return { files, packages }
}

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourcesUnder(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  )
}

describe('the SDK root stays light to import', () => {
  it('the built dist/index.js loads no viem/chains, web framework or @x402 package', () => {
    const entry = join(root, 'dist/index.js')
    expect(existsSync(entry), 'dist/index.js is missing: run `npm run build`').toBe(true)
    const { files, packages } = moduleGraph(entry)
    expect(files.length).toBeGreaterThan(0)
    for (const name of packages) {
      for (const pattern of forbidden)
        expect(name, `dist/index.js loads ${name}`).not.toMatch(pattern)
    }
  })

  it('no SDK source imports viem/chains', () => {
    for (const file of sourcesUnder(join(root, 'src/sdk'))) {
      const text = readFileSync(file, 'utf8')
      expect(text, relative(root, file)).not.toMatch(/from ['"]viem\/chains['"]/)
    }
  })
})
