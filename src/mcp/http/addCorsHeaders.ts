/** The response headers a browser page may read besides the safelisted ones. */
export const corsExposedHeaders = ['mcp-session-id', 'retry-after', 'www-authenticate']

/**
 * Lets a page on an allowed origin read the answer, whatever it is (a refusal too, so that the page
 * sees why): `Access-Control-Allow-Origin` naming its origin, and `Access-Control-Expose-Headers`.
 * With any origin allowed, every answer carries `Vary: Origin`, since it depends on the `Origin`.
 * With none allowed (the default) the answer is left as it is.
 *
 * @param response - The answer; its headers are set in place (or on a copy when they are immutable).
 * @param origin - The request's `Origin`, `null` for a non-browser client.
 * @param allowed - Origins such as `https://app.example.com`, compared exactly.
 * @returns The answer with its CORS headers.
 * @example
 * return addCorsHeaders(response, request.headers.get('origin'), allowedOrigins)
 */
export function addCorsHeaders(
  response: Response,
  origin: string | null,
  allowed: ReadonlySet<string>,
): Response {
  if (allowed.size === 0) return response
  const set = (headers: Headers) => {
    if (!/(^|,)\s*origin\s*(,|$)/i.test(headers.get('vary') ?? '')) headers.append('vary', 'Origin')
    if (origin === null || !allowed.has(origin)) return
    headers.set('access-control-allow-origin', origin)
    headers.set('access-control-expose-headers', corsExposedHeaders.join(', '))
  }
  try {
    set(response.headers)
    return response
  } catch {
    // A response whose headers are immutable (one that came from fetch): its copy takes them.
    const copy = new Response(response.body, response)
    set(copy.headers)
    return copy
  }
}
