/**
 * The docs stand alone: the README is a landing page that links guides which exist, nothing a user
 * reads points into `src/` or at specification files that are not in the repository or the package.
 */
import { existsSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '..')
const guides = (await readdir(join(root, 'docs'))).filter((f) => f.endsWith('.md')).sort()
const documents = ['README.md', 'CHANGELOG.md', ...guides.map((f) => `docs/${f}`)]
const read = (file: string) => readFile(join(root, file), 'utf8')

/** Every file under `folder` (relative to the root), recursively. */
async function filesUnder(folder: string): Promise<string[]> {
  if (!existsSync(join(root, folder))) return []
  const entries = await readdir(join(root, folder), { recursive: true, withFileTypes: true })
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(root.length + 1))
}

describe('the docs', () => {
  it('the README is a landing page of at most 300 lines that never sends a user into src/', async () => {
    const readme = await read('README.md')
    expect(readme.split('\n').length).toBeLessThanOrEqual(300)
    expect(readme).not.toMatch(/\bsrc\//)
    for (const command of ['npm ci && npm run demo', 'npm test']) expect(readme).toContain(command)
  })

  it("CI runs the README's install and test commands, and the README names the Node versions they test", async () => {
    const readme = await read('README.md')
    const ciCommands = (await read('.ci/run'))
      .split('\n')
      .filter((line) => line && !line.startsWith('#') && !line.startsWith('set '))
    expect(ciCommands).toEqual(['npm ci', 'npm test', 'npm run test:node-versions'])
    for (const command of ciCommands) expect(readme).toContain(command)
    // `npm test` on the oldest Node that `engines` allows, the script on each Node it pins.
    const { engines } = JSON.parse(await read('package.json')) as { engines: { node: string } }
    const oldest = /^>=(\d+)$/.exec(engines.node)?.[1]
    const pinned = [...(await read('scripts/test-node-versions.mjs')).matchAll(/^ {2}(\d+): \{$/gm)]
    const majors = [oldest, ...pinned.map(([, major]) => major)]
    expect(majors).toEqual(['20', '22', '24', '26'])
    const named = `${majors.slice(0, -1).join(', ')} and ${majors.at(-1)}`
    expect(readme).toContain(`Node.js ${oldest} or newer`)
    expect(readme.replace(/\s+/g, ' ')).toContain(`CI tests Node ${named}:`)
  })

  it('the guides the issue asks for are in docs/, and the README links each of them', async () => {
    const readme = await read('README.md')
    for (const guide of [
      'seller',
      'sdk',
      'mcp',
      'devnet',
      'security',
      'troubleshooting',
      'performance',
    ]) {
      expect(guides).toContain(`${guide}.md`)
      expect(readme).toContain(`](docs/${guide}.md)`)
    }
    expect(readme).toContain('](CHANGELOG.md)')
  })

  it('every relative link in the README, the CHANGELOG and the guides reaches a file the package ships', async () => {
    const { files } = JSON.parse(await read('package.json')) as { files: string[] }
    const shipped = (path: string) =>
      ['package.json', 'README.md', 'LICENSE'].includes(path) ||
      files.some((entry) => path === entry || path.startsWith(`${entry}/`))
    const broken: string[] = []
    for (const file of documents) {
      const text = await read(file)
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (!target || /^[a-z]+:/.test(target) || target.startsWith('#')) continue
        const path = join(dirname(file), target.split('#')[0] as string)
        if (!existsSync(join(root, path)) || !shipped(path)) broken.push(`${file}: ${target}`)
      }
    }
    expect(broken).toEqual([])
  })

  it('no source or built file cites the specification files, which ship in neither', async () => {
    const citing: string[] = []
    for (const file of [...(await filesUnder('src')), ...(await filesUnder('dist'))]) {
      if (
        /\.(ts|js|mjs|cjs|sol)$/.test(file) &&
        /PRODUCT\.md|PROTOCOL\.md/.test(await read(file))
      ) {
        citing.push(file)
      }
    }
    expect(citing).toEqual([])
  })

  it('the README shows the registration of the MCP server and one example for each kind of user', async () => {
    const readme = await read('README.md')
    expect(readme).toContain("from 'x402-vault/express'")
    expect(readme).toContain('```ts runnable')
    // The registration most users write names only the package.
    expect(readme).toContain('"args": ["-y", "x402-vault@beta"]')
  })
})
