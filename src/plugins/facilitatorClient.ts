import {
  type FacilitatorClient,
  type FacilitatorConfig,
  FacilitatorResponseError,
  HTTPFacilitatorClient,
} from '@x402/core/server'
import { SettleError, VerifyError } from '@x402/core/types'
import { VaultConfigError } from '../index.js'
import { redactSecrets } from '../sdk/shared.js'

/** How long each facilitator call may take, in ms. */
export type FacilitatorTimeouts = { verify: number; settle: number }

/**
 * The default facilitator timeouts: a verification is a signature and balance check (the devnet's
 * answers in milliseconds, hosted ones in well under a second); a settlement waits for its transaction
 * to be mined, a couple of Base blocks. Both leave an order of magnitude of headroom, and a buyer waits
 * seconds, not x402's 90, before being told.
 */
export const defaultFacilitatorTimeouts: FacilitatorTimeouts = { verify: 10_000, settle: 30_000 }

/** What failed at the facilitator, for the seller: the call, and a message without secrets. */
export type FacilitatorFailure = {
  operation: 'verify' | 'settle'
  /** A `VaultConfigError` `FACILITATOR_UNREACHABLE` (retryable), with what the buyer was told. */
  error: VaultConfigError
}

/**
 * An x402 facilitator client over HTTP that bounds each call (`timeouts`) and turns a failure to reach
 * the facilitator or read its answer into one the buyer can act on: a `FacilitatorResponseError`, which
 * x402's middleware answers with a 502 `{ error }` saying whether the payment was taken, instead of a
 * 402 with an empty body. The facilitator's own refusals (`VerifyError`, `SettleError`) pass unchanged.
 * Each failure is handed to `onFailure` (which must not throw).
 *
 * @param config - x402's facilitator config (`url`, `createAuthHeaders`), without `timeoutMs`.
 * @param timeouts - Per-call timeouts in ms; `supported` shares `verify`'s.
 * @param onFailure - Told of each failure, after the buyer's answer is decided.
 * @returns The client, for `new x402ResourceServer(client)`.
 */
export function guardedFacilitatorClient(
  config: Omit<FacilitatorConfig, 'timeoutMs'>,
  timeouts: FacilitatorTimeouts,
  onFailure: (failure: FacilitatorFailure) => void,
): FacilitatorClient {
  const verifier = new HTTPFacilitatorClient({ ...config, timeoutMs: timeouts.verify })
  const settler = new HTTPFacilitatorClient({ ...config, timeoutMs: timeouts.settle })
  const fail = (operation: 'verify' | 'settle', error: unknown): never => {
    const told = buyerMessage(operation, error)
    onFailure({
      operation,
      error: new VaultConfigError(
        `The x402 facilitator failed to ${operation} a payment (${oneLine(error)}); the buyer was answered 502: ${told}`,
        { code: 'FACILITATOR_UNREACHABLE', details: { operation }, retryable: true },
      ),
    })
    throw new FacilitatorResponseError(told)
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
      return fail(operation, error)
    }
  }
  return {
    verify: (payload, requirements) =>
      guarded('verify', () => verifier.verify(payload, requirements)),
    settle: (payload, requirements) =>
      guarded('settle', () => settler.settle(payload, requirements)),
    getSupported: () => verifier.getSupported(),
  }
}

/**
 * What the buyer is told: x402's reason, then whether the payment was taken. A verification comes
 * before any transfer, so a failed one never took the payment; nor did a settlement the facilitator
 * never received (connection refused). A settlement that timed out or was answered garbled may have
 * been sent: the buyer is told to check, not that nothing happened.
 */
function buyerMessage(operation: 'verify' | 'settle', error: unknown): string {
  // x402's own messages (a timeout, a garbled answer) name no host; a network error's would.
  const reason =
    error instanceof FacilitatorResponseError
      ? oneLine(error, 1)
      : `The payment facilitator could not be reached`
  if (operation === 'verify' || neverReached(error)) {
    return `${reason}. The payment was not taken: nothing was transferred. Try again later.`
  }
  return `${reason}. The payment may still settle: check the payer's balance before paying again.`
}

/** Whether the request never reached the facilitator (refused, unknown host), so nothing was settled. */
function neverReached(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    const code = (e as { code?: unknown }).code
    if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') return true
  }
  return false
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
