import { isDeepStrictEqual } from 'node:util'
import type {
  JSONRPCMessage,
  MessageExtraInfo,
  RequestId,
  Transport,
  TransportSendOptions,
} from '@modelcontextprotocol/server'
import { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio'
import { nodeHttpFetch } from '../sdk/shared.js'
import type { McpConfig } from './config.js'
import type { answerHandshakeEarly, EarlyHandshake } from './earlyHandshake.js'
import { type JsonRpcVerdict, jsonRpcLineFilter } from './jsonRpcCheck.js'
import type { McpLogger } from './logger.js'
import { createVaultMcp } from './server.js'
import { type AnyVaultTool, guardToolCall } from './tool.js'

/**
 * Serves an MCP session over stdio with the whole server (the MCP SDK and the tools), after
 * {@link answerHandshakeEarly} (or at once, when there is no recording).
 *
 * @param config - The checked configuration.
 * @param early - What to read (stdin, from its first byte) and the requests already answered.
 * @param gone - Aborted when the client has closed its end of stdout.
 * @returns 0 once the client has gone.
 * @example
 * return serveStdioSession(config, { input: process.stdin, answered: new Map(), closed: false })
 */
export async function serveStdioSession(
  config: McpConfig,
  early: EarlyHandshake,
  gone?: AbortSignal,
): Promise<number> {
  // Aborted once the client has gone: every RPC request in flight stops, so the process exits at
  // once rather than when a hung RPC's timeouts run out.
  const session = new AbortController()
  // A process of its own, started for one client: its first tool call must not wait for fetch's set-up.
  const vault = createVaultMcp(config, { signal: session.signal, rpcFetch: nodeHttpFetch })
  const refuse = ({ refusal, silent }: JsonRpcVerdict) => {
    if (silent) {
      vault.logger.warn(
        `Dropped a message that is not valid JSON-RPC and that JSON-RPC lets nobody answer (a notification or a response): ${refusal.error.message}`,
      )
    } else if (!session.signal.aborted) process.stdout.write(`${JSON.stringify(refusal)}\n`)
  }
  const transport = new GuardedTransport(
    new StdioServerTransport(early.input.pipe(jsonRpcLineFilter(refuse)), process.stdout),
    vault.tools,
    early.answered,
    vault.logger,
  )
  const closed = new Promise<void>((resolve) => {
    transport.closed = resolve
  })
  // The client closed its end of stdout: nobody reads the answers, so the session is over.
  const onGone = () => {
    transport.close().catch(() => {})
  }
  if (gone?.aborted) onGone()
  gone?.addEventListener('abort', onGone, { once: true })
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
  session.abort()
  await handle.close()
  return 0
}

/**
 * A transport that passes every inbound message through {@link guardToolCall} before the MCP SDK
 * parses it, so that arguments the SDK would mishandle get the tools' own refusal; and that drops the
 * server's answers to the requests answered early, which it reads again.
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
    private readonly answered: Map<RequestId, string>,
    private readonly logger: McpLogger,
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
    const id = 'method' in message ? undefined : (message as { id?: RequestId }).id
    const sent = id === undefined ? undefined : this.answered.get(id)
    if (id !== undefined && sent !== undefined) {
      this.answered.delete(id)
      // Compared as JSON, as the client sees both: the SDK tags results with symbol keys.
      const own = 'result' in message ? JSON.stringify(message.result) : undefined
      if (own === undefined || !isDeepStrictEqual(JSON.parse(own), JSON.parse(sent))) {
        this.logger.warn(
          `The early answer to request ${JSON.stringify(id)} differs from the server's own: rebuild the package.`,
        )
      }
      return Promise.resolve()
    }
    return this.inner.send(message, options)
  }

  close(): Promise<void> {
    return this.inner.close()
  }
}
