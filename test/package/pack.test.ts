/**
 * The package as users get it: `npm pack` once, then installs from that tarball into empty folders, as
 * a seller on Express, a seller on Hono, a plain install (the MCP server through npx), and a TypeScript
 * consumer of every subpath. Installs go through npm's cache (npm ci filled it) and the registry.
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mcpToolNames } from '../support/mcpToolNames.js'

const run = promisify(execFile)
const root = join(import.meta.dirname, '../..')
const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
  version: string
  exports: Record<string, unknown>
  devDependencies: Record<string, string>
}
/** A peer at the version this repository develops against, so that installs hit npm's cache. */
const peer = (name: string) => `${name}@${manifest.devDependencies[name]}`
const frameworks = ['express', 'hono', '@x402/express', '@x402/hono'] as const

let work: string
let tarball: string
let packedFiles: string[]
/** Install folders, by who installs. */
const folders = { plain: '', express: '', hono: '', types: '' }

/** Installs the tarball and `packages` into a new empty folder. */
async function installInto(name: keyof typeof folders, packages: string[]): Promise<void> {
  const folder = join(work, name)
  await mkdir(folder)
  await writeFile(
    join(folder, 'package.json'),
    JSON.stringify({ name: `consumer-${name}`, private: true, type: 'module' }),
  )
  await run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, ...packages],
    { cwd: folder },
  )
  folders[name] = folder
}

const has = (folder: string, name: string) => existsSync(join(folder, 'node_modules', name))

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'x402-vault-pack-'))
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: root })
  const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[]
  if (!packed) throw new Error('npm pack reported nothing')
  tarball = join(work, packed.filename)
  packedFiles = packed.files.map((file) => file.path)
  // Parallel installs share npm's cache safely; one after the other would take four times as long.
  await Promise.all([
    installInto('plain', []),
    installInto('express', [peer('@x402/express'), peer('express')]),
    installInto('hono', [peer('@x402/hono'), peer('hono')]),
    installInto('types', [
      peer('@x402/express'),
      peer('express'),
      peer('@x402/hono'),
      peer('hono'),
      peer('@modelcontextprotocol/sdk'),
    ]),
  ])
}, 240_000)

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true })
})

describe('npm pack', () => {
  it('holds only dist (no source maps), the README, the CHANGELOG, the guides, LICENSE and package.json', () => {
    for (const path of packedFiles) {
      expect(path).toMatch(
        /^(dist\/.+\.(js|d\.ts)|README\.md|CHANGELOG\.md|docs\/[a-z-]+\.md|LICENSE|package\.json)$/,
      )
    }
    for (const path of ['dist/cli/index.js', 'dist/mcp/bin.js', 'README.md', 'docs/seller.md']) {
      expect(packedFiles).toContain(path)
    }
  })
})

describe('installed from the tarball', () => {
  it('a plain install brings no web framework, and its bins carry shebangs and run on this Node', async () => {
    for (const name of frameworks) expect(has(folders.plain, name), name).toBe(false)
    const bin = join(folders.plain, 'node_modules/x402-vault/dist')
    for (const file of ['cli/index.js', 'mcp/bin.js']) {
      expect((await readFile(join(bin, file), 'utf8')).split('\n')[0], file).toBe(
        '#!/usr/bin/env node',
      )
    }
    // Through npm's bin links, as npx runs them: the shebang picks the `node` on PATH.
    const help = await run(join(folders.plain, 'node_modules/.bin/x402-vault'), ['--help'])
    expect(help.stdout).toMatch(/^Usage: x402-vault <command>/)
    const node = await run('node', ['--version'])
    expect(node.stdout).toMatch(/^v20\./)
  })

  it('`x402-vault mcp` answers tools/list through a real MCP client', async () => {
    const transport = new StdioClientTransport({
      command: join(folders.plain, 'node_modules/.bin/x402-vault'),
      args: ['mcp'],
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
  })

  it('an Express seller gets Express and not Hono; x402-vault/express loads', async () => {
    for (const name of ['express', '@x402/express'])
      expect(has(folders.express, name), name).toBe(true)
    for (const name of ['hono', '@x402/hono']) expect(has(folders.express, name), name).toBe(false)
    const { stdout } = await run(
      'node',
      [
        '--input-type=module',
        '-e',
        "const m = await import('x402-vault/express'); console.log(typeof m.createPaywall)",
      ],
      { cwd: folders.express },
    )
    expect(stdout.trim()).toBe('function')
  })

  it('a Hono seller gets Hono and not Express; x402-vault/hono loads', async () => {
    for (const name of ['hono', '@x402/hono']) expect(has(folders.hono, name), name).toBe(true)
    for (const name of ['express', '@x402/express'])
      expect(has(folders.hono, name), name).toBe(false)
    const { stdout } = await run(
      'node',
      [
        '--input-type=module',
        '-e',
        "const m = await import('x402-vault/hono'); console.log(typeof m.createPaywall)",
      ],
      { cwd: folders.hono },
    )
    expect(stdout.trim()).toBe('function')
  })

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
    await writeFile(
      join(folders.types, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2022',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: [],
        },
        files: ['consumer.ts'],
      }),
    )
    const tsc = join(root, 'node_modules/typescript/bin/tsc')
    // tsc exits non-zero on any error, an unused `@ts-expect-error` included, and prints it on stdout.
    await run(process.execPath, [tsc, '-p', folders.types]).catch((error: { stdout?: string }) => {
      throw new Error(`tsc failed:\n${error.stdout}`)
    })
  })
})
