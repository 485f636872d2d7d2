import { type HttpRefusal, refuse } from './check.js'

/**
 * Parses the body: 400 `PARSE_ERROR` with JSON-RPC's -32700 when it is not JSON.
 *
 * @param body - The body as text.
 * @returns `{ message }`, the parsed JSON, or `{ refusal }`.
 * @example
 * const parsed = parseJsonBody('{"jsonrpc":"2.0"')
 * parsed.refusal?.status // 400
 */
export function parseJsonBody(
  body: string,
): { message: unknown; refusal?: undefined } | { refusal: HttpRefusal } {
  try {
    return { message: JSON.parse(body) }
  } catch {
    return {
      refusal: refuse(400, 'PARSE_ERROR', 'Parse error: the body is not valid JSON.', {
        code: -32700,
      }),
    }
  }
}
