import type { Server } from 'node:http'

/**
 * How long an idle connection stays open, in ms: longer than clients and the proxies in front keep
 * theirs (undici, Node's `fetch`, 4 s; AWS and Google load balancers 60 s). Node's own 5 s closes the
 * connection first, and a request a client sends on it just then fails with `fetch failed: other
 * side closed` (a busy client whose timers run late, a buyer that pays on the connection its 402 came
 * on after a pause to sign), or as a 502 from the load balancer. docs/seller.md asks the same of a
 * seller's server.
 */
export const idleConnectionMs = 65_000

/**
 * Keeps a server's idle connections {@link idleConnectionMs}, and lets headers take a second longer
 * (Node's advice: above the keep-alive timeout, so a slow first request is not cut short by it).
 *
 * @param server - A `node:http` server, before it listens.
 * @example
 * keepIdleConnections(createServer(handler))
 */
export function keepIdleConnections(server: Server): void {
  server.keepAliveTimeout = idleConnectionMs
  server.headersTimeout = idleConnectionMs + 1_000
}
