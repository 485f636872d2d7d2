import { type VaultError, VaultRpcError } from '../errors/classes.js'
import type { SweepStep } from './sweep.js'

/** How often, and after how long, a failed sweep is tried again. */
export type SweepRetryPolicy = {
  /** Attempts per sweep, the first included. */
  maxAttempts: number
  /** The wait before the first retry, doubled for each next one. */
  initialDelayMs: number
  /** The longest wait between attempts; a `Retry-After` is capped by it too. */
  maxDelayMs: number
}

/**
 * Deposit-step failures that a new attempt from a fresh read settles. `INSUFFICIENT_USDC`: the balance
 * moved since the sweep read it. `SEND_OUTCOME_UNKNOWN`: the send may have reached the node; not
 * retryable for a caller who would send the same thing again, but a sweep reads the balance and its
 * nonce again, and the nonce is the one the lost send used until that send is mined. So at most one of
 * the two deposits can be mined, and if the first was, the read finds its USDC gone.
 */
const redoFromReadCodes = new Set(['INSUFFICIENT_USDC', 'SEND_OUTCOME_UNKNOWN'])
/** Receipt-step failures that waiting again cannot change. */
const finalReceiptCodes = new Set(['TRANSACTION_REVERTED', 'EVENT_NOT_FOUND'])

/**
 * The retry policy of a sweep, pure: whether a failed attempt is tried again, and after how long. The
 * wait doubles from `initialDelayMs` with each attempt, up to `maxDelayMs`; an RPC that asked for
 * longer (`Retry-After`, as `VaultRpcError.retryAfterMs`) gets its wait, up to `maxDelayMs` too.
 *
 * What is retried: at the receipt step, everything but a revert or a receipt without the deposit's
 * event (the deposit is then final); elsewhere, what the error says is retryable, `CHAIN_MISMATCH`
 * (the RPC may serve the vault's chain again, and the read checks it), and at the deposit step the
 * failures that a fresh read settles (`INSUFFICIENT_USDC`, `SEND_OUTCOME_UNKNOWN`).
 *
 * @param policy - `maxAttempts`, `initialDelayMs`, `maxDelayMs`.
 * @param attempt - The attempt that failed, counting from 1.
 * @param step - Where it failed.
 * @param error - Why.
 * @returns The wait in ms before the next attempt, or `undefined` when there is none.
 * @example
 * sweepRetryDelay({ maxAttempts: 4, initialDelayMs: 500, maxDelayMs: 8_000 }, 2, 'balance-read', error)
 * // 1000 for a retryable RPC error without Retry-After
 */
export function sweepRetryDelay(
  policy: SweepRetryPolicy,
  attempt: number,
  step: SweepStep,
  error: VaultError,
): number | undefined {
  if (attempt >= policy.maxAttempts || !retryable(step, error)) return undefined
  const exponential = policy.initialDelayMs * 2 ** (attempt - 1)
  const asked = error instanceof VaultRpcError ? (error.retryAfterMs ?? 0) : 0
  return Math.min(policy.maxDelayMs, Math.max(exponential, asked))
}

/** Whether a failed attempt can succeed when tried again. */
function retryable(step: SweepStep, error: VaultError): boolean {
  if (step === 'receipt') return !finalReceiptCodes.has(error.code)
  if (error.code === 'CHAIN_MISMATCH') return true
  return error.retryable || (step === 'deposit' && redoFromReadCodes.has(error.code))
}
