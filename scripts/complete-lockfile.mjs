#!/usr/bin/env node
// The registry mirror on our build machines serves only the Linux builds of
// platform-specific optional packages (biome, rollup, anvil). `npm install`
// then writes a lockfile without the other platforms' entries, and `npm ci`
// rejects it as out of sync. This script adds those entries back, with the
// os/cpu/libc fields npm uses to skip them on a non-matching machine, so the
// lockfile is complete and `npm ci` works everywhere.
//
// Run it after any `npm install` that changes the lockfile:
//   node scripts/complete-lockfile.mjs
import { readFileSync, writeFileSync } from 'node:fs'

const lockPath = new URL('../package-lock.json', import.meta.url)
const lock = JSON.parse(readFileSync(lockPath, 'utf8'))
const packages = lock.packages

const osNames = new Set([
  'android',
  'darwin',
  'freebsd',
  'linux',
  'openbsd',
  'openharmony',
  'sunos',
  'win32',
  'aix',
])
const cpuAliases = {
  amd64: 'x64',
  x64: 'x64',
  arm64: 'arm64',
  arm: 'arm',
  ia32: 'ia32',
  loong64: 'loong64',
  ppc64: 'ppc64',
  riscv64: 'riscv64',
  s390x: 's390x',
}

function platformOf(name) {
  const tokens = name.split('/').pop().split('-')
  const os = tokens.find((token) => osNames.has(token))
  const cpu = tokens.map((token) => cpuAliases[token]).find(Boolean)
  if (!os || !cpu) return undefined
  const platform = { os: [os], cpu: [cpu] }
  if (os === 'linux') {
    platform.libc = [tokens.some((token) => token.startsWith('musl')) ? 'musl' : 'glibc']
  }
  return platform
}

let added = 0
for (const [path, entry] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`
    const nestedKey = `${path}/node_modules/${name}`
    if (packages[key] || packages[nestedKey]) continue
    const platform = platformOf(name)
    if (!platform) {
      console.warn(`skipped ${name}: cannot tell its platform from the name`)
      continue
    }
    packages[key] = {
      version,
      ...platform,
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
    }
    added++
  }
}

const sorted = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
)
lock.packages = sorted
writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`)
console.log(`added ${added} platform entries to package-lock.json`)
