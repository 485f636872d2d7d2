import { isLoopbackHost } from '../httpConfig.js'

/**
 * The host names a server listening on `host:port` answers for: the address itself, and for a
 * loopback listener the other loopback names.
 *
 * @param host - The listen address.
 * @param port - The port bound.
 * @param interfaceAddresses - For a wildcard listener (`0.0.0.0`, `::`), the machine's addresses.
 * @returns `host:port` entries for `allowedHosts`.
 * @example
 * listenHosts('127.0.0.1', 8402, []) // ['127.0.0.1:8402', 'localhost:8402', '[::1]:8402']
 */
export function listenHosts(
  host: string,
  port: number,
  interfaceAddresses: readonly string[],
): string[] {
  const bracket = (address: string) => (address.includes(':') ? `[${address}]` : address)
  const names = isLoopbackHost(host)
    ? [host, 'localhost', '127.0.0.1', '::1']
    : host === '0.0.0.0' || host === '::'
      ? ['localhost', '127.0.0.1', '::1', ...interfaceAddresses]
      : [host]
  return [...new Set(names.map((name) => `${bracket(name.replace(/^\[|\]$/g, ''))}:${port}`))]
}
