import {
  type FacilitatorClient,
  type FacilitatorConfig,
  FacilitatorResponseError,
  HTTPFacilitatorClient,
} from '@x402/core/server'
import { SettleError, VerifyError } from '@x402/core/types'
import { VaultConfigError, type VaultErrorCode } from '../index.js'
import { findCause, redactSecrets } from '../sdk/shared.js'

/** How long each facilitator call may take, in ms. */
export type FacilitatorTimeouts = { verify: number; settle: number }

/**
 * The default facilitator timeouts: a verification is a signature and balance check (the devnet's
 * answers in milliseconds, hosted ones in well under a second); a settlement waits for its transaction
 * to be mined, a couple of Base blocks. Both leave an order of magnitude of headroom, and a buyer waits
 * seconds, not x402's 90, before being told.
 */
export const defaultFacilitatorTimeouts: FacilitatorTimeouts = { verify: 10_000, settle: 30_000 }

/** A facilitator call that got no usable answer, for the seller: the call, and a message without secrets. */
export type FacilitatorFailure = {
  operation: 'verify' | 'settle'
  /** A `VaultConfigError` (retryable) whose code says what failed, with what the buyer was told. */
  error: VaultConfigError
}

/**
 * What went wrong in a facilitator call that got no usable answer: a stable code, the words for it (no
 * host, no secret), and whether the request never reached the facilitator (so nothing was settled).
 */
export type FacilitatorTrouble = {
  code: Extract<
    VaultErrorCode,
    | 'FACILITATOR_UNREACHABLE'
    | 'FACILITATOR_TIMEOUT'
    | 'FACILITATOR_CONNECTION_LOST'
    | 'FACILITATOR_HTTP_ERROR'
    | 'FACILITATOR_BAD_RESPONSE'
  >
  /** What happened, as the buyer may read it, such as `The payment facilitator answered HTTP 500`. */
  reason: string
  /** The same with the cause's own words (redacted), for the seller. */
  detail: string
  neverReached: boolean
}

/**
 * What the guarded client throws for a call that got no usable answer: a `FacilitatorResponseError`, so
 * x402's middleware answers it with a 502 `{ error }` (unless a settle-failure hook recovers it), carrying
 * what went wrong for the paywall's own hooks.
 */
export class FacilitatorCallError extends FacilitatorResponseError {
  override name = 'FacilitatorCallError'
  constructor(
    message: string,
    readonly operation: 'verify' | 'settle',
    readonly trouble: FacilitatorTrouble,
  ) {
    super(message)
  }
}

/**
 * An x402 facilitator client over HTTP that bounds each call (`timeouts`) and turns a call that got no
 * usable answer into one the buyer can act on: a `FacilitatorCallError`, which x402's middleware answers
 * with a 502 `{ error }` saying whether the payment was taken, instead of a 402 with an empty body. The
 * facilitator's own refusals (`VerifyError`, `SettleError`) pass unchanged. A settlement answered as a
 * success without a transaction is no usable answer either: the paywall's settle-failure hook then asks
 * the chain. Verifications, and settlements that never reached the facilitator, are handed to
 * `onFailure` (which must not throw); a settlement whose outcome is unknown is reported by the hook that
 * learns it.
 *
 * @param config - x402's facilitator config (`url`, `createAuthHeaders`), without `timeoutMs`.
 * @param timeouts - Per-call timeouts in ms; `supported` shares `verify`'s.
 * @param onFailure - Told of each failure it reports, after the buyer's answer is decided.
 * @returns The client, for `new x402ResourceServer(client)`.
 */
export function guardedFacilitatorClient(
  config: Omit<FacilitatorConfig, 'timeoutMs'>,
  timeouts: FacilitatorTimeouts,
  onFailure: (failure: FacilitatorFailure) => void,
): FacilitatorClient {
  const verifier = new HTTPFacilitatorClient({ ...config, timeoutMs: timeouts.verify })
  const settler = new HTTPFacilitatorClient({ ...config, timeoutMs: timeouts.settle })
  const fail = (operation: 'verify' | 'settle', trouble: FacilitatorTrouble): never => {
    const told = buyerMessage(operation, trouble)
    if (operation === 'verify' || trouble.neverReached) {
      onFailure({ operation, error: facilitatorError(operation, trouble, `answered 502: ${told}`) })
    }
    throw new FacilitatorCallError(told, operation, trouble)
  }
  /** A call whose failure to reach or be read is answered; the facilitator's refusals pass. */
  const guarded = async <result>(
    operation: 'verify' | 'settle',
    call: () => Promise<result>,
  ): Promise<result> => {
    try {
      return await call()
    } catch (error) {
      if (error instanceof VerifyError || error instanceof SettleError) throw error
      return fail(operation, facilitatorTroubleOf(error))
    }
  }
  return {
    verify: (payload, requirements) =>
      guarded('verify', () => verifier.verify(payload, requirements)),
    settle: async (payload, requirements) => {
      const result = await guarded('settle', () => settler.settle(payload, requirements))
      // An `upto` charge of 0 settles nothing, nor does a `batch-settlement` voucher (the money is in
      // the channel's escrow until a claim): x402's facilitator answers them without a transaction.
      const settlesNothing =
        (requirements.scheme === 'upto' && /^0+$/.test(requirements.amount)) ||
        (requirements.scheme === 'batch-settlement' &&
          (payload.payload as { type?: unknown } | undefined)?.type === 'voucher')
      if (
        result.success &&
        !settlesNothing &&
        !transactionHashPattern.test(result.transaction ?? '')
      ) {
        const reason = 'The payment facilitator answered success without a transaction'
        return fail('settle', {
          code: 'FACILITATOR_BAD_RESPONSE',
          reason,
          detail: reason,
          neverReached: false,
        })
      }
      return result
    },
    getSupported: () => verifier.getSupported(),
  }
}

const transactionHashPattern = /^0x[0-9a-fA-F]{64}$/

/**
 * The seller's error for a facilitator call that got no usable answer: its code, the call, the cause in
 * the facilitator's own words (redacted), and what the buyer got.
 *
 * @param operation - `verify` or `settle`.
 * @param trouble - What went wrong ({@link facilitatorTroubleOf}).
 * @param outcome - What followed, after "the buyer was ": such as `answered 502: …`.
 */
export function facilitatorError(
  operation: 'verify' | 'settle',
  trouble: FacilitatorTrouble,
  outcome: string,
  details: Record<string, unknown> = {},
): VaultConfigError {
  return new VaultConfigError(
    `The x402 facilitator failed to ${operation} a payment (${trouble.detail}); the buyer was ${outcome}`,
    { code: trouble.code, details: { operation, ...details }, retryable: true },
  )
}

/**
 * What went wrong in a facilitator call that threw something other than the facilitator's own refusal:
 * no connection, a connection lost before the answer, no answer in time, an HTTP error status, or an
 * answer that is not x402's. Works on x402's own client's errors (`HTTPFacilitatorClient`) as on
 * `FacilitatorCallError`.
 *
 * @param error - What the call threw.
 * @returns The code, the words for it, and whether the request never reached the facilitator.
 */
export function facilitatorTroubleOf(error: unknown): FacilitatorTrouble {
  if (error instanceof FacilitatorCallError) return error.trouble
  const detail = oneLine(error)
  if (error instanceof Error && error.name === 'FacilitatorTimeoutError') {
    return { code: 'FACILITATOR_TIMEOUT', reason: oneLine(error, 1), detail, neverReached: false }
  }
  if (error instanceof FacilitatorResponseError) {
    return {
      code: 'FACILITATOR_BAD_RESPONSE',
      reason: oneLine(error, 1),
      detail,
      neverReached: false,
    }
  }
  const status = /^Facilitator (?:verify|settle|getSupported) failed \((\d{3})\)/.exec(
    error instanceof Error ? error.message : '',
  )?.[1]
  if (status) {
    return {
      code: 'FACILITATOR_HTTP_ERROR',
      reason: `The payment facilitator answered HTTP ${status}, its own failure`,
      detail,
      neverReached: false,
    }
  }
  if (neverReached(error)) {
    return {
      code: 'FACILITATOR_UNREACHABLE',
      reason: 'The payment facilitator could not be reached',
      detail,
      neverReached: true,
    }
  }
  return {
    code: 'FACILITATOR_CONNECTION_LOST',
    // Anything else may have left after the request was sent: what happened to it is unknown.
    reason: transportFailure(error)
      ? 'The connection to the payment facilitator failed before it answered'
      : 'The call to the payment facilitator failed before it answered',
    detail,
    neverReached: false,
  }
}

/** Whether fetch failed on the network (undici's "fetch failed", or a system or socket error code). */
function transportFailure(error: unknown): boolean {
  return (
    findCause(
      error,
      (e) => (e.name === 'TypeError' && e.message === 'fetch failed') || typeof e.code === 'string',
    ) !== undefined
  )
}

/**
 * What the buyer is told: what went wrong, then whether the payment was taken. A verification comes
 * before any transfer, so a failed one never took the payment; nor did a settlement the facilitator
 * never received (connection refused). A settlement with another failure may have been sent: the buyer
 * is told to check, not that nothing happened (the paywall's settle-failure hook usually answers first,
 * from the chain).
 */
function buyerMessage(operation: 'verify' | 'settle', trouble: FacilitatorTrouble): string {
  if (operation === 'verify' || trouble.neverReached) {
    return `${trouble.reason}. The payment was not taken: nothing was transferred. Try again later.`
  }
  return `${trouble.reason}. The payment may still settle: check the payer's balance before paying again.`
}

/** Whether the request never reached the facilitator (refused, unknown host), so nothing was settled. */
function neverReached(error: unknown): boolean {
  return (
    findCause(
      error,
      (e) => e.code === 'ECONNREFUSED' || e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN',
    ) !== undefined
  )
}

/** An error's message and its first causes' on one line, without URLs' paths or keys. */
function oneLine(error: unknown, depth = 2): string {
  const parts: string[] = []
  for (let e: unknown = error; e instanceof Error && parts.length < depth; e = e.cause) {
    parts.push(e.message.replace(/\s*\n\s*/g, ' '))
  }
  const text = (parts.length > 0 ? parts.join(': ') : String(error)).replace(/\.$/, '')
  return redactSecrets(text, { hideHex32: true })
}
