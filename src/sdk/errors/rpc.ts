import { HttpRequestError, type RpcRequestError } from 'viem'
import { redactUrl } from '../redact.js'
import { VaultRpcError } from './classes.js'

/** RPC failures: HTTP status, JSON-RPC codes, timeouts and malformed answers, classified for retry. */
export function fromRpc(
  http: HttpRequestError | RpcRequestError | null,
  rpcCode: number | undefined,
  prefix: string,
  cause: unknown,
): VaultRpcError {
  const status = http?.status
  const where = http?.url ? ` (${redactUrl(http.url)})` : ''
  const retryAfterMs = parseRetryAfter(http?.headers?.get('Retry-After') ?? null)
  if (status === 429 || rpcCode === 429 || rpcCode === -32005 || rpcCode === -32007) {
    return new VaultRpcError(
      'RPC_RATE_LIMITED',
      `${prefix}The RPC is rate limiting requests${where}. Retry later.`,
      {
        retryable: true,
        status,
        retryAfterMs,
        cause,
      },
    )
  }
  if (status === 408 || status === 504) {
    return new VaultRpcError(
      'RPC_TIMEOUT',
      `${prefix}The RPC timed out (HTTP ${status})${where}.`,
      {
        retryable: true,
        status,
        cause,
      },
    )
  }
  if (status !== undefined && status >= 500) {
    return new VaultRpcError(
      'RPC_HTTP_ERROR',
      `${prefix}The RPC answered HTTP ${status}${where}.`,
      {
        retryable: true,
        status,
        retryAfterMs,
        cause,
      },
    )
  }
  if (status === 401 || status === 403) {
    return new VaultRpcError(
      'RPC_UNAUTHORIZED',
      `${prefix}The RPC refused the request (HTTP ${status})${where}: check the RPC URL's key.`,
      {
        retryable: false,
        status,
        cause,
      },
    )
  }
  if (status !== undefined && status >= 400) {
    return new VaultRpcError(
      'RPC_HTTP_ERROR',
      `${prefix}The RPC answered HTTP ${status}${where}.`,
      {
        retryable: false,
        status,
        cause,
      },
    )
  }
  if (http instanceof HttpRequestError && status === undefined) {
    const inner = http.cause instanceof Error ? http.cause : undefined
    if (inner instanceof SyntaxError) {
      return new VaultRpcError(
        'RPC_BAD_RESPONSE',
        `${prefix}The RPC sent a malformed answer${where}.`,
        {
          retryable: true,
          cause,
        },
      )
    }
    return new VaultRpcError('RPC_UNREACHABLE', `${prefix}The RPC could not be reached${where}.`, {
      retryable: true,
      cause,
    })
  }
  const retryable = rpcCode === -32603 || rpcCode === -32000 || rpcCode === -1
  return new VaultRpcError(
    'RPC_ERROR',
    `${prefix}The RPC returned an error${rpcCode === undefined ? '' : ` (code ${rpcCode})`}${where}.`,
    { retryable, status, details: rpcCode === undefined ? {} : { rpcCode }, cause },
  )
}

/**
 * Parses a `Retry-After` header (seconds or an HTTP date) into milliseconds.
 *
 * @param value - The header value.
 * @param now - The current time in ms (for HTTP dates).
 * @returns Milliseconds to wait (≥ 0), or `undefined` when absent or unparsable.
 * @example
 * parseRetryAfter('2') // 2000
 */
export function parseRetryAfter(
  value: string | null | undefined,
  now = Date.now(),
): number | undefined {
  if (!value) return undefined
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000
  const date = Date.parse(trimmed)
  if (Number.isNaN(date)) return undefined
  return Math.max(0, date - now)
}
