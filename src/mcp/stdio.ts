import type {
  JSONRPCMessage,
  MessageExtraInfo,
  RequestId,
  Transport,
  TransportSendOptions,
} from '@modelcontextprotocol/server'
import { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio'
import { loadMcpConfig, type McpConfig, McpConfigError } from './config.js'
import { redactLogText } from './logger.js'
import { createVaultMcp } from './server.js'
import { type AnyVaultTool, guardToolCall } from './tool.js'

/**
 * Runs the MCP server over stdio until the client closes stdin: what `x402-vault mcp` and
 * `x402-vault-mcp` do. It serves the 2025-era handshake (`initialize`) and the 2026-07-28 revision
 * (`server/discover`, stateless requests) alike. A configuration error is one line on stderr and exit
 * code 1; stdout carries nothing but JSON-RPC.
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
  const vault = createVaultMcp(config, {})
  const transport = new GuardedTransport(new StdioServerTransport(), vault.tools)
  const closed = new Promise<void>((resolve) => {
    transport.closed = resolve
  })
  // One instance per connection (and one for a discovery probe): they share the vault connection.
  const handle = serveStdio(
    ({ era }) =>
      vault.newServer({
        refused: transport.refused,
        // A 2026-07-28 client has no handshake: its first tool call starts verification.
        onInitialized: era === 'legacy' ? vault.onInitialized : undefined,
      }),
    {
      transport,
      onerror: (error) => vault.logger.debug(`MCP: ${error.message}`),
    },
  )
  await closed
  await handle.close()
  return 0
}

/**
 * A transport that passes every inbound message through {@link guardToolCall} before the MCP SDK
 * parses it, so that arguments the SDK would mishandle get the tools' own refusal.
 */
class GuardedTransport implements Transport {
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined
  /** The refusals {@link guardToolCall} kept, by request id. */
  readonly refused = new Map<RequestId, string>()
  /** Called once when the client has gone. */
  closed: () => void = () => {}

  constructor(
    private readonly inner: Transport,
    private readonly tools: readonly AnyVaultTool[],
  ) {}

  start(): Promise<void> {
    this.inner.onmessage = (message, extra) => {
      guardToolCall(message, this.tools, this.refused)
      this.onmessage?.(message, extra)
    }
    this.inner.onerror = (error) => this.onerror?.(error)
    this.inner.onclose = () => {
      this.onclose?.()
      this.closed()
    }
    return this.inner.start()
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.inner.send(message, options)
  }

  close(): Promise<void> {
    return this.inner.close()
  }
}
