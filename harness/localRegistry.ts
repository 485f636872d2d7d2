/**
 * The package as `npx` gets it: `npm pack` of this repository, and an npm registry on loopback as users
 * meet it. The packed package is published to a private registry (verdaccio) under the `beta` tag; any
 * other package is served as the public registry serves it: its metadata and tarballs fetched once
 * from the registry npm is configured with, then replayed from that recording, byte for byte, at their
 * real size. A front on loopback routes each request and records it, so that a test or the bench sees
 * which package documents npm asked for, and how large they were.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises'
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
} from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)
const root = join(import.meta.dirname, '..')

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

/** One request npm made to the registry, as the front saw it. */
export type RegistryRequest = {
  /** `GET`, `PUT`, … */
  method: string
  /** The path, decoded: `/x402-vault`, `/@x402/core`, `/viem/-/viem-2.57.20.tgz`. */
  path: string
  /** The package a document or tarball belongs to; `undefined` for the registry's own endpoints. */
  packageName: string | undefined
  /** A package's document (its packument), a tarball, or anything else (log-in, publish). */
  kind: 'packument' | 'tarball' | 'other'
  /**
   * For a packument: npm asked for the full document (`Accept: application/json`), not the
   * abbreviated one (`application/vnd.npm.install-v1+json`).
   */
  full: boolean
  /** Served by the private registry (what was published to it) or replayed from the public one. */
  source: 'published' | 'recorded'
  status: number
  /** The size of the body served, in bytes. */
  bytes: number
}

/** A running registry. */
export type LocalRegistry = {
  /** `http://127.0.0.1:<port>/`: the front, which npm talks to. */
  url: string
  /** Where packages that were not published here come from, such as `https://registry.npmjs.org/`. */
  upstream: string
  /** Publishes a tarball under a dist-tag, such as `beta`. */
  publish: (tarball: string, tag: string) => Promise<void>
  /**
   * The environment for `npm`/`npx` against this registry only, with `cache` as npm's cache (an empty
   * folder for a cold start) and no user or global configuration.
   */
  npmEnv: (cache: string) => Record<string, string>
  /** The requests made since the registry started or since the last call, in the order they came. */
  takeRequests: () => RegistryRequest[]
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

// No uplinks: verdaccio serves what was published to it and answers 404 for anything else, which the
// front then serves from the public registry's recording. verdaccio would rewrite and store what it
// proxies; the recording serves the public registry's own bytes.
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
 * Starts the registry on 127.0.0.1: verdaccio with its storage and configuration in a new temporary
 * folder, behind a front that records every request and serves any package not published here as
 * `upstream` serves it (recorded on first use, then replayed).
 *
 * @param options - `upstream`: the registry to record from; by default the one npm is configured with.
 * @example
 * const registry = await startLocalRegistry()
 * await registry.publish(tarball, 'beta')
 * // npx -y x402-vault@beta, with registry.npmEnv(emptyCache)
 * const asked = registry.takeRequests().filter((request) => request.kind === 'packument')
 * await registry.stop()
 */
export async function startLocalRegistry(
  options: { upstream?: string } = {},
): Promise<LocalRegistry> {
  const upstream = options.upstream ?? (await configuredRegistry())
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
  let front: Server | undefined
  const stop = async () => {
    process.off('exit', killOnExit)
    if (front) {
      front.closeAllConnections()
      await new Promise((resolve) => front?.close(resolve))
    }
    if (child.exitCode === null && child.signalCode === null) {
      child.kill()
      await once(child, 'exit')
    }
    await rm(folder, { recursive: true, force: true })
  }
  try {
    const verdaccioPort = await listeningPort(child)
    const requests: RegistryRequest[] = []
    front = startFront(verdaccioPort, upstream, requests)
    await once(front, 'listening')
    const port = (front.address() as AddressInfo).port
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
    const takeRequests = () => requests.splice(0, requests.length)
    return { url, upstream, publish, npmEnv, takeRequests, stop }
  } catch (error) {
    await stop()
    throw error
  }
}

/** The registry npm is configured with here (`npm config get registry`), ending with `/`. */
async function configuredRegistry(): Promise<string> {
  const configured =
    process.env.npm_config_registry ?? (await run('npm', ['config', 'get', 'registry'])).stdout
  const url = configured.trim()
  return url.endsWith('/') ? url : `${url}/`
}

/** A response of the upstream registry, kept to be served again as it was. */
type Recording = { status: number; headers: Record<string, string>; body: Buffer }

/**
 * The front: every request goes to verdaccio first; a GET that verdaccio answers 404 (a package not
 * published there) is served from `upstream`'s recorded answer to the same path and `Accept`.
 */
function startFront(verdaccioPort: number, upstream: string, requests: RegistryRequest[]): Server {
  const recordings = new Map<string, Promise<Recording>>()
  const recorded = (path: string, accept: string): Promise<Recording> => {
    const key = `${accept}\n${path}`
    let recording = recordings.get(key)
    if (!recording) {
      recording = record(new URL(path.slice(1), upstream), accept)
      recordings.set(key, recording)
      // A failed fetch (no network) is not kept: the next request tries again.
      recording.catch(() => recordings.delete(key))
    }
    return recording
  }
  const server = createServer((incoming, response) => {
    void (async () => {
      const body = Buffer.concat(await incoming.toArray())
      const path = incoming.url ?? '/'
      const seen = describeRequest(incoming.method ?? 'GET', path, incoming.headers)
      const local = await forward(verdaccioPort, incoming, body)
      if (local.status === 404 && incoming.method === 'GET' && seen.packageName !== undefined) {
        local.response.resume()
        const {
          status,
          headers,
          body: recordedBody,
        } = await recorded(path, incoming.headers.accept ?? '*/*')
        response.writeHead(status, { ...headers, 'content-length': recordedBody.length })
        response.end(recordedBody)
        requests.push({ ...seen, source: 'recorded', status, bytes: recordedBody.length })
        return
      }
      response.writeHead(local.status, local.response.headers)
      let bytes = 0
      local.response.on('data', (chunk: Buffer) => {
        bytes += chunk.length
      })
      local.response.pipe(response)
      await once(local.response, 'end')
      requests.push({ ...seen, source: 'published', status: local.status, bytes })
    })().catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(502, { 'content-type': 'text/plain' })
      response.end(`registry front: ${(error as Error).message}`)
    })
  })
  server.listen(0, '127.0.0.1')
  return server
}

/** Sends a request on to verdaccio as it came (its `Host` too, so that tarball URLs name the front). */
async function forward(
  port: number,
  incoming: IncomingMessage,
  body: Buffer,
): Promise<{ status: number; response: IncomingMessage }> {
  const sent = httpRequest({
    host: '127.0.0.1',
    port,
    method: incoming.method,
    path: incoming.url,
    headers: incoming.headers,
  })
  sent.end(body)
  const [response] = (await once(sent, 'response')) as [IncomingMessage]
  return { status: response.statusCode ?? 502, response }
}

/** Fetches one document or tarball from the upstream registry, whole (decompressed), with its type. */
async function record(url: URL, accept: string): Promise<Recording> {
  const response = await fetch(url, { headers: { accept } })
  const body = Buffer.from(await response.arrayBuffer())
  const headers: Record<string, string> = {}
  for (const name of ['content-type', 'etag', 'last-modified', 'cache-control']) {
    const value = response.headers.get(name)
    if (value !== null) headers[name] = value
  }
  return { status: response.status, headers, body }
}

/** What a request is about, from its method, path and `Accept` header. */
function describeRequest(
  method: string,
  url: string,
  headers: IncomingHttpHeaders,
): Pick<RegistryRequest, 'method' | 'path' | 'packageName' | 'kind' | 'full'> {
  const path = decodeURIComponent(url.split('?')[0] ?? '/')
  // `/name`, `/@scope/name`, or a tarball under either: `/name/-/name-1.0.0.tgz`.
  const match = /^\/((?:@[^/]+\/)?[^/@-][^/]*)(\/-\/[^/]+\.tgz)?$/.exec(path)
  if (method !== 'GET' || !match)
    return { method, path, packageName: undefined, kind: 'other', full: false }
  const tarball = match[2] !== undefined
  const abbreviated = (headers.accept ?? '').includes('application/vnd.npm.install-v1+json')
  return {
    method,
    path,
    packageName: match[1],
    kind: tarball ? 'tarball' : 'packument',
    full: !tarball && !abbreviated,
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
