import { redactUrl } from '../redact.js'
import { VaultRpcError } from './classes.js'
import { findCause, findError } from './find.js'

/**
 * An RPC answer that is not a JSON-RPC response, or not what its method returns (`0x` where a number is
 * due). `vaultHttp` throws it; the SDK reports it as `RPC_BAD_RESPONSE`, which is retryable.
 */
export class MalformedRpcAnswerError extends Error {
  override name = 'MalformedRpcAnswerError'
}

/**
 * An HTTP status that refuses the request whatever its body says (401, 403, 404: a wrong key or URL
 * path). `vaultHttp` throws it before reading the body; the SDK reports it as `RPC_UNAUTHORIZED`.
 */
export class RpcHttpStatusError extends Error {
  override name = 'RpcHttpStatusError'
  /**
   * @param status - The HTTP status.
   * @param url - The RPC URL (redact it before showing it).
   */
  constructor(
    readonly status: number,
    readonly url: string | undefined,
  ) {
    super(`HTTP ${status}`)
  }
}

/** JSON-RPC error codes that mean "slow down". */
const rateLimitCodes = new Set([429, -32005, -32007])

/** What an RPC failure says about itself, read from the error's cause chain. */
export type RpcFailure = {
  /**
   * `timeout`: no answer in time; `malformed`: an answer that is not JSON-RPC (not JSON, too large,
   * the wrong type); `http`: an HTTP error status; `unreachable`: no HTTP answer at all; `jsonRpc`: a
   * well-formed JSON-RPC error.
   */
  kind: 'timeout' | 'malformed' | 'http' | 'unreachable' | 'jsonRpc'
  status: number | undefined
  rpcCode: number | undefined
  /** The RPC URL as the error gives it (redact it before showing it). */
  url: string | undefined
  /** How long the server asked to wait (`Retry-After`), in ms. */
  retryAfterMs: number | undefined
  rateLimited: boolean
}

type HttpErrorLike = {
  name: string
  status?: number | undefined
  code?: number | undefined
  url?: string | undefined
  headers?: Headers | undefined
}

/**
 * Reads an RPC failure out of anything thrown: viem's `HttpRequestError`, `RpcRequestError`,
 * `TimeoutError`, `ResponseBodyTooLargeError`, its JSON-RPC error classes, a JSON parse failure (or a
 * `0x` that does not convert to a number), or `MalformedRpcAnswerError`. Used both to decide retries (`vaultHttp`) and to report (`toVaultError`).
 *
 * @returns The failure, or `undefined` when the error is not an RPC failure.
 */
export function readRpcFailure(error: unknown): RpcFailure | undefined {
  const timeout = findError<{ url?: string }>(error, 'TimeoutError', 'AbortError')
  const malformed =
    findError(error, 'MalformedRpcAnswerError', 'ResponseBodyTooLargeError', 'SyntaxError') ??
    // viem reads a JSON body that is not an object (`null`) as a response and fails with a
    // TypeError, which its request layer wraps as an unknown RPC error: a malformed answer.
    findCause(error, (e) => e.name === 'UnknownRpcError' && e.cause instanceof TypeError) ??
    // A batch answered with fewer JSON-RPC responses than requests (viem's own message).
    findCause(error, (e) => /^Expected \d+ responses to batch request\.$/.test(e.message))
  // A status read before the body (RpcHttpStatusError) decides over whatever the body was.
  const refused = findError<HttpErrorLike>(error, 'RpcHttpStatusError')
  const http = refused ?? findError<HttpErrorLike>(error, 'HttpRequestError', 'RpcRequestError')
  const rpc = findCause<{ code: number }>(
    error,
    (e) => /RpcError$/.test(e.name) && typeof e.code === 'number',
  )
  if (!timeout && !malformed && !http && !rpc) return undefined
  const status = typeof http?.status === 'number' ? http.status : undefined
  const rpcCode = rpc?.code ?? (typeof http?.code === 'number' ? http.code : undefined)
  const kind: RpcFailure['kind'] = timeout
    ? 'timeout'
    : refused
      ? 'http'
      : malformed
        ? 'malformed'
        : status !== undefined
          ? 'http'
          : http?.name === 'HttpRequestError'
            ? 'unreachable'
            : 'jsonRpc'
  return {
    kind,
    status,
    rpcCode,
    url: http?.url ?? timeout?.url,
    retryAfterMs: parseRetryAfter(http?.headers?.get('Retry-After')),
    rateLimited: status === 429 || (rpcCode !== undefined && rateLimitCodes.has(rpcCode)),
  }
}

/** RPC failures: HTTP status, JSON-RPC codes, timeouts and malformed answers, classified for retry. */
export function fromRpcFailure(failure: RpcFailure, prefix: string, cause: unknown): VaultRpcError {
  const { status, rpcCode, retryAfterMs } = failure
  const where = failure.url ? ` (${redactUrl(failure.url)})` : ''
  const error = (code: VaultRpcError['code'], message: string, retryable: boolean) =>
    new VaultRpcError(`${prefix}${message}`, {
      code,
      retryable,
      status,
      retryAfterMs,
      ...(rpcCode === undefined ? {} : { details: { rpcCode } }),
      cause,
    })
  if (failure.rateLimited) {
    return error(
      'RPC_RATE_LIMITED',
      `The RPC is rate limiting requests${where}. Retry later.`,
      true,
    )
  }
  if (failure.kind === 'timeout')
    return error('RPC_TIMEOUT', `The RPC request timed out${where}.`, true)
  if (failure.kind === 'malformed') {
    return error('RPC_BAD_RESPONSE', `The RPC sent a malformed answer${where}.`, true)
  }
  if (status === 408 || status === 504) {
    return error('RPC_TIMEOUT', `The RPC timed out (HTTP ${status})${where}.`, true)
  }
  if (status !== undefined && status >= 500) {
    return error('RPC_HTTP_ERROR', `The RPC answered HTTP ${status}${where}.`, true)
  }
  if (status === 401 || status === 403 || status === 404) {
    return error(
      'RPC_UNAUTHORIZED',
      `The RPC refused the request (HTTP ${status})${where}: check the RPC URL, its path and its key.`,
      false,
    )
  }
  if (status !== undefined && status >= 400) {
    return error('RPC_HTTP_ERROR', `The RPC answered HTTP ${status}${where}.`, false)
  }
  if (failure.kind === 'unreachable') {
    return error('RPC_UNREACHABLE', `The RPC could not be reached${where}.`, true)
  }
  const retryable = rpcCode === -32603 || rpcCode === -32000 || rpcCode === -1
  return error(
    'RPC_ERROR',
    `The RPC returned an error${rpcCode === undefined ? '' : ` (code ${rpcCode})`}${where}.`,
    retryable,
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
