/**
 * The sweep's retry policy, pure: which failures are tried again, the backoff that doubles up to its
 * cap, and a `Retry-After` honoured.
 */
import { HttpRequestError } from 'viem'
import { describe, expect, it } from 'vitest'
import { VaultError, type VaultErrorCategory, type VaultErrorCode } from '../../../src/index.js'
import { toVaultError } from '../../../src/sdk/errors/toVaultError.js'
import { type SweepRetryPolicy, sweepRetryDelay } from '../../../src/sdk/sweep/sweepRetry.js'

const policy: SweepRetryPolicy = { maxAttempts: 8, initialDelayMs: 500, maxDelayMs: 8_000 }

/** What the SDK makes of an RPC's HTTP error, with its `Retry-After` when given. */
const rpcError = (status: number, retryAfter?: string) =>
  toVaultError(
    new HttpRequestError({
      url: 'https://rpc.example',
      status,
      ...(retryAfter === undefined ? {} : { headers: new Headers({ 'Retry-After': retryAfter }) }),
    }),
  )

const vaultError = (code: VaultErrorCode, category: VaultErrorCategory, retryable = false) =>
  new VaultError(`${code} happened.`, { code, category, retryable })

describe('sweepRetryDelay', () => {
  it('doubles the wait from initialDelayMs with each attempt, up to maxDelayMs', () => {
    const error = rpcError(503)
    expect(error).toMatchObject({ code: 'RPC_HTTP_ERROR', retryable: true })
    const delays = [1, 2, 3, 4, 5, 6, 7].map((attempt) =>
      sweepRetryDelay(policy, attempt, 'balance-read', error),
    )
    expect(delays).toEqual([500, 1_000, 2_000, 4_000, 8_000, 8_000, 8_000])
  })

  it('stops after maxAttempts', () => {
    const error = rpcError(503)
    expect(sweepRetryDelay({ ...policy, maxAttempts: 3 }, 2, 'balance-read', error)).toBe(1_000)
    expect(sweepRetryDelay({ ...policy, maxAttempts: 3 }, 3, 'balance-read', error)).toBeUndefined()
    expect(sweepRetryDelay({ ...policy, maxAttempts: 1 }, 1, 'balance-read', error)).toBeUndefined()
  })

  it('honours Retry-After when it asks for longer, still capped by maxDelayMs', () => {
    const asked = rpcError(429, '3')
    expect(asked).toMatchObject({ code: 'RPC_RATE_LIMITED', retryAfterMs: 3_000 })
    expect(sweepRetryDelay(policy, 1, 'balance-read', asked)).toBe(3_000)
    // By the fourth attempt the backoff (4 s) is the longer of the two.
    expect(sweepRetryDelay(policy, 4, 'balance-read', asked)).toBe(4_000)
    expect(sweepRetryDelay(policy, 1, 'balance-read', rpcError(429, '60'))).toBe(8_000)
    expect(sweepRetryDelay(policy, 1, 'deposit', rpcError(429))).toBe(500)
  })

  it('does not retry what cannot pass', () => {
    for (const [step, error] of [
      ['balance-read', vaultError('INVALID_AMOUNT', 'validation')],
      ['balance-read', rpcError(401)],
      ['deposit', vaultError('WALLET_NOT_REGISTERED', 'precondition')],
      ['deposit', vaultError('DEPOSITS_PAUSED', 'precondition')],
      ['receipt', vaultError('TRANSACTION_REVERTED', 'transaction')],
      ['receipt', vaultError('EVENT_NOT_FOUND', 'transaction')],
    ] as const) {
      expect(sweepRetryDelay(policy, 1, step, error), `${step} ${error.code}`).toBeUndefined()
    }
  })

  it('retries what a fresh read or a second wait can settle', () => {
    for (const [step, error] of [
      // The balance moved, or the send may or may not have reached the node: read again.
      ['deposit', vaultError('INSUFFICIENT_USDC', 'precondition')],
      ['deposit', vaultError('SEND_OUTCOME_UNKNOWN', 'transaction')],
      ['deposit', vaultError('NONCE_CONFLICT', 'transaction', true)],
      // The RPC may serve the vault's chain again.
      ['balance-read', vaultError('CHAIN_MISMATCH', 'config')],
      // A receipt wait that failed for any other reason is waited for again.
      ['receipt', vaultError('RECEIPT_TIMEOUT', 'transaction')],
    ] as const) {
      expect(sweepRetryDelay(policy, 1, step, error), `${step} ${error.code}`).toBe(500)
    }
    // Not at the read: there, an insufficient balance is no reason to read again.
    expect(
      sweepRetryDelay(policy, 1, 'balance-read', vaultError('INSUFFICIENT_USDC', 'precondition')),
    ).toBeUndefined()
  })
})
