/**
 * Redaction helpers: nothing this package says may carry an RPC URL's credentials, path or query
 * (API keys live there) or a private key.
 */

const urlPattern = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#"'<>]*)([^\s"'<>]*)/gi

/**
 * Reduces a URL to its scheme, host and port: `https://user:pw@rpc.example/v2/KEY?x=1` → `https://rpc.example`.
 *
 * @param url - Any URL text.
 * @returns The origin, or `'(invalid URL)'` when it cannot be parsed.
 * @example
 * redactUrl('https://base-mainnet.g.alchemy.com/v2/secret') // 'https://base-mainnet.g.alchemy.com'
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (
      parsed.protocol === 'http:' ||
      parsed.protocol === 'https:' ||
      /^wss?:$/.test(parsed.protocol)
    ) {
      return `${parsed.protocol}//${parsed.host}`
    }
    return `${parsed.protocol}//(redacted)`
  } catch {
    return '(invalid URL)'
  }
}

/**
 * Removes secrets from free text: every URL keeps only its origin, and every 32-byte hex string that
 * is not labelled as a hash is hidden when `hideHex32` is set (a private key looks exactly like one).
 *
 * @param text - Text that may contain an RPC URL or a key.
 * @param options - `hideHex32`: also hide 64-hex-digit strings.
 * @returns The redacted text.
 * @example
 * redactSecrets('request to https://rpc.x/key123 failed') // 'request to https://rpc.x failed'
 */
export function redactSecrets(text: string, options: { hideHex32?: boolean } = {}): string {
  let out = text.replace(urlPattern, (_all, scheme: string, authority: string) => {
    const host = authority.includes('@')
      ? authority.slice(authority.lastIndexOf('@') + 1)
      : authority
    return `${scheme}${host}`
  })
  if (options.hideHex32) out = out.replace(/\b(0x)?[0-9a-fA-F]{64}\b/g, '(hidden 32-byte hex)')
  return out
}
