import {
  type JSONRPCMessage,
  type JSONRPCRequest,
  type McpServer,
  type RequestId,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Transport,
} from '@modelcontextprotocol/server'
import { isPlainObject } from './isPlainObject.js'
import { isRequestId } from './jsonRpcCheck.js'
import type { McpLogger } from './logger.js'
import type { VaultMcp } from './server.js'

/** What {@link createSharedLegacyServer} returns: the HTTP handler's path for 2025-era calls. */
export type SharedLegacyServer = {
  /**
   * Whether this request takes the shared server: one 2025-era request (not `initialize`) with no
   * `_meta` and a protocol version header that is absent or 2025-era. Anything else goes through the
   * MCP SDK's own transports, which judge it. (The HTTP handler has checked that the client accepts
   * JSON, the one form the answer takes.)
   */
  takes: (request: Request, message: unknown) => message is JSONRPCRequest
  /**
   * Answers one request, with one JSON body.
   *
   * @param message - The request, checked by `takes`.
   * @param refusal - What `guardToolCall` kept for it, if anything.
   * @param signal - Aborted when the HTTP request ends early: the call is cancelled.
   */
  answer: (
    request: Request,
    message: JSONRPCRequest,
    refusal: string | undefined,
    signal: AbortSignal,
  ) => Promise<Response>
  /** Closes the server: calls in flight are cancelled. */
  close: () => Promise<void>
}

const legacyVersions: ReadonlySet<string> = new Set(SUPPORTED_PROTOCOL_VERSIONS)

/**
 * One long-lived MCP server for the 2025-era calls of every HTTP client. A stateless server could
 * build a server and a transport for each request, as the SDK's stateless transport expects, but
 * under load that costs more CPU than the call itself (about 0.5 ms a request, so the 50th of 50
 * concurrent reads waits some 25 ms behind the others). Requests from different clients may reuse
 * the same id, so each gets an id of the server's own while it runs, and its answer gets the
 * client's id back. Nothing else is shared between requests: a 2025-era `tools/call` or
 * `tools/list` over stateless HTTP carries everything it needs, and `initialize` still gets a server
 * of its own.
 *
 * @param vault - The MCP parts the HTTP handler built once.
 * @param logger - For transport errors (at debug level).
 * @returns `{ takes, answer, close }`.
 * @example
 * if (shared.takes(request, message)) return shared.answer(request, message, undefined, signal)
 */
export function createSharedLegacyServer(vault: VaultMcp, logger: McpLogger): SharedLegacyServer {
  const refused = new Map<RequestId, string>()
  const waiting = new Map<number, (answer: JSONRPCMessage | undefined) => void>()
  let lastId = 0
  const transport: Transport = {
    start: async () => {},
    async send(message) {
      // Only answers go back; the tools send no notifications, and a stateless exchange could not
      // carry a request from the server.
      if (!('id' in message) || typeof message.id !== 'number' || 'method' in message) return
      const resolve = waiting.get(message.id)
      waiting.delete(message.id)
      resolve?.(message)
    },
    async close() {
      transport.onclose?.()
    },
  }
  let server: McpServer | undefined
  let connected: Promise<void> | undefined

  /** Stops waiting for the answer to `id` and cancels the call, unless it was answered already. */
  const cancel = (id: number, reason: string) => {
    const resolve = waiting.get(id)
    if (!resolve) return
    waiting.delete(id)
    transport.onmessage?.({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: id, reason },
    })
    resolve(undefined)
  }

  return {
    takes(request, message): message is JSONRPCRequest {
      if (!isPlainObject(message)) return false
      const { jsonrpc, id, method, params } = message
      if (jsonrpc !== '2.0' || !isRequestId(id) || typeof method !== 'string') return false
      if (method === 'initialize') return false
      if (params !== undefined && (!isPlainObject(params) || '_meta' in params)) return false
      const version = request.headers.get('mcp-protocol-version')
      return version === null || legacyVersions.has(version)
    },

    async answer(request, message, refusal, signal) {
      if (!server) {
        server = vault.newServer({ refused })
        transport.onerror = (error) => logger.debug(`MCP: ${error.message}`)
        connected = server.connect(transport)
      }
      await connected
      lastId += 1
      const id = lastId
      if (refusal !== undefined) refused.set(id, refusal)
      const answered = new Promise<JSONRPCMessage | undefined>((resolve) => {
        waiting.set(id, resolve)
      })
      const onAbort = () => cancel(id, 'The HTTP request ended.')
      signal.addEventListener('abort', onAbort, { once: true })
      transport.onmessage?.({ ...message, id }, { request })
      const answer = await answered
      signal.removeEventListener('abort', onAbort)
      refused.delete(id)
      // Cancelled: the HTTP handler has answered the client already (499, 504 or 503).
      if (answer === undefined) return new Response(null, { status: 499 })
      // As bytes: a string body would be scanned for lone surrogates, character by character.
      return new Response(Buffer.from(JSON.stringify({ ...answer, id: message.id })), {
        status: 200,
        headers: { 'content-type': 'application/json' },
      })
    },

    async close() {
      for (const id of [...waiting.keys()]) cancel(id, 'The server is shutting down.')
      await server?.close()
    },
  }
}
