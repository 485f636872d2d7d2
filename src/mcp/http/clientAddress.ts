/** An HTTP header name (RFC 9110's token): what `VAULT_MCP_TRUST_PROXY` may name. */
export const headerNamePattern = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/

/** What an address a proxy wrote may look like: IPv4, IPv6 (bracketed or not, with a zone), a port. */
const addressPattern = /^[0-9A-Za-z.:%[\]_-]{1,64}$/

/**
 * Who is calling, for the per-client rate limit and the request log: the address the trusted proxy
 * header names, else the connection's remote address. Of a list (`X-Forwarded-For: client, proxy1`),
 * the last entry counts: the nearest proxy, the one trusted, appended it, and anything before it is
 * what the client claimed. A value that is no address is ignored, so the client counts as the proxy.
 *
 * @param headers - The request's headers.
 * @param trustedHeader - The header the proxy in front sets (`x-forwarded-for`, `cf-connecting-ip`),
 *   or `undefined` to trust none (the default: a client could write any address there).
 * @param peer - The connection's remote address, as the host app gives it.
 * @returns The client's name; `unknown` when there is neither.
 * @example
 * clientAddress(new Headers({ 'x-forwarded-for': '6.6.6.6, 203.0.113.7' }), 'x-forwarded-for', '10.0.0.2') // '203.0.113.7'
 */
export function clientAddress(
  headers: Headers,
  trustedHeader: string | undefined,
  peer: string | undefined,
): string {
  if (trustedHeader !== undefined) {
    const named = headers.get(trustedHeader)?.split(',').at(-1)?.trim()
    if (named !== undefined && addressPattern.test(named)) return named
  }
  return peer ?? 'unknown'
}
