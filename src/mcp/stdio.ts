import { loadMcpConfig, type McpConfig, McpConfigError } from './config.js'
import { answerHandshakeEarly, type EarlyHandshake } from './earlyHandshake.js'
import { recordedHandshake } from './handshakeRecording.js'
import { redactLogText } from './logger.js'

/**
 * Runs the MCP server over stdio until the client closes stdin: what `x402-vault mcp` and
 * `x402-vault-mcp` do. It serves the 2025-era handshake (`initialize`) and the 2026-07-28 revision
 * (`server/discover`, stateless requests) alike. A configuration error is one line on stderr and exit
 * code 1; stdout carries nothing but JSON-RPC.
 *
 * The built bins answer the opening handshake from a recording of the server's own answers, and load
 * the MCP SDK and the tools only then, so that a client has its tool list about as soon as Node has
 * started.
 *
 * @param env - The environment, usually `process.env`.
 * @returns The process exit code once the client has gone (0), or 1 when the server cannot start.
 * @example
 * process.exitCode = await runStdioServer(process.env)
 */
export async function runStdioServer(env: NodeJS.ProcessEnv): Promise<number> {
  let config: McpConfig
  try {
    config = await loadMcpConfig(env)
  } catch (error) {
    const message = error instanceof McpConfigError ? error.message : String(error)
    process.stderr.write(`x402-vault-mcp: ${redactLogText(message).replace(/\s*\n\s*/g, ' ')}\n`)
    return 1
  }
  // A client that closes its end of stdout makes every later write fail (EPIPE): that ends the
  // session quietly, never an uncaught error with a stack trace on stderr.
  const gone = new AbortController()
  process.stdout.on('error', () => gone.abort())
  const recording = recordedHandshake()
  const early: EarlyHandshake = recording
    ? await answerHandshakeEarly(process.stdin, process.stdout, recording, gone.signal)
    : { input: process.stdin, answered: new Map(), closed: false }
  if (!early.closed) {
    const { serveStdioSession } = await import('./stdioSession.js')
    await serveStdioSession(config, early, gone.signal)
  }
  // stdin may still be open (only stdout was closed): stop reading it, so the process can exit.
  process.stdin.destroy()
  return 0
}
