/**
 * The built stdio server answers the handshake before it loads the MCP SDK: its early answers must be
 * the live server's own, and the whole server must then take the session over with no answer sent
 * twice. Runs the built bin; the RPC is never reached (nothing here reads the chain).
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process'
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { spawnJsonLines } from '../../harness/jsonLinesProcess.js'
import type { HandshakeRecording } from '../../src/mcp/handshakeRecording.js'
import { recordHandshake } from '../../src/mcp/recordHandshake.js'
import { mcpBin } from '../support/mcp.js'

let live: HandshakeRecording
beforeAll(async () => {
  live = await recordHandshake()
})

const children: ChildProcessWithoutNullStreams[] = []
afterEach(() => {
  for (const child of children.splice(0)) child.kill()
})

/** Starts the built bin, offline (nothing here reads the chain). */
function startBin() {
  const bin = spawnJsonLines([mcpBin], {
    PATH: process.env.PATH,
    BASE_SEPOLIA_RPC_URL: 'http://127.0.0.1:9',
    MCP_LOG_LEVEL: 'debug',
  })
  children.push(bin.child)
  return bin
}

const initialize = (protocolVersion: string) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'test', version: '1.0.0' } },
})

describe('the built stdio server’s early start', () => {
  it.each([...SUPPORTED_PROTOCOL_VERSIONS])(
    'answers the %s handshake as the live server does, then serves a tool call, each id once',
    async (version) => {
      const bin = startBin()
      bin.send(initialize(version))
      expect(await bin.next()).toEqual({ jsonrpc: '2.0', id: 1, result: live.initialize[version] })
      bin.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
      bin.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' })
      expect(await bin.next()).toEqual({ jsonrpc: '2.0', id: 2, result: live.toolsList })
      // Answered by the whole server, which read ids 1 and 2 again and kept its answers to itself.
      bin.send({
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'vault_get_position', arguments: { wallet: '0x12' } },
      })
      const call = await bin.next()
      expect(call.id).toBe(3)
      expect(call.result?.isError).toBe(true)
      expect(JSON.stringify(call.result)).toContain('INVALID_ADDRESS')
      bin.send({ jsonrpc: '2.0', id: 4, method: 'ping' })
      expect(await bin.next()).toEqual({ jsonrpc: '2.0', id: 4, result: {} })
      bin.child.stdin.end()
      expect(await bin.exited).toBe(0)
      expect(bin.stderr()).not.toContain('differs')
    },
  )

  it('a client that only lists the tools and leaves: the server exits 0 without loading the rest', async () => {
    const bin = startBin()
    bin.send(initialize('2025-11-25'))
    await bin.next()
    bin.child.stdin.end()
    expect(await bin.exited).toBe(0)
  })

  it('the start is one small file that loads nothing but Node’s own modules before its first answer', () => {
    const start = join(mcpBin, '../stdio.js')
    const code = readFileSync(start, 'utf8')
    const staticImports = [...code.matchAll(/^import .* from ["']([^"']+)["']/gm)].map(
      ([, specifier]) => specifier,
    )
    expect(staticImports.every((specifier) => /^(node:)?[a-z_/]+$/.test(specifier ?? ''))).toBe(
      true,
    )
    expect(code).toContain('import("./session.js")')
    // The recording and the configuration's checks: well under the MCP SDK's size alone.
    expect(statSync(start).size).toBeLessThan(200_000)
  })
})
