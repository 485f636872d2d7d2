#!/usr/bin/env node
// Builds the MCP Bundle (.mcpb) that Claude Desktop installs with a double-click: mcpb/manifest.json,
// the self-contained MCP bin from dist/ and only the chunks it loads, and a package.json that makes
// Node read them as ES modules. The bundle lands in build/ (not dist/, so it never enters the npm
// tarball). Run `npm run build:mcpb` (it builds dist/ first), or
//   node scripts/build-mcpb.mjs [output.mcpb]
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { packExtension } from '@anthropic-ai/mcpb/cli'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const manifest = JSON.parse(readFileSync(join(root, 'mcpb/manifest.json'), 'utf8'))
if (manifest.version !== pkg.version) {
  throw new Error(`mcpb/manifest.json has version ${manifest.version}, package.json ${pkg.version}`)
}
const output = resolve(process.argv[2] ?? join(root, 'build', `${pkg.name}-${pkg.version}.mcpb`))

/** The bin and every module it imports, statically or dynamically, through relative specifiers. */
function reachable(entry) {
  const seen = new Set()
  const pending = [entry]
  while (pending.length > 0) {
    const file = pending.pop()
    if (seen.has(file)) continue
    seen.add(file)
    const code = readFileSync(file, 'utf8')
    for (const [, specifier] of code.matchAll(
      /\b(?:from|import)\s*\(?\s*["'](\.\.?\/[^"'\s]+\.js)["']/g,
    )) {
      pending.push(resolve(dirname(file), specifier))
    }
  }
  return [...seen]
}

const dist = join(root, 'dist')
// The manifest's entry point is server/<path in dist>: the chunks keep their place beside it.
const entry = join(dist, relative('server', manifest.server.entry_point))
const stage = mkdtempSync(join(tmpdir(), 'x402-vault-mcpb-'))
try {
  for (const file of reachable(entry)) {
    const target = join(stage, 'server', relative(dist, file))
    mkdirSync(dirname(target), { recursive: true })
    copyFileSync(file, target)
  }
  writeFileSync(join(stage, 'server/package.json'), `${JSON.stringify({ type: 'module' })}\n`)
  copyFileSync(join(root, 'mcpb/manifest.json'), join(stage, 'manifest.json'))
  copyFileSync(join(root, 'LICENSE'), join(stage, 'LICENSE'))
  mkdirSync(dirname(output), { recursive: true })
  if (!(await packExtension({ extensionPath: stage, outputPath: output, silent: true }))) {
    throw new Error('mcpb pack failed: see above')
  }
  console.log(relative(process.cwd(), output))
} finally {
  rmSync(stage, { recursive: true, force: true })
}
