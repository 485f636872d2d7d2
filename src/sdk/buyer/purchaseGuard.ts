import type { Address } from 'viem'
import {
  type PaymentAuthorizationState,
  readAuthorizationState,
} from '../actions/getPaymentAuthorizationState.js'
import {
  type PaymentAuthorization,
  signedAuthorizationOf,
  type X402PaymentPayload,
} from '../actions/paymentAuthorization.js'
import type { VaultContext } from '../context.js'
import { toVaultError } from '../errors/toVaultError.js'
import { sleep } from '../internal/sleep.js'
import { formatUsdc } from '../money.js'
import { PaymentOutcomeError } from './buyerErrors.js'

/**
 * What one purchase is: the resource (its URL: the request's, as x402's HTTP client saw it, else the
 * one the seller's 402 declares) and the requirements paid for it (network, asset, `payTo`, amount).
 * Two payments with all five equal are for the same purchase. x402 does not tell its hooks the HTTP
 * method, so a GET and a POST of one URL at one price are one purchase.
 */
export type Purchase = {
  url: string
  network: string
  asset: Address
  payTo: Address
  amount: bigint
}

/** What a paid request's answer said of its payment. */
export type PaymentOutcome =
  /** A settlement (`PAYMENT-RESPONSE` with `success: true`). */
  | 'settled'
  /** A new 402 asking for payment, with no settlement: the seller refused the payment before settling. */
  | 'refused'
  /**
   * Neither: a settlement failure (`settlement_pending`, or a failure that may hide a settlement whose
   * answer was lost), or an answer without `PAYMENT-RESPONSE` (a 5xx).
   */
  | 'unknown'

/** What x402's `onPaymentResponse` hook receives, reduced to the fields read here. */
export type PaymentResponseHookContext = {
  readonly requirements: object
  readonly paymentPayload?: object | undefined
  readonly settleResponse?: { readonly success?: boolean | undefined } | undefined
  readonly paymentRequired?: object | undefined
}

/**
 * How long a payment for a purchase whose earlier payment is used on chain but not yet answered waits
 * for that answer: a concurrent payment for the same purchase hears its settlement within moments of
 * it being mined; a request that failed in transit never does.
 */
export const answerGraceMs = 5_000
/** A payment's record is forgotten this long after its authorization expired (by this machine's clock). */
const forgetAfterExpiryMs = 3_600_000

/**
 * What a paid request's answer said of its payment (see {@link PaymentOutcome}).
 *
 * @param context - x402's `onPaymentResponse` context.
 * @returns The outcome.
 */
export function paymentOutcomeOf(context: PaymentResponseHookContext): PaymentOutcome {
  const { settleResponse, paymentRequired } = context
  if (settleResponse) return settleResponse.success === true ? 'settled' : 'unknown'
  return paymentRequired ? 'refused' : 'unknown'
}

/** A signed payment whose outcome this process has not learned, or learned to be unknown. */
type SignedPayment = {
  key: string
  purchase: Purchase
  authorization: PaymentAuthorization
  signedAt: number
  /** `in-flight`: no answer yet (or its request failed in transit); `unknown`: answered without one. */
  outcome: 'in-flight' | 'unknown'
  /** Whether a payment was refused with `PAYMENT_ALREADY_SETTLED` for it. */
  reported: boolean
  answered: Promise<void>
  markAnswered: () => void
}

/**
 * Keeps one purchase from being paid twice when an earlier payment's outcome is unknown: the seller's
 * settlement answer was lost or late (it answered `settlement_pending`, another settlement failure, a
 * 5xx), or the request failed in transit after the payment was sent.
 *
 * Before a payment for a purchase is signed, each earlier payment for the same purchase whose outcome
 * is not known is looked up on chain (as `getPaymentAuthorizationState` does; for an `upto` payment, its
 * Permit2 nonce and deadline: the nonce is used once the seller settled any amount of it):
 * - used: that purchase is paid for; refused with `PAYMENT_ALREADY_SETTLED` (for a payment still in
 *   flight, once its answer has had {@link answerGraceMs} to arrive: a concurrent payment for the same
 *   purchase settles and hears so at once);
 * - unused and still valid, after an answer without an outcome: refused with `PAYMENT_OUTCOME_UNKNOWN`
 *   until it expires (the seller may still settle it);
 * - unused and expired: forgotten; the payment proceeds.
 * An unused payment still in flight does not stop another: it may be a concurrent purchase of the same
 * resource, which nothing tells apart from a request that failed in transit. Payments in flight are
 * looked up only when the client's transport reports outcomes (known from the start with an x402 HTTP
 * client, else once one was reported): an app that calls `createPaymentPayload` itself and never
 * reports would otherwise leave every payment in flight, and each repeat purchase refused.
 */
export class PurchaseGuard {
  private readonly byKey = new Map<string, SignedPayment[]>()
  private readonly byPayload = new WeakMap<object, SignedPayment>()
  /** Whether the transport reports outcomes (x402's `onPaymentResponse` has fired once). */
  private outcomesReported: boolean

  /**
   * @param ctx - The vault client, to read the chain.
   * @param problem - Told of a lookup that failed for a payment still in flight (the payment proceeds).
   * @param reportsOutcomes - Whether the transport is known to report every answer (x402's HTTP
   *   client makes the requests).
   */
  constructor(
    private readonly ctx: VaultContext,
    private readonly problem: (error: unknown) => void,
    reportsOutcomes: boolean,
  ) {
    this.outcomesReported = reportsOutcomes
  }

  /** Payments whose answer came without an outcome, not yet resolved on chain. */
  get unknownOutcomes(): number {
    let count = 0
    for (const list of this.byKey.values()) {
      for (const signed of list) if (signed.outcome === 'unknown') count++
    }
    return count
  }

  /**
   * Records a payment x402 signed (`onAfterPaymentCreation`): an `exact` one (EIP-3009 or Permit2) or an
   * `upto` one (Permit2, its nonce used once the seller settles any amount of it). Any other payload,
   * such as a batch-settlement voucher or deposit, is not recorded.
   */
  signed(purchase: Purchase, paymentPayload: X402PaymentPayload): void {
    let authorization: PaymentAuthorization
    try {
      authorization = signedAuthorizationOf(paymentPayload, ['exact', 'upto'])
    } catch {
      // Another scheme's payment: no authorization on chain to look up.
      return
    }
    if (authorization.network !== this.ctx.network) return
    let markAnswered = () => {}
    const answered = new Promise<void>((resolve) => {
      markAnswered = resolve
    })
    const signed: SignedPayment = {
      key: keyOf(purchase),
      purchase,
      authorization,
      signedAt: Date.now(),
      outcome: 'in-flight',
      reported: false,
      answered,
      markAnswered,
    }
    const list = this.byKey.get(signed.key) ?? []
    list.push(signed)
    this.byKey.set(signed.key, list)
    this.byPayload.set(paymentPayload, signed)
  }

  /** Records a paid request's answer (`onPaymentResponse`): a known outcome forgets the payment. */
  answered(paymentPayload: object | undefined, outcome: PaymentOutcome): void {
    this.outcomesReported = true
    const signed = paymentPayload && this.byPayload.get(paymentPayload)
    if (!signed) return
    if (outcome === 'unknown') signed.outcome = 'unknown'
    else this.forget(signed)
    signed.markAnswered()
  }

  /**
   * Checks that a payment for `purchase` may be signed: resolves when it may, throws when an earlier
   * payment for the same purchase makes signing it a possible second charge.
   *
   * @throws {PaymentOutcomeError} `PAYMENT_ALREADY_SETTLED` or `PAYMENT_OUTCOME_UNKNOWN`.
   */
  async check(purchase: Purchase): Promise<void> {
    this.forgetExpired(Date.now())
    const earlier = (this.byKey.get(keyOf(purchase)) ?? []).filter(
      (signed) => signed.outcome === 'unknown' || this.outcomesReported,
    )
    if (earlier.length === 0) return
    const reads = await Promise.allSettled(
      earlier.map((signed) => readAuthorizationState(this.ctx, signed.authorization)),
    )
    const looked: { signed: SignedPayment; state: PaymentAuthorizationState }[] = []
    for (const [index, read] of reads.entries()) {
      const signed = earlier[index] as SignedPayment
      if (read.status === 'fulfilled') {
        looked.push({ signed, state: read.value })
      } else if (signed.outcome === 'unknown') {
        // Cannot show that the earlier payment will not be settled: refuse, as for a valid one.
        throw outcomeUnknown(signed, undefined, read.reason)
      } else {
        this.problem(read.reason)
      }
    }
    // A settled one first: it is the stronger reason, and says that the purchase is paid for.
    looked.sort((a, b) => Number(b.state.state === 'used') - Number(a.state.state === 'used'))
    for (const { signed, state } of looked) {
      if (state.state === 'used') {
        if (signed.outcome === 'in-flight' && !signed.reported) {
          await Promise.race([signed.answered, sleep(answerGraceMs)])
          // Its answer came with a settlement (or a refusal): a payment of its own, not a retry.
          if (!this.has(signed)) continue
        }
        const first = !signed.reported
        signed.reported = true
        if (state.blockTimestamp >= state.authorization.validBefore) {
          // Told once; from now on a payment for this purchase is a new one.
          this.forget(signed)
          if (!first) continue
        }
        throw alreadySettled(signed, state)
      }
      if (state.state === 'expired') {
        // Unused, and no block can settle it any more.
        this.forget(signed)
        continue
      }
      if (signed.outcome === 'unknown') throw outcomeUnknown(signed, state)
    }
  }

  /** Forgets every payment. */
  clear(): void {
    this.byKey.clear()
  }

  private has(signed: SignedPayment): boolean {
    return this.byKey.get(signed.key)?.includes(signed) ?? false
  }

  private forget(signed: SignedPayment): void {
    const list = this.byKey.get(signed.key)
    if (!list) return
    const index = list.indexOf(signed)
    if (index !== -1) list.splice(index, 1)
    if (list.length === 0) this.byKey.delete(signed.key)
  }

  private forgetExpired(now: number): void {
    for (const list of [...this.byKey.values()]) {
      for (const signed of [...list]) {
        if (Number(signed.authorization.validBefore) * 1000 + forgetAfterExpiryMs < now) {
          this.forget(signed)
        }
      }
    }
  }
}

/** The purchase's identity: its URL as given and its requirements, addresses in lower case. */
function keyOf(purchase: Purchase): string {
  return JSON.stringify([
    purchase.url,
    purchase.network,
    purchase.asset.toLowerCase(),
    purchase.payTo.toLowerCase(),
    purchase.amount.toString(),
  ])
}

/**
 * A purchase's URL for messages and details: origin and path, the query left out (it may carry a
 * key of the buyer's).
 */
function shownUrl(url: string): string {
  try {
    const parsed = new URL(url)
    return `${parsed.origin}${parsed.pathname}${parsed.search ? '?…' : ''}`
  } catch {
    return '(not a URL)'
  }
}

function describe(signed: SignedPayment, state: PaymentAuthorizationState | undefined) {
  const { purchase, authorization } = signed
  return {
    summary: `Payment of ${formatUsdc(purchase.amount)} USDC to ${purchase.payTo} for ${shownUrl(purchase.url)}`,
    details: {
      purchase: { ...purchase, url: shownUrl(purchase.url) },
      earlierPayment: {
        method: authorization.method,
        payer: authorization.payer,
        nonce: authorization.nonce,
        validBefore: authorization.validBefore,
        signedAt: new Date(signed.signedAt).toISOString(),
      },
      ...(state ? { blockNumber: state.blockNumber } : {}),
    },
  }
}

function alreadySettled(
  signed: SignedPayment,
  state: PaymentAuthorizationState,
): PaymentOutcomeError {
  const { summary, details } = describe(signed, state)
  return new PaymentOutcomeError(
    `${summary} refused before signing: an earlier payment for the same purchase (signed ${details.earlierPayment.signedAt}, nonce ${signed.authorization.nonce}) was settled on chain, though its answer did not say so. Paying again would pay twice for one purchase.`,
    { code: 'PAYMENT_ALREADY_SETTLED', details },
  )
}

function outcomeUnknown(
  signed: SignedPayment,
  state: PaymentAuthorizationState | undefined,
  cause?: unknown,
): PaymentOutcomeError {
  const { summary, details } = describe(signed, state)
  const expires = new Date(Number(signed.authorization.validBefore) * 1000).toISOString()
  const why = cause
    ? `its state could not be read on chain (${toVaultError(cause).code})`
    : 'it is not settled on chain yet'
  return new PaymentOutcomeError(
    `${summary} refused before signing: an earlier payment for the same purchase (signed ${details.earlierPayment.signedAt}, nonce ${signed.authorization.nonce}) has an unknown outcome: ${why}, and it can be settled until ${expires}. Paying again before then could pay twice; try again after it.`,
    {
      code: 'PAYMENT_OUTCOME_UNKNOWN',
      details,
      retryable: true,
      ...(cause === undefined ? {} : { cause: toVaultError(cause) }),
    },
  )
}

/**
 * The purchase a payment x402 is about to sign is for (see {@link Purchase}), or `undefined` when
 * neither the request nor the seller's 402 tells its URL.
 *
 * @param ctx - The vault client: the payment's network and asset (a payment the vault funds).
 * @param payment - The payment, as `buyerPaymentOf` read it.
 * @param resourceUrl - The 402's `resource.url`, as the seller declared it.
 * @param requestUrl - The request's URL, as x402's HTTP client saw it, when known.
 */
export function purchaseOf(
  ctx: VaultContext,
  payment: { amount: bigint; payTo: Address },
  resourceUrl: string | undefined,
  requestUrl: string | undefined,
): Purchase | undefined {
  const url = requestUrl ?? resourceUrl
  if (typeof url !== 'string' || url.length === 0) return undefined
  return {
    url: withoutFragment(url),
    network: ctx.network,
    asset: ctx.addresses.usdc,
    payTo: payment.payTo,
    amount: payment.amount,
  }
}

/** The URL as a request sends it: normalised, its fragment (never sent) left out. */
function withoutFragment(url: string): string {
  try {
    const parsed = new URL(url)
    parsed.hash = ''
    return parsed.href
  } catch {
    return url
  }
}
