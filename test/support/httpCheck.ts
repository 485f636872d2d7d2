import {
  type HttpRefusal,
  type HttpRequestFacts,
  refusalResponse,
} from '../../src/mcp/http/check.js'

/**
 * The facts a check sees, built for a unit test: a POST from `test-client` with the given headers.
 *
 * @param headers - The request's headers.
 * @param extra - Another `method` or `client`.
 * @returns The facts.
 * @example
 * hostAllowed(['localhost'])(requestFacts({ host: 'evil.example' }))
 */
export function requestFacts(
  headers: Record<string, string> = {},
  extra: Partial<Omit<HttpRequestFacts, 'headers'>> = {},
): HttpRequestFacts {
  return { method: 'POST', client: 'test-client', ...extra, headers: new Headers(headers) }
}

/**
 * What the server sends for a refusal, as the client receives it: status, headers and body text.
 *
 * @param refusal - A check's refusal (fails the test on `undefined`, a pass).
 * @returns `{ status, headers, body }`.
 * @example
 * expect(await sent(postOnly(requestFacts({}, { method: 'GET' })))).toEqual({ status: 405, … })
 */
export async function sent(
  refusal: HttpRefusal | undefined,
): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  if (refusal === undefined) throw new Error('the check passed the request: no refusal to send')
  const response = refusalResponse(refusal)
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    headers[name] = value
  })
  return { status: response.status, headers, body: await response.text() }
}

/**
 * The JSON-RPC error body a refusal with `reason` sends, byte for byte as the server writes it.
 *
 * @param message - The error's message.
 * @param reason - `error.data.reason`.
 * @param options - The echoed `id` (`null` by default) and the `code` (-32000 by default).
 * @returns The body text.
 * @example
 * errorBody('Parse error: the body is not valid JSON.', 'PARSE_ERROR', { code: -32700 })
 */
export function errorBody(
  message: string,
  reason: string,
  options: { id?: string | number | null; code?: number } = {},
): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(options.id ?? null)},"error":{"code":${options.code ?? -32000},"message":${JSON.stringify(message)},"data":{"reason":"${reason}"}}}`
}
