import { redactSecrets } from '../sdk/shared.js'
import type { McpLogLevel } from './config.js'

/** A leveled logger. Every line is redacted before it is written. */
export type McpLogger = {
  debug: (message: string) => void
  info: (message: string) => void
  warn: (message: string) => void
  error: (message: string) => void
}

const rank: Record<McpLogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 }

/**
 * Creates the server's logger: one line per message, on stderr by default, because stdout belongs to
 * the JSON-RPC stream.
 *
 * @param level - The lowest level written (`error` is quiet).
 * @param write - Where a finished line goes; `process.stderr` by default.
 * @returns The logger.
 * @example
 * const logger = createLogger('info')
 * logger.info('listening on stdio')
 */
export function createLogger(
  level: McpLogLevel,
  write: (line: string) => void = (line) => process.stderr.write(line),
): McpLogger {
  const at = (lineLevel: McpLogLevel) => (message: string) => {
    if (rank[lineLevel] < rank[level]) return
    const text = redactLogText(message).replace(/\s*\n\s*/g, ' ')
    write(`[x402-vault-mcp] ${lineLevel}: ${text}\n`)
  }
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }
}

/**
 * Removes secrets from a log line: URLs keep only their origin and 32-byte hex strings (private keys
 * look like them) are hidden (both by the SDK's `redactSecrets`), and so are bearer or basic
 * credentials and the value of anything named like a key, token, secret or password.
 *
 * @param text - Any text.
 * @returns The text without secrets.
 * @example
 * redactLogText('Authorization: Bearer abc.def') // 'Authorization: Bearer (redacted)'
 */
export function redactLogText(text: string): string {
  return (
    redactSecrets(text, { hideHex32: true })
      .replace(/\b(bearer|basic)\s+[\w.~+/=-]+/gi, '$1 (redacted)')
      // A value, not a structure or a quote in a quote: `"keys": [ … ]` and `key: \"extra\"` in a
      // validation dump hold no secret, and hiding them leaves the dump unreadable.
      .replace(
        /\b([\w-]*(?:key|token|secret|password|passwd)[\w-]*)("?\s*[:=]\s*"?)([^\s"',;&[{\\][^\s"',;&]*)/gi,
        '$1$2(redacted)',
      )
  )
}
