import { BaseError } from 'viem'
import { redactSecrets } from '../redact.js'

/**
 * What a `VaultError` keeps of its cause: the cause's name and a redacted message (RPC libraries put
 * full URLs, keys included, in theirs), never the original object.
 */
export function summarizeCause(cause: unknown): Error | undefined {
  if (cause === undefined) return undefined
  const name = cause instanceof Error ? cause.name : 'Error'
  const text =
    cause instanceof BaseError
      ? cause.shortMessage || cause.message
      : cause instanceof Error
        ? cause.message
        : String(cause)
  const summary = new Error(redactSecrets(text, { hideHex32: !(cause instanceof BaseError) }))
  summary.name = name
  return summary
}
