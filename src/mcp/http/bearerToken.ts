import { createHash, timingSafeEqual } from 'node:crypto'
import { type HttpCheck, refuse } from './check.js'

/**
 * Refuses (401 `UNAUTHORIZED`, with `WWW-Authenticate: Bearer`) a request without
 * `Authorization: Bearer <token>`. The token is compared as a SHA-256 digest in constant time, so
 * that neither its length nor its content shows in the time taken; the refusal never echoes it.
 *
 * @param token - The token; without one every request passes (for loopback only).
 * @returns The check.
 * @example
 * bearerToken(process.env.VAULT_MCP_HTTP_TOKEN)
 */
export function bearerToken(token: string | undefined): HttpCheck {
  if (token === undefined) return () => undefined
  const expected = digest(token)
  return ({ headers }) => {
    const match = /^Bearer +(\S+) *$/i.exec(headers.get('authorization') ?? '')
    if (match?.[1] !== undefined && timingSafeEqual(digest(match[1]), expected)) return undefined
    return refuse(
      401,
      'UNAUTHORIZED',
      'This server needs the header "Authorization: Bearer <token>" with the token it was started with (VAULT_MCP_HTTP_TOKEN).',
      { headers: { 'www-authenticate': 'Bearer realm="x402-vault"' } },
    )
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest()
}
