/**
 * The rules of the test and bench trees: a test that needs no devnet cannot start one, fixtures live
 * in test/support/, and test/ and bench/ do not import each other: what both use (merchant apps,
 * counting proxies, hook timers, the local registry) is in harness/, which imports neither and runs
 * outside vitest; the bench smoke test runs the bench as a process.
 */
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { codeTokens, importGraph } from './support/importGraph.js'

const root = join(import.meta.dirname, '..')
const tsFilesUnder = (dir: string) =>
  readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(root, dir, file))
const rel = (file: string) => relative(root, file)

const testTree = tsFilesUnder('test')
const benchTree = tsFilesUnder('bench')
const harnessTree = tsFilesUnder('harness')
const tests = testTree.filter((file) => file.endsWith('.test.ts'))
/** The tests other than this one, which names the devnet starters without calling them. */
const otherTests = tests.filter((file) => file !== import.meta.filename)
const graph = importGraph([...testTree, ...benchTree, ...harnessTree])
/** The calls that start a devnet or an anvil in this process. */
const devnetStarters = ['startDevnet', 'startAnvil']

/**
 * Whether a test calls a devnet starter, itself or through the test code it reaches (fixtures such as
 * `useDevnet`). Reaching `src/devnet/` is not enough: a test may list its exports without starting one.
 */
function startsDevnet(test: string): boolean {
  return [...graph.runtimeReach([test]).files]
    .filter((file) => rel(file).startsWith('test/') || rel(file).startsWith('harness/'))
    .some((file) => codeTokens(file).some(([token]) => devnetStarters.includes(token)))
}

describe('the test tree', () => {
  it('keeps every file that is not a test in test/support/', () => {
    const strays = testTree.filter(
      (file) => !file.endsWith('.test.ts') && !rel(file).startsWith('test/support/'),
    )
    expect(strays.map(rel)).toEqual([])
  })

  it('names every test that starts a devnet *.devnet.test.ts', () => {
    const unnamed = otherTests.filter(
      (file) => !file.endsWith('.devnet.test.ts') && startsDevnet(file),
    )
    expect(unnamed.map(rel)).toEqual([])
  })

  it('would notice: a test that starts a devnet through a fixture, and one that starts it itself', () => {
    for (const file of ['test/seller/sweeper.devnet.test.ts', 'test/mcp/tools.devnet.test.ts']) {
      expect(startsDevnet(join(root, file)), file).toBe(true)
    }
  })
})

describe('test/, bench/ and harness/', () => {
  /** The files of `from` that import a file under `folder` (type-only and dynamic imports too). */
  function importing(from: string[], folder: string): string[] {
    return from
      .filter((file) => graph.moduleImports(file).files.some((dep) => rel(dep).startsWith(folder)))
      .map(rel)
  }

  it('no test imports the bench, and the bench imports nothing of test/', () => {
    expect(importing(testTree, 'bench/')).toEqual([])
    expect(importing(benchTree, 'test/')).toEqual([])
  })

  it('harness/ imports neither test/ nor bench/, nor anything of vitest; both use it', () => {
    expect(importing(harnessTree, 'test/')).toEqual([])
    expect(importing(harnessTree, 'bench/')).toEqual([])
    const packages = [...graph.runtimeReach(harnessTree).packages.keys()]
    expect(packages.filter((name) => name.startsWith('vitest'))).toEqual([])
    expect(importing(benchTree, 'harness/').length).toBeGreaterThan(0)
    expect(importing(testTree, 'harness/').length).toBeGreaterThan(0)
  })
})

describe('the layout table of docs/development.md', () => {
  it('names every folder of the repository, the folders of src/ two levels down, and server.json', () => {
    const tracked = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' }).split('\n')
    const folders = new Set<string>()
    for (const path of tracked) {
      const parts = path.split('/')
      if (parts.length > 1) folders.add(`${parts[0]}/`)
      if (parts[0] === 'src' && parts.length > 2) folders.add(parts.slice(0, 2).join('/'))
      if (parts[0] === 'src' && parts.length > 3) folders.add(parts.slice(0, 3).join('/'))
    }
    folders.delete('src/')
    const guide = readFileSync(join(root, 'docs/development.md'), 'utf8')
    const layout = guide.slice(guide.indexOf('## Layout'), guide.indexOf('\nThe layers:'))
    const named = new Set([...layout.matchAll(/^\| `([^`]+)`/gm)].map(([, name]) => name))
    expect([...folders, 'server.json'].filter((folder) => !named.has(folder)).sort()).toEqual([])
  })
})
