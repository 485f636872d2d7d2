import type { RequestId } from '@modelcontextprotocol/server'

/** What a check sees of a request: its method and headers, and who sent it. */
export type HttpRequestFacts = {
  method: string
  headers: Headers
  /** A stable name for the caller (its IP address), `unknown` when the host app gave none. */
  client: string
}

/** The body of a refusal: a JSON-RPC error. */
export type JsonRpcErrorBody = {
  jsonrpc: '2.0'
  id: RequestId | null
  error: { code: number; message: string; data?: { reason: string } }
}

/** The answer a check gives instead of letting the request through. */
export type HttpRefusal = {
  status: number
  /** The rule refused by: `error.data.reason`, and `refusal` in the request log. */
  reason: string
  /** Sent besides `content-type` (`www-authenticate`, `retry-after`, `allow`). */
  headers?: Record<string, string> | undefined
  /**
   * `null` for a request whose client has gone (499: there is nobody to read a body) and for a CORS
   * preflight's answer (204).
   */
  body: JsonRpcErrorBody | null
}

/**
 * One rule a request must pass, in the manner of a hono middleware: `undefined` lets the request go on
 * to the next check; a refusal is the answer, and nothing after it runs.
 */
export type HttpCheck = (request: HttpRequestFacts) => HttpRefusal | undefined

/**
 * A refusal whose body is a JSON-RPC error carrying the rule as `error.data.reason`.
 *
 * @param status - The HTTP status.
 * @param reason - The rule, such as `UNAUTHORIZED`.
 * @param message - What the client should fix.
 * @param options - Extra `headers`, the request `id` to echo (`null` by default) and the error `code`
 *   (-32000, a server error, by default).
 * @returns The refusal.
 * @example
 * refuse(405, 'METHOD_NOT_ALLOWED', 'POST only.', { headers: { allow: 'POST' } })
 */
export function refuse(
  status: number,
  reason: string,
  message: string,
  options: {
    headers?: Record<string, string>
    id?: RequestId | null | undefined
    code?: number
  } = {},
): HttpRefusal {
  return {
    status,
    reason,
    headers: options.headers,
    body: {
      jsonrpc: '2.0',
      id: options.id ?? null,
      error: { code: options.code ?? -32000, message, data: { reason } },
    },
  }
}

/** The client hung up before its answer was ready: 499, no body, as nginx logs it. */
export const clientClosed: HttpRefusal = { status: 499, reason: 'CLIENT_CLOSED', body: null }

/**
 * The HTTP response a refusal is sent as: its JSON body (`content-type: application/json`) and
 * headers, or the status and headers alone when it has no body.
 *
 * @param refusal - From a check.
 * @returns The response.
 * @example
 * return refusalResponse(refuse(500, 'INTERNAL_ERROR', 'The server hit an unexpected error.'))
 */
export function refusalResponse(refusal: HttpRefusal): Response {
  if (refusal.body === null) {
    return new Response(null, { status: refusal.status, headers: refusal.headers })
  }
  return new Response(JSON.stringify(refusal.body), {
    status: refusal.status,
    headers: { 'content-type': 'application/json', ...refusal.headers },
  })
}

/**
 * Runs checks in order and stops at the first refusal, as a middleware chain does.
 *
 * @param checks - The rules, in the order they apply.
 * @param request - The request's facts.
 * @returns The first refusal, or `undefined` when every check passes.
 * @example
 * const refusal = firstRefusal([hostAllowed(hosts), postOnly], facts)
 */
export function firstRefusal(
  checks: readonly HttpCheck[],
  request: HttpRequestFacts,
): HttpRefusal | undefined {
  for (const check of checks) {
    const refusal = check(request)
    if (refusal !== undefined) return refusal
  }
  return undefined
}
