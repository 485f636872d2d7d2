import { type HttpCheck, refuse } from './check.js'

/**
 * Refuses (403 `HOST_NOT_ALLOWED`) a `Host` the server does not answer for: a page that reached this
 * server through DNS rebinding carries its own name there.
 *
 * @param allowed - `host` (any port) or `host:port` entries; an entry that is no host is ignored.
 * @returns The check.
 * @example
 * hostAllowed(['localhost', '127.0.0.1:8402'])
 */
export function hostAllowed(allowed: readonly string[]): HttpCheck {
  const anyPort = new Set<string>()
  const exact = new Set<string>()
  for (const entry of allowed) {
    const parsed = parseHost(entry)
    if (!parsed) continue
    if (parsed.port) exact.add(`${parsed.hostname}:${parsed.port}`)
    else anyPort.add(parsed.hostname)
  }
  return ({ headers }) => {
    const host = headers.get('host')
    const parsed = host ? parseHost(host) : undefined
    if (
      parsed &&
      (anyPort.has(parsed.hostname) || exact.has(`${parsed.hostname}:${parsed.port}`))
    ) {
      return undefined
    }
    return refuse(
      403,
      'HOST_NOT_ALLOWED',
      `Host ${JSON.stringify((host ?? '').slice(0, 100))} is not an address this server answers for (a guard against DNS rebinding). Call it by a name it answers for, or add the host name you serve it under to VAULT_MCP_ALLOWED_HOSTS.`,
    )
  }
}

/** A `Host` value's name and port (`''` for none or the default), or `undefined` when it is no host. */
function parseHost(host: string): { hostname: string; port: string } | undefined {
  if (/[/@?#\\\s]/.test(host)) return undefined
  try {
    const url = new URL(`http://${host}`)
    return { hostname: url.hostname, port: url.port }
  } catch {
    return undefined
  }
}
