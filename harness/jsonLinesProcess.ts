/**
 * A process spoken to as an MCP client speaks over stdio, with nothing in between: one JSON-RPC
 * message per line on its stdin and stdout. For what an MCP client library would hide or slow down:
 * the exact bytes of the early handshake, and a cold start timed without a client library's cost.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'

/** One JSON-RPC message, as much of it as the callers read. */
export type JsonRpcLine = {
  id?: number | string
  result?: Record<string, unknown>
  error?: unknown
}

/** A 2025-era client's opening request, as a raw client writes it (id 1). */
export const initializeRequest = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'raw', version: '1' },
  },
} as const

/** The running process. */
export type JsonLinesProcess = {
  child: ChildProcessWithoutNullStreams
  /** Writes one message as a line on stdin. */
  send: (message: object) => void
  /** The next line from stdout, parsed; lines are kept until asked for. */
  next: () => Promise<JsonRpcLine>
  /** Everything on stderr so far. */
  stderr: () => string
  /** Resolves with the exit code. */
  exited: Promise<number | null>
}

/**
 * Spawns `node <args>` with exactly `env` and reads its stdout line by line.
 *
 * @param args - Node's arguments, such as the built bin's path.
 * @param env - The environment (nothing is inherited).
 * @returns The process and its line reader.
 * @example
 * const server = spawnJsonLines([mcpBin], { PATH: process.env.PATH ?? '' })
 * server.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params })
 * const answer = await server.next()
 */
export function spawnJsonLines(args: string[], env: NodeJS.ProcessEnv): JsonLinesProcess {
  const child = spawn(process.execPath, args, { env })
  const lines: JsonRpcLine[] = []
  const waiting: ((message: JsonRpcLine) => void)[] = []
  let buffered = ''
  let stderr = ''
  child.stderr.on('data', (chunk) => {
    stderr += chunk
  })
  child.stdout.on('data', (chunk) => {
    buffered += chunk
    for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
      const message = JSON.parse(buffered.slice(0, end)) as JsonRpcLine
      buffered = buffered.slice(end + 1)
      const waiter = waiting.shift()
      if (waiter) waiter(message)
      else lines.push(message)
    }
  })
  return {
    child,
    send: (message) => child.stdin.write(`${JSON.stringify(message)}\n`),
    next: () =>
      new Promise((resolve) => {
        const line = lines.shift()
        if (line) resolve(line)
        else waiting.push(resolve)
      }),
    stderr: () => stderr,
    exited: new Promise((resolve) => child.on('exit', resolve)),
  }
}
