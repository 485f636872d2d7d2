import {
  type RequestId,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server'
import type { McpLogger } from '../logger.js'
import type { VaultMcp } from '../server.js'

/**
 * Serves a 2025-era request that the shared server does not take (`initialize`, a notification, one
 * with `_meta` or odd headers), statelessly: a new server instance over the shared parts and the MCP
 * SDK's single-request transport, answered with one JSON body (the protocol lets a server answer a
 * POST with JSON or an event stream; this server sends nothing before a result, so a stream would
 * only frame that one message).
 *
 * @param parts - The handler's vault parts and its logger (transport errors at debug level).
 * @param request - The request as the SDK is to see it (its body already parsed).
 * @param message - The parsed body.
 * @param refused - What `guardToolCall` kept for the request.
 * @param signal - Aborted on a timeout or a client that hung up: the server is torn down.
 * @returns The SDK's answer.
 * @example
 * return serveSingleRequest({ vault, logger }, forwarded, message, refused, controller.signal)
 */
export async function serveSingleRequest(
  parts: { vault: VaultMcp; logger: McpLogger },
  request: Request,
  message: unknown,
  refused: Map<RequestId, string>,
  signal: AbortSignal,
): Promise<Response> {
  const server = parts.vault.newServer({ refused })
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  })
  transport.onerror = (error) => parts.logger.debug(`MCP: ${error.message}`)
  const teardown = () => {
    transport.close().catch(() => {})
    server.close().catch(() => {})
  }
  signal.addEventListener('abort', teardown, { once: true })
  await server.connect(transport)
  try {
    return await transport.handleRequest(request, { parsedBody: message })
  } finally {
    signal.removeEventListener('abort', teardown)
    teardown()
  }
}
