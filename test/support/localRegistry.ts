/**
 * The package as `npx` gets it: `npm pack` of this repository, and a private npm registry (verdaccio)
 * on loopback that serves it under the `beta` tag and proxies nothing, so that an install from it
 * needs no network and can only use what the tarball itself holds.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)
const root = join(import.meta.dirname, '../..')

const devDependencies = (
  JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    devDependencies: Record<string, string>
  }
).devDependencies

/**
 * A peer at the version this repository develops against, so that an install hits npm's cache.
 *
 * @example
 * peer('viem') // 'viem@2.57.20'
 */
export const peer = (name: string): string => `${name}@${devDependencies[name]}`

/** What an Express seller installs besides the package, as the README says, at this repository's versions. */
export const expressSeller: readonly string[] = [
  'viem',
  '@x402/core',
  '@x402/evm',
  '@x402/extensions',
  '@x402/express',
  'express',
].map(peer)

/** What `npm pack` made. */
export type PackedPackage = {
  /** The tarball's absolute path. */
  tarball: string
  /** Every file in it, such as `dist/cli/index.js`. */
  files: string[]
  /** Its unpacked size in bytes, as npm reports it. */
  unpackedSize: number
}

/**
 * Packs this repository's package (its `dist` as built) into `folder`.
 *
 * @example
 * const { tarball } = await packPackage(work)
 */
export async function packPackage(folder: string): Promise<PackedPackage> {
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', folder], {
    cwd: root,
  })
  const [packed] = JSON.parse(stdout) as {
    filename: string
    files: { path: string }[]
    unpackedSize: number
  }[]
  if (!packed) throw new Error('npm pack reported nothing')
  return {
    tarball: join(folder, packed.filename),
    files: packed.files.map((file) => file.path),
    unpackedSize: packed.unpackedSize,
  }
}

/**
 * The size of the files under `dir`, in bytes: what an install put on disk.
 *
 * @example
 * const bytes = await bytesUnder(join(folder, 'node_modules'))
 */
export async function bytesUnder(dir: string): Promise<number> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  const sizes = await Promise.all(
    entries
      .filter((entry) => entry.isFile())
      .map(async (entry) => (await stat(join(entry.parentPath, entry.name))).size),
  )
  return sizes.reduce((sum, size) => sum + size, 0)
}

/** A running private registry. */
export type LocalRegistry = {
  /** `http://127.0.0.1:<port>/` */
  url: string
  /** Publishes a tarball under a dist-tag, such as `beta`. */
  publish: (tarball: string, tag: string) => Promise<void>
  /**
   * The environment for `npm`/`npx` against this registry only, with `cache` as npm's cache (an empty
   * folder for a cold start) and no user or global configuration.
   */
  npmEnv: (cache: string) => Record<string, string>
  /** Stops the registry and deletes its storage. */
  stop: () => Promise<void>
}

// verdaccio 6 runs in a child process of its own: its logger and its many modules stay out of the
// caller, and the port it listens on (a free one, chosen by the OS) comes back on stdout.
const serverScript = `
const { runServer } = require(process.argv[1])
runServer(process.argv[2]).then((server) =>
  server.listen(0, '127.0.0.1', () => console.log('listening ' + server.address().port)))
`

// No uplinks: the registry serves what was published to it and nothing else.
const config = `storage: ./storage
auth:
  htpasswd:
    file: ./htpasswd
    max_users: 10
uplinks: {}
packages:
  '**':
    access: $all
    publish: $authenticated
log: { type: stdout, format: json, level: error }
`

/**
 * Starts verdaccio on 127.0.0.1 with its storage and configuration in a new temporary folder.
 *
 * @example
 * const registry = await startLocalRegistry()
 * await registry.publish(tarball, 'beta')
 * // npx -y x402-vault@beta, with registry.npmEnv(emptyCache)
 * await registry.stop()
 */
export async function startLocalRegistry(): Promise<LocalRegistry> {
  const folder = await mkdtemp(join(tmpdir(), 'x402-vault-registry-'))
  await writeFile(join(folder, 'config.yaml'), config)
  await writeFile(join(folder, 'user.npmrc'), '')
  await writeFile(join(folder, 'global.npmrc'), '')
  const child = spawn(
    process.execPath,
    ['-e', serverScript, join(root, 'node_modules/verdaccio'), join(folder, 'config.yaml')],
    { cwd: folder, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  const killOnExit = () => child.kill('SIGKILL')
  process.once('exit', killOnExit)
  const stop = async () => {
    process.off('exit', killOnExit)
    if (child.exitCode === null && child.signalCode === null) {
      child.kill()
      await once(child, 'exit')
    }
    await rm(folder, { recursive: true, force: true })
  }
  try {
    const port = await listeningPort(child)
    const url = `http://127.0.0.1:${port}/`
    const npmEnv = (cache: string): Record<string, string> => ({
      PATH: process.env.PATH ?? '',
      HOME: folder,
      npm_config_cache: cache,
      npm_config_registry: url,
      npm_config_userconfig: join(folder, 'user.npmrc'),
      npm_config_globalconfig: join(folder, 'global.npmrc'),
      npm_config_update_notifier: 'false',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
    })
    const token = await createUser(url)
    await writeFile(join(folder, 'publish.npmrc'), `//127.0.0.1:${port}/:_authToken=${token}\n`)
    const publish = async (tarball: string, tag: string) => {
      await run('npm', ['publish', tarball, '--tag', tag], {
        cwd: folder,
        env: {
          ...npmEnv(join(folder, 'publish-cache')),
          npm_config_userconfig: join(folder, 'publish.npmrc'),
        },
      })
    }
    return { url, publish, npmEnv, stop }
  } catch (error) {
    await stop()
    throw error
  }
}

/** Resolves with the port the child reports, or rejects with its stderr if it exits first. */
async function listeningPort(child: ChildProcess): Promise<number> {
  let stdout = ''
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`verdaccio did not start:\n${stderr}`)), 60_000)
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
      const port = /listening (\d+)/.exec(stdout)?.[1]
      if (port) {
        clearTimeout(timer)
        resolve(Number(port))
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`verdaccio exited with code ${code}:\n${stderr}`))
    })
  })
}

/** Adds a publishing user through the registry's CouchDB-style API; returns its token. */
async function createUser(url: string): Promise<string> {
  const response = await fetch(`${url}-/user/org.couchdb.user:publisher`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'publisher', password: 'local-registry-only' }),
  })
  const body = (await response.json()) as { token?: string }
  if (!response.ok || !body.token) throw new Error(`verdaccio refused the user: ${response.status}`)
  return body.token
}
