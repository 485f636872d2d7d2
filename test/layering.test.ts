/**
 * The layers of src/ and the direction of their imports: `plugins`, `mcp`, `cli` and `devnet` stand on
 * the SDK and reach it only through its entry files; the SDK stands on none of them. Inside the SDK,
 * the sweep (`sdk/sweep`) stands on neither side that builds on it (`sdk/seller`, `sdk/buyer`).
 */
import { readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import packageJson from '../package.json' with { type: 'json' }
import { importGraph } from './support/importGraph.js'

const root = join(import.meta.dirname, '..')
const srcFiles = readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.ts'))
  .map((file) => join(root, 'src', file))
const graph = importGraph(srcFiles)

/** The SDK's entry files: the public one (`x402-vault`) and the package-internal one. */
const sdkEntries = ['src/index.ts', 'src/sdk/shared.ts']
const upperLayers = ['plugins', 'mcp', 'cli', 'devnet'] as const

/** `sdk`, `plugins`, `mcp`, `cli` or `devnet` for a file of src/ (the package root counts as `sdk`). */
function layerOf(path: string): string {
  if (path === 'src/index.ts') return 'sdk'
  return path.split('/')[1] as string
}

/** Every direct import of a file of src/, as paths relative to the repository. */
const imports = srcFiles.map((file) => ({
  from: relative(root, file),
  to: graph.moduleImports(file).files.map((target) => relative(root, target)),
}))

/** `from → to` for every import that `allowed` refuses. */
function violations(allowed: (from: string, to: string) => boolean): string[] {
  return imports.flatMap(({ from, to }) =>
    to.filter((target) => !allowed(from, target)).map((target) => `${from} → ${target}`),
  )
}

describe('the layers of src/', () => {
  it('reads every source file', () => {
    expect(imports.length).toBeGreaterThan(100)
    expect(imports.find(({ from }) => from === 'src/devnet/deploy.ts')?.to).toContain(
      'src/sdk/shared.ts',
    )
  })

  it('sdk imports none of plugins, mcp, cli and devnet', () => {
    const found = violations(
      (from, to) =>
        layerOf(from) !== 'sdk' ||
        !to.startsWith('src/') ||
        layerOf(to) === 'sdk' ||
        to === 'src/index.ts',
    )
    expect(found).toEqual([])
    // The SDK's own modules never go through its entry either: that would be a cycle.
    expect(
      violations((from, to) => !from.startsWith('src/sdk/') || !sdkEntries.includes(to)),
    ).toEqual([])
  })

  it('the sweep stands below the seller and the buyer, which build on it', () => {
    const found = violations(
      (from, to) =>
        !from.startsWith('src/sdk/sweep/') ||
        !(to.startsWith('src/sdk/seller/') || to.startsWith('src/sdk/buyer/')),
    )
    expect(found).toEqual([])
    expect(imports.find(({ from }) => from === 'src/sdk/buyer/attachToClient.ts')?.to).toContain(
      'src/sdk/sweep/sweep.ts',
    )
  })

  it('plugins and mcp do not import each other', () => {
    const found = violations((from, to) => {
      const pair = [layerOf(from), to.startsWith('src/') ? layerOf(to) : '']
      return !(pair.includes('plugins') && pair.includes('mcp'))
    })
    expect(found).toEqual([])
  })

  it('nothing in src/ imports test/, bench/ or harness/', () => {
    expect(violations((_, to) => !/^(test|bench|harness)\//.test(to))).toEqual([])
  })

  it('upper layers reach the SDK only through its entry files', () => {
    const found = violations(
      (from, to) =>
        !upperLayers.some((layer) => layer === layerOf(from)) ||
        !(to.startsWith('src/sdk/') || to === 'src/index.ts') ||
        sdkEntries.includes(to),
    )
    expect(found).toEqual([])
  })

  it('the package-internal entry is no entry point of the package', () => {
    const targets = JSON.stringify(packageJson.exports)
    expect(targets).not.toMatch(/shared/)
    expect(packageJson.exports['.'].import.types).toBe('./dist/index.d.ts')
    expect(packageJson.exports['.'].require.types).toBe('./dist/index.d.cts')
  })
})
