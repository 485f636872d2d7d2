import {
  InMemoryTransport,
  type JSONRPCMessage,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server'
import { serveStdio } from '@modelcontextprotocol/server/stdio'
import type { HandshakeAnswers, HandshakeRecording } from './handshakeRecording.js'
import { createVaultMcp } from './server.js'

/**
 * Records what the server answers to a 2025-era handshake, for every protocol version it supports
 * (a client asking for another one meets the whole server): each handshake runs through the same stdio entry (`serveStdio`) and the
 * same server instances as a real connection, over an in-memory pipe. The build embeds the result in
 * the bins, and a test checks that the built server's early answers equal the live ones.
 *
 * @returns The `initialize` and `tools/list` results.
 * @example
 * const recording = await recordHandshake()
 */
export async function recordHandshake(): Promise<HandshakeRecording> {
  // Nothing here reaches the RPC: the handshake never reads the chain.
  const vault = createVaultMcp(
    { chain: 'base-sepolia', rpcUrl: 'http://127.0.0.1:9', maxPlanUsdc: 1n, logLevel: 'error' },
    { logger: { debug() {}, info() {}, warn() {}, error() {} } },
  )
  const recording: HandshakeRecording = { initialize: {}, toolsList: {} }
  const listings = new Set<string>()
  for (const version of SUPPORTED_PROTOCOL_VERSIONS) {
    const { initialize, toolsList } = await handshake(vault.newServer, version)
    recording.initialize[version] = initialize
    recording.toolsList = toolsList
    listings.add(JSON.stringify(toolsList))
  }
  if (listings.size !== 1) {
    throw new Error('The tool listing differs between protocol versions: record one per version.')
  }
  return recording
}

/**
 * The recording as the early handshake writes it: each result as JSON text.
 *
 * @param recording - From {@link recordHandshake}.
 * @returns The same results, serialized.
 * @example
 * const answers = serializeHandshake(await recordHandshake())
 */
export function serializeHandshake(recording: HandshakeRecording): HandshakeAnswers {
  return {
    initialize: Object.fromEntries(
      Object.entries(recording.initialize).map(([version, result]) => [
        version,
        JSON.stringify(result),
      ]),
    ),
    toolsList: JSON.stringify(recording.toolsList),
  }
}

/** One handshake over an in-memory pipe: `initialize`, `notifications/initialized`, `tools/list`. */
async function handshake(
  newServer: () => ReturnType<ReturnType<typeof createVaultMcp>['newServer']>,
  protocolVersion: string,
): Promise<{ initialize: Record<string, unknown>; toolsList: Record<string, unknown> }> {
  const [client, wire] = InMemoryTransport.createLinkedPair()
  const answers = new Map<number, (message: JSONRPCMessage) => void>()
  client.onmessage = (message) => {
    if ('id' in message && typeof message.id === 'number') answers.get(message.id)?.(message)
  }
  await client.start()
  const handle = serveStdio(() => newServer(), { transport: wire })
  const request = (id: number, method: string, params?: Record<string, unknown>) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      answers.set(id, (message) =>
        'result' in message
          ? // As the wire carries it: the MCP SDK tags results with symbol keys JSON leaves out.
            resolve(JSON.parse(JSON.stringify(message.result)) as Record<string, unknown>)
          : reject(new Error(`The recorded ${method} failed: ${JSON.stringify(message)}`)),
      )
      void client.send({ jsonrpc: '2.0', id, method, ...(params && { params }) })
    })
  try {
    const initialize = await request(1, 'initialize', {
      protocolVersion,
      capabilities: {},
      clientInfo: { name: 'x402-vault-build', version: '0.0.0' },
    })
    await client.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    const toolsList = await request(2, 'tools/list')
    return { initialize, toolsList }
  } finally {
    await handle.close()
    await client.close()
  }
}
