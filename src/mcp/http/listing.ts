import type { RequestId } from '@modelcontextprotocol/server'
import { isPlainObject } from '../isPlainObject.js'
import { isEmptyParams, isRequestId } from '../jsonRpcCheck.js'

/**
 * `tools/list` with no parameters (no cursor, no `_meta`): a request whose answer never changes.
 *
 * @param message - The parsed body.
 * @returns Whether the kept listing answers it.
 * @example
 * isPlainToolsList({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) // true
 */
export function isPlainToolsList(message: unknown): message is { id: RequestId } {
  if (!isPlainObject(message)) return false
  const { jsonrpc, method, id, params } = message
  return (
    jsonrpc === '2.0' &&
    method === 'tools/list' &&
    isRequestId(id) &&
    isEmptyParams(params) &&
    Object.keys(message).length === (params === undefined ? 3 : 4)
  )
}

/**
 * The answer to a plain `tools/list` from the listing the server answered once.
 *
 * @param id - The request's id.
 * @param listing - The `result` the shared server answered, as JSON bytes.
 * @returns A 200 JSON response.
 * @example
 * return listingAnswer(message.id, listing)
 */
export function listingAnswer(id: RequestId, listing: Buffer): Response {
  // Bytes, not a string: a string body is checked character by character for lone surrogates,
  // which for the listing cost more than the rest of the request.
  const answer = Buffer.concat([
    Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`),
    listing,
    Buffer.from('}'),
  ])
  return new Response(answer, { status: 200, headers: { 'content-type': 'application/json' } })
}
