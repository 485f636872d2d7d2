import type { HttpCheck } from './check.js'

/**
 * The request headers a browser page may send: those the MCP SDK's client sends (both protocol eras,
 * the token, a resumed stream's `Last-Event-ID`).
 */
export const corsAllowedHeaders = [
  'content-type',
  'accept',
  'authorization',
  'mcp-protocol-version',
  'mcp-session-id',
  'mcp-method',
  'mcp-name',
  'last-event-id',
]

/** How long a browser may keep a preflight's answer, in seconds: two hours, Chromium's most. */
export const corsMaxAgeSeconds = 7_200

/**
 * Answers a CORS preflight (`OPTIONS` with `Access-Control-Request-Method`) from an allowed origin:
 * 204 with the method (POST), the headers a client sends and how long to keep the answer. It lets
 * anything else through: an `OPTIONS` that is no preflight gets 405 from `postOnly`, and a preflight
 * from another origin has been refused (403, no CORS headers) by `originAllowed` before it.
 *
 * @param allowed - Origins such as `https://app.example.com`, compared exactly.
 * @returns The check; its answer is the preflight's (reason `CORS_PREFLIGHT` in the request log).
 * @example
 * corsPreflight(new Set(['https://app.example.com']))
 */
export function corsPreflight(allowed: ReadonlySet<string>): HttpCheck {
  return ({ method, headers }) => {
    const origin = headers.get('origin')
    if (method !== 'OPTIONS' || origin === null || !allowed.has(origin)) return undefined
    if (headers.get('access-control-request-method') === null) return undefined
    return {
      status: 204,
      reason: 'CORS_PREFLIGHT',
      headers: {
        'access-control-allow-origin': origin,
        'access-control-allow-methods': 'POST',
        'access-control-allow-headers': corsAllowedHeaders.join(', '),
        'access-control-max-age': String(corsMaxAgeSeconds),
        vary: 'Origin',
      },
      body: null,
    }
  }
}
