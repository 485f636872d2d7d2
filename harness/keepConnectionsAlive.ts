import type { Server } from 'node:http'

/**
 * Node's 5 s keep-alive races with a buyer that pays on the connection its 402 came on, after a pause
 * to sign: the server closes the connection as the paid request goes out (`fetch failed: other side
 * closed`, seen with 100 sales at once on a busy machine). The tests' merchants do what docs/seller.md
 * asks of a seller's server.
 */
export function keepConnectionsAlive(server: Server): void {
  server.keepAliveTimeout = 65_000
  server.headersTimeout = 66_000
}
