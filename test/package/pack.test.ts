/**
 * The package as users get it: `npm pack` once, then installs from that tarball into empty folders, as
 * a seller on Express, a seller on Hono, a plain install (what `npx` installs for the MCP server), and
 * a TypeScript consumer of every subpath and of every ```ts block of the README and the guides; and as
 * sellers and an SDK user who lack a peer or have one of an unsupported version, which npm no longer
 * reports (package.json names the peers in `peerDependenciesMeta` only) and the package names. publint
 * and arethetypeswrong check the tarball itself. Installs come from npm's cache where they can
 * (`--prefer-offline`: `npm ci` cached the tarballs; npm 11 may still ask the registry for full package
 * metadata), so they prove that the published files alone work.
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bytesUnder, expressSeller, packPackage, peer } from '../../harness/localRegistry.js'
import { mcpToolNames } from '../../harness/mcpToolNames.js'
import { docSnippets } from '../support/docSnippets.js'

const run = promisify(execFile)
const root = join(import.meta.dirname, '../..')
const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
  version: string
  exports: Record<string, unknown>
}
/** What the README said before the x402 packages became peers: no @x402/evm. */
const expressSellerWithoutEvm = ['viem', '@x402/express', 'express'].map(peer)
const honoSeller = ['viem', '@x402/core', '@x402/evm', '@x402/hono', 'hono'].map(peer)
/**
 * Peers of versions this release does not support, as an app that had them already keeps them: npm
 * installs them without a word (package.json declares no peerDependencies), the package names them.
 */
const unsupported = { express: 'express@4.17.3', xHono: '@x402/hono@2.26.0', viem: 'viem@2.47.6' }
/** The most `npx x402-vault@beta` may install: what the MCP server's bin needs. */
const maxInstallBytes = 10 * 1024 * 1024

let work: string
let tarball: string
let packedFiles: string[]
/** Install folders, by who installs. */
const folders = {
  plain: '',
  express: '',
  expressWithoutEvm: '',
  expressOnOldExpress: '',
  hono: '',
  honoWithoutEvm: '',
  honoOnOldX402: '',
  sdkOnOldViem: '',
  types: '',
}

/** Installs the tarball and `packages` into a new empty folder. */
async function installInto(name: keyof typeof folders, packages: readonly string[]): Promise<void> {
  const folder = join(work, name)
  await mkdir(folder)
  await writeFile(
    join(folder, 'package.json'),
    JSON.stringify({ name: `consumer-${name}`, private: true, type: 'module' }),
  )
  await run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, ...packages],
    {
      cwd: folder,
    },
  )
  folders[name] = folder
}

const has = (folder: string, name: string) => existsSync(join(folder, 'node_modules', name))

/**
 * The TypeScripts an app compiles the package's types with: 5.9, the last of the JavaScript compiler,
 * and 7, the native one.
 */
const typeScripts = {
  '5.9': join(root, 'node_modules/typescript/bin/tsc'),
  '7': join(root, 'node_modules/typescript7/bin/tsc'),
}

/**
 * Type-checks `files` in `folder` with tsc --strict (NodeNext, as a TypeScript app on Node has it), one
 * run with each TypeScript of {@link typeScripts}, with the global types of `types`; fails with the
 * report of a tsc that failed.
 */
async function typeCheck(folder: string, files: string[], types: string[]): Promise<void> {
  await writeFile(
    join(folder, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        target: 'ES2022',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types,
      },
      files,
    }),
  )
  // tsc exits non-zero on any error, an unused `@ts-expect-error` included, and prints it on stdout.
  for (const [version, tsc] of Object.entries(typeScripts)) {
    await run(process.execPath, [tsc, '-p', folder]).catch((error: { stdout?: string }) => {
      throw new Error(`tsc of TypeScript ${version} failed:\n${error.stdout}`)
    })
  }
}

/**
 * What `createPaywall({})` of `x402-vault/<framework>` rejects with in `folder`, through `import` and
 * through `require` (where Node reports a missing module in other words).
 */
async function paywallErrors(
  folder: string,
  framework: 'express' | 'hono',
): Promise<{ code: string; message: string }[]> {
  const outputs = await Promise.all([
    nodeIn(
      folder,
      `const { createPaywall } = await import('x402-vault/${framework}')
const error = await createPaywall({}).catch((e) => e)
console.log(JSON.stringify({ code: error.code, message: error.message }))`,
    ),
    nodeIn(
      folder,
      `require('x402-vault/${framework}').createPaywall({}).catch((error) =>
  console.log(JSON.stringify({ code: error.code, message: error.message })))`,
      'commonjs',
    ),
  ])
  return outputs.map((output) => JSON.parse(output) as { code: string; message: string })
}

/** Runs a snippet with node in `folder`, as an ES module or as CommonJS; returns its stdout. */
async function nodeIn(
  folder: string,
  code: string,
  type: 'module' | 'commonjs' = 'module',
): Promise<string> {
  return (await run('node', [`--input-type=${type}`, '-e', code], { cwd: folder })).stdout
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'x402-vault-pack-'))
  const packed = await packPackage(work)
  tarball = packed.tarball
  packedFiles = packed.files
  // Parallel installs share npm's cache safely; one after the other would take five times as long.
  await Promise.all([
    installInto('plain', []),
    installInto('express', expressSeller),
    installInto('expressWithoutEvm', expressSellerWithoutEvm),
    installInto('hono', honoSeller),
    installInto(
      'honoWithoutEvm',
      honoSeller.filter((spec) => !spec.startsWith('@x402/evm@')),
    ),
    // Not in npm's cache from `npm ci`: from the registry.
    installInto('expressOnOldExpress', [
      ...expressSeller.filter((spec) => !spec.startsWith('express@')),
      unsupported.express,
    ]),
    installInto('honoOnOldX402', [
      ...honoSeller.filter((spec) => !spec.startsWith('@x402/hono@')),
      unsupported.xHono,
    ]),
    installInto('sdkOnOldViem', [unsupported.viem]),
    installInto('types', [
      peer('viem'),
      peer('@x402/core'),
      peer('@x402/evm'),
      peer('@x402/express'),
      peer('express'),
      peer('@x402/hono'),
      peer('hono'),
      peer('@modelcontextprotocol/server'),
    ]),
  ])
}, 240_000)

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true })
})

describe('npm pack', () => {
  it('publint (strict) and arethetypeswrong (every resolution mode) find no problem in it', async () => {
    const bin = (name: string) => join(root, 'node_modules/.bin', name)
    // Each exits non-zero on a problem, and prints it on stdout.
    const check = (command: string, args: string[]) =>
      run(bin(command), args).catch((error: { stdout?: string }) => {
        throw new Error(`${command} failed:\n${error.stdout}`)
      })
    const [publint, attw] = await Promise.all([
      check('publint', ['run', tarball, '--strict']),
      check('attw', [tarball, '--format', 'ascii']),
    ])
    expect(publint.stdout).toContain('All good!')
    expect(attw.stdout).toContain('No problems found')
  })

  it('holds only dist (no source maps), the README, the CHANGELOG, the guides, LICENSE and package.json', async () => {
    for (const path of packedFiles) {
      expect(path).toMatch(
        /^(dist\/.+\.(js|cjs|d\.ts|d\.cts)|README\.md|CHANGELOG\.md|docs\/[a-z-]+\.md|LICENSE|package\.json)$/,
      )
    }
    for (const path of ['dist/cli/index.js', 'dist/mcp/bin.js', 'README.md', 'docs/seller.md']) {
      expect(packedFiles).toContain(path)
    }
    // Nor does a built file name a map: a debugger, or Node's --enable-source-maps, would look for it.
    const installed = join(folders.plain, 'node_modules/x402-vault')
    const namingAMap: string[] = []
    for (const path of packedFiles.filter((path) => /\.c?js$/.test(path))) {
      if ((await readFile(join(installed, path), 'utf8')).includes('sourceMappingURL=')) {
        namingAMap.push(path)
      }
    }
    expect(namingAMap).toEqual([])
  })
})

describe('installed from the tarball', () => {
  it('a plain install is the package alone, at most 10 MB; its bins carry shebangs and run on this Node', async () => {
    // Every dependency is an optional peer: this is what `npx -y x402-vault@beta` installs.
    const packages = (await readdir(join(folders.plain, 'node_modules'))).filter(
      (name) => !name.startsWith('.'),
    )
    expect(packages).toEqual(['x402-vault'])
    const installed = await bytesUnder(join(folders.plain, 'node_modules'))
    expect(installed).toBeLessThanOrEqual(maxInstallBytes)
    const bin = join(folders.plain, 'node_modules/x402-vault/dist')
    for (const file of ['cli/index.js', 'mcp/bin.js']) {
      expect((await readFile(join(bin, file), 'utf8')).split('\n')[0], file).toBe(
        '#!/usr/bin/env node',
      )
    }
    // Through npm's bin links, as npx runs them: the shebang picks the `node` on PATH.
    const help = await run(join(folders.plain, 'node_modules/.bin/x402-vault'), ['--help'])
    expect(help.stdout).toMatch(/^Usage: x402-vault <command>/)
    // The `node` on PATH, which that shebang picks, and the one npm runs on are the Node of this test
    // run, also when `npm run test:node-versions` runs it on Node 22, 24 and 26.
    const node = await run('node', ['--version'])
    expect(node.stdout.trim()).toBe(process.version)
    const npm = JSON.parse((await run('npm', ['version', '--json'])).stdout) as { node: string }
    expect(`v${npm.node}`).toBe(process.version)
  })

  it.each(['x402-vault', 'x402-vault mcp', 'x402-vault-mcp'])(
    '`%s` answers tools/list through a real MCP client',
    async (command) => {
      const [bin = '', ...args] = command.split(' ')
      const transport = new StdioClientTransport({
        command: join(folders.plain, 'node_modules/.bin', bin),
        args,
        cwd: folders.plain,
        // Nothing listens there: listing the tools needs no RPC.
        env: {
          PATH: process.env.PATH ?? '',
          BASE_SEPOLIA_RPC_URL: 'http://127.0.0.1:9',
          MCP_LOG_LEVEL: 'error',
        },
        stderr: 'pipe',
      })
      const client = new Client({ name: 'x402-vault-pack-test', version: '1.0.0' })
      await client.connect(transport)
      try {
        const { tools } = await client.listTools()
        expect(tools.map((tool) => tool.name).sort()).toEqual([...mcpToolNames].sort())
      } finally {
        await client.close()
      }
    },
  )

  it('the SDK needs no other package at run time; the devnet without anvil gives the one command that works', async () => {
    const sdk = await nodeIn(
      folders.plain,
      "const m = await import('x402-vault'); console.log(typeof m.createVaultClient, m.formatUsdc(1500000n))",
    )
    expect(sdk.trim()).toBe('function 1.5')
    // CommonJS, as in an app that `npm init -y` made: every entry point, through require.
    const required = await nodeIn(
      folders.plain,
      `const m = require('x402-vault'); console.log(typeof m.createVaultClient, m.formatUsdc(1500000n))
for (const entry of ['express', 'hono']) console.log(typeof require('x402-vault/' + entry).createPaywall)`,
      'commonjs',
    )
    expect(required.trim().split('\n')).toEqual(['function 1.5', 'function', 'function'])
    // x402-vault/mcp and x402-vault/devnet load their peers (the MCP SDK and zod; @x402/evm) at once,
    // through import as through require: in a folder that has them.
    const withPeers = await nodeIn(
      folders.types,
      "console.log(typeof require('x402-vault/mcp').createServer, typeof require('x402-vault/devnet').startDevnet)",
      'commonjs',
    )
    expect(withPeers.trim()).toBe('function function')
    // A fresh folder, as `npx -y x402-vault@beta devnet` has: no @foundry-rs/anvil, no anvil on PATH.
    const devnet = await run(join(folders.plain, 'node_modules/.bin/x402-vault'), ['devnet'], {
      cwd: folders.plain,
      env: { PATH: dirname(process.execPath) },
    }).catch((error: { code?: number; stderr?: string }) => error)
    expect((devnet as { code?: number }).code).toBe(1)
    expect((devnet as { stderr?: string }).stderr).toContain('anvil was not found')
    expect((devnet as { stderr?: string }).stderr).toContain(
      'npx -y -p x402-vault@beta -p @foundry-rs/anvil x402-vault devnet',
    )
  })

  it.each([
    ['express', 'expressWithoutEvm'],
    ['hono', 'honoWithoutEvm'],
  ] as const)(
    'a seller on %s who lacks an x402 package gets an error naming it and the install line (import and require)',
    async (framework, folder) => {
      // The Express seller's install line from before the x402 packages were peers had no @x402/evm.
      expect(has(folders[folder], '@x402/evm')).toBe(false)
      for (const error of await paywallErrors(folders[folder], framework)) {
        expect(error.code).toBe('PEER_DEPENDENCY_MISSING')
        expect(error.message).toBe(
          `x402-vault/${framework} needs the package @x402/evm, which is not installed. Install what it needs: npm i @x402/evm@2.27`,
        )
      }
    },
  )

  it.each([
    [
      'express',
      'expressOnOldExpress',
      'x402-vault/express needs express ^4.21.0 || ^5.0.0, but 4.17.3 is installed. Install a supported version: npm i express@4',
    ],
    [
      'hono',
      'honoOnOldX402',
      'x402-vault/hono needs @x402/hono ~2.27.0, but 2.26.0 is installed. Install a supported version: npm i @x402/hono@2.27',
    ],
  ] as const)(
    'a seller on %s with a peer of an unsupported version gets an error naming it, the range, the version and the install line',
    async (framework, folder, message) => {
      for (const error of await paywallErrors(folders[folder], framework)) {
        expect(error.code).toBe('PEER_DEPENDENCY_MISMATCH')
        expect(error.message).toBe(message)
      }
    },
  )

  it('an SDK user on an unsupported viem gets an error naming it from createVaultClient (import and require)', async () => {
    const makeClient = `const client = createPublicClient({ transport: http('http://127.0.0.1:9') })
try {
  createVaultClient({ publicClient: client, chain: 'base-sepolia' })
  console.log('{}')
} catch (error) {
  console.log(JSON.stringify({ code: error.code, message: error.message }))
}`
    const outputs = await Promise.all([
      nodeIn(
        folders.sdkOnOldViem,
        `import { createPublicClient, http } from 'viem'
import { createVaultClient } from 'x402-vault'
${makeClient}`,
      ),
      nodeIn(
        folders.sdkOnOldViem,
        `const { createPublicClient, http } = require('viem')
const { createVaultClient } = require('x402-vault')
${makeClient}`,
        'commonjs',
      ),
    ])
    for (const output of outputs) {
      expect(JSON.parse(output)).toEqual({
        code: 'PEER_DEPENDENCY_MISMATCH',
        message:
          'x402-vault needs viem ^2.48.0, but 2.47.6 is installed. Install a supported version: npm i viem@2',
      })
    }
    // With a supported viem (the Express seller's 2.57.20), the same call makes the client.
    const supported = await nodeIn(
      folders.express,
      `import { createPublicClient, http } from 'viem'
import { createVaultClient } from 'x402-vault'
${makeClient}`,
    )
    expect(JSON.parse(supported)).toEqual({})
  })

  it('an SDK user without viem: x402-vault loads (it carries the viem it runs); the README snippet stops at its own import of viem, which Node names', async () => {
    expect(has(folders.plain, 'viem')).toBe(false)
    const loaded = await nodeIn(
      folders.plain,
      "const m = await import('x402-vault'); console.log(typeof m.createVaultClient)",
    )
    expect(loaded.trim()).toBe('function')
    const snippet = await nodeIn(
      folders.plain,
      `import { createPublicClient } from 'viem'
import { createVaultClient } from 'x402-vault'`,
    ).catch((error: { stderr?: string }) => error.stderr ?? '')
    expect(snippet).toContain("Cannot find package 'viem'")
  })

  it.each([
    ['express', 'hono'],
    ['hono', 'express'],
  ] as const)(
    'a seller on %s gets it and not %s; createPaywall loads every x402 package',
    async (framework, other) => {
      const folder = folders[framework]
      for (const name of [framework, `@x402/${framework}`])
        expect(has(folder, name), name).toBe(true)
      for (const name of [other, `@x402/${other}`]) expect(has(folder, name), name).toBe(false)
      // With every package in place, createPaywall gets as far as checking its options.
      const stdout = await nodeIn(
        folder,
        `const { createPaywall } = await import('x402-vault/${framework}')
const error = await createPaywall({}).catch((e) => e)
console.log(error.name, error.code)`,
      )
      expect(stdout.trim()).toMatch(/^Vault\w*Error (?!PEER_DEPENDENCY_MIS)[A-Z_]+$/)
    },
  )

  it('types resolve for every subpath export with NodeNext resolution', async () => {
    const subpaths = Object.keys(manifest.exports).filter((key) => key !== './package.json')
    expect(subpaths.sort()).toEqual(['.', './devnet', './express', './hono', './mcp'])
    // Each `@ts-expect-error` fails the compile if its module's types are `any` (or missing).
    const consumer = `
import { formatUsdc, parseUsdc, type VaultClient } from 'x402-vault'
import { startDevnet } from 'x402-vault/devnet'
import { createPaywall as expressPaywall } from 'x402-vault/express'
import { createPaywall as honoPaywall } from 'x402-vault/hono'
import { createServer, vaultTools } from 'x402-vault/mcp'

const amount: bigint = parseUsdc('1.5')
export const text: string = formatUsdc(amount)
// @ts-expect-error formatUsdc takes bigint base units
formatUsdc(1.5)
export type Vault = VaultClient
// @ts-expect-error the devnet's chain is base or base-sepolia
export const devnet = () => startDevnet({ chain: 'optimism' })
// @ts-expect-error createPaywall needs its options
export const express = () => expressPaywall()
// @ts-expect-error createPaywall needs its options
export const hono = () => honoPaywall()
// @ts-expect-error createServer takes options, not a number
export const mcp = () => createServer(1)
export const tools: readonly unknown[] = vaultTools
`
    await writeFile(join(folders.types, 'consumer.ts'), consumer)
    await typeCheck(folders.types, ['consumer.ts'], [])
  })
})

describe('the README and the guides, pasted into a TypeScript app', () => {
  it('every ```ts block type-checks under tsc --strict (TypeScript 5.9 and 7) against the installed tarball', async () => {
    const snippets = await docSnippets()
    expect(snippets.length).toBeGreaterThanOrEqual(8)
    // One file per block, each an ES module of its own (top-level await, names that repeat).
    const folder = join(folders.types, 'snippets')
    await mkdir(folder)
    // A TypeScript app has Node's and Express's types (`npm i -D @types/node @types/express`, as the
    // README says), and the buyer guide's `@x402/fetch`: linked from this repository, since npm's
    // cache cannot install them offline.
    await mkdir(join(folders.types, 'node_modules/@types'), { recursive: true })
    for (const types of ['@types/node', '@types/express', '@x402/fetch']) {
      await symlink(join(root, 'node_modules', types), join(folders.types, 'node_modules', types))
    }
    const files = await Promise.all(
      snippets.map(async ({ where, code }, index) => {
        const file = join(folder, `snippet-${index}.ts`)
        await writeFile(file, `// ${where}\n${code}`)
        return file
      }),
    )
    // tsc names each failing file; its first line says which block of which document it is.
    await typeCheck(folder, files, ['node'])
  })
})
