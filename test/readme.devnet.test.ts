/**
 * The runnable code blocks (```ts runnable) of the README and the guides in docs/, run as written
 * against a devnet, in order, with the prelude of environment variables that docs/development.md
 * documents under "Runnable snippets".
 */
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeAddressesFile } from '../harness/addressesFile.js'
import { type Devnet, startDevnet } from '../src/devnet/startDevnet.js'
import { docSnippets } from './support/docSnippets.js'
import { tsxAsInstalled } from './support/tsxAsInstalled.js'

const root = join(import.meta.dirname, '..')
const tsx = join(root, 'node_modules/.bin/tsx')
const readme = await readFile(join(root, 'README.md'), 'utf8')
const snippets = (await docSnippets())
  .filter((snippet) => snippet.runnable)
  .map(({ where, code }, index) => ({
    name: `runnable block ${index + 1} (${where})`,
    code,
    index,
  }))

describe('the README and the guides', () => {
  let devnet: Devnet
  let env: Record<string, string>
  /** Inside the repository, so that `import … from 'x402-vault'` resolves to this package (dist/). */
  let folder: string

  beforeAll(async () => {
    devnet = await startDevnet({ chain: 'base-sepolia', facilitator: true })
    env = {
      PATH: process.env.PATH ?? '',
      BASE_SEPOLIA_RPC_URL: devnet.rpcUrl,
      VAULT_ADDRESSES: await writeAddressesFile(devnet),
      MERCHANT_PRIVATE_KEY: devnet.accounts.merchant.privateKey,
      X402_FACILITATOR_URL: devnet.facilitatorUrl as string,
    }
    folder = await mkdtemp(join(root, '.readme-snippets-'))
    // The repository's tsconfig maps `x402-vault` to src/ (for the examples); a reader's app has no
    // such mapping, so tsx runs the snippets against dist/.
    Object.assign(env, await tsxAsInstalled())
  })
  async function writeSnippet(index: number, code: string): Promise<string> {
    const file = join(folder, `snippet-${index}.ts`)
    await writeFile(file, code)
    return file
  }
  afterAll(async () => {
    await devnet?.stop()
    if (folder) await rm(folder, { recursive: true, force: true })
  })

  it('have runnable blocks, and the status note about empty entry points is gone', () => {
    expect(snippets.length).toBeGreaterThanOrEqual(3)
    expect(readme).not.toMatch(/later release|empty entry point|> Status:/i)
  })

  // That they type-check (tsc --strict, NodeNext) is shown with every other ```ts block of the docs,
  // against the installed tarball, in test/package/pack.test.ts.

  it.each(snippets)('$name runs as written and exits 0', async ({ code, index }) => {
    const file = await writeSnippet(index, code)
    // A non-zero exit rejects, with the snippet's stderr in the message.
    const { stderr } = await promisify(execFile)(tsx, [file], { cwd: root, env })
    expect(stderr).toBe('')
  })
})
