import { type HttpCheck, refuse } from './check.js'

/**
 * Refuses (403 `ORIGIN_NOT_ALLOWED`) a browser page from an origin not on the list. A request
 * without `Origin` comes from a non-browser client and passes.
 *
 * @param allowed - Origins such as `https://app.example.com`, compared exactly.
 * @returns The check.
 * @example
 * originAllowed(new Set(['https://app.example.com']))
 */
export function originAllowed(allowed: ReadonlySet<string>): HttpCheck {
  return ({ headers }) => {
    const origin = headers.get('origin')
    if (origin === null || allowed.has(origin)) return undefined
    return refuse(
      403,
      'ORIGIN_NOT_ALLOWED',
      `Origin ${JSON.stringify(origin.slice(0, 100))} may not call this server (a guard against DNS rebinding). To let a web app call it, add its origin to VAULT_MCP_ALLOWED_ORIGINS.`,
    )
  }
}
