import { checkJsonRpcMessage } from '../jsonRpcCheck.js'
import type { HttpRefusal } from './check.js'

/**
 * Refuses (400 `INVALID_MESSAGE`) a message that is not one valid JSON-RPC request, notification or
 * response, with JSON-RPC's own error (-32600 or -32602, see {@link checkJsonRpcMessage}) as the
 * body. Over HTTP even a notification gets its refusal: the MCP transport allows a 400 there.
 *
 * @param message - The parsed body.
 * @returns The refusal, or `undefined` for a message the MCP SDK may have.
 * @example
 * validJsonRpc({ jsonrpc: '1.0', id: 3, method: 'tools/list' })?.body?.error.code // -32600
 */
export function validJsonRpc(message: unknown): HttpRefusal | undefined {
  const invalid = checkJsonRpcMessage(message)
  if (invalid === undefined) return undefined
  return { status: 400, reason: 'INVALID_MESSAGE', body: invalid.refusal }
}
