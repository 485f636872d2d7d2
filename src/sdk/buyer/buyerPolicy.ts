import { VaultValidationError } from '../errors/classes.js'
import { validateUsdcOption, validateWallet } from '../internal/validate.js'
import { formatUsdc } from '../money.js'
import { PaymentPolicyError } from './buyerErrors.js'
import type { BuyerPayment } from './buyerPayment.js'

/** The policy options of `attachToClient`, as given: amounts as bigint base units or decimal USDC strings. */
export type BuyerPolicyOptions = {
  /** Recall for no payment above this. Default: no cap. */
  maxPerPayment?: bigint | string | undefined
  /**
   * Recalls ask for at most this much USDC within any `windowMs` (a recall can bring a base unit more:
   * rounding is the buyer's). Default: no cap.
   */
  maxPerWindow?: bigint | string | undefined
  /** The rolling window of `maxPerWindow`, in ms. Default 86 400 000 (a day). */
  windowMs?: number | undefined
  /** Recall only for payments to these addresses. Default: any. */
  allowedPayTo?: readonly string[] | undefined
  /**
   * Recall only for payments of requests to these origins (`https://api.example.com`). Needs
   * `httpClient`, which tells the request's URL. Default: any.
   */
  allowedOrigins?: readonly string[] | undefined
  /**
   * What happens to a payment over `maxPerPayment` or `maxPerWindow`: `'skip'` (the default) lets x402
   * pay it from what is liquid, without a recall; `'block'` refuses it with a `PaymentPolicyError`
   * before x402 signs.
   */
  onOverCap?: 'skip' | 'block' | undefined
}

/** Why the policy lets a payment go without a recall. */
export type SkippedPaymentReason = 'payee-not-allowed' | 'origin-not-allowed' | 'over-cap'

/**
 * The buyer's policy, checked: who a recall may pay for, how much, and what recalls brought within the
 * window. A payment outside it is never blocked unless `onOverCap` is `'block'` and a cap is the reason.
 */
export class BuyerPolicy {
  private readonly maxPerPayment: bigint | undefined
  private readonly maxPerWindow: bigint | undefined
  private readonly windowMs: number
  private readonly payees: Set<string> | undefined
  private readonly origins: Set<string> | undefined
  readonly block: boolean
  /** The recalls of the window, oldest first: when, and how much they brought. */
  private readonly recalls: { at: number; amount: bigint }[] = []

  /**
   * @param options - The policy options, as given.
   * @throws {VaultValidationError} `INVALID_AMOUNT`, `INVALID_ADDRESS`, `INVALID_ARGUMENT` naming the option.
   */
  constructor(options: BuyerPolicyOptions) {
    const amount = (value: bigint | string | undefined, name: string) =>
      value === undefined ? undefined : validateUsdcOption(value, name)
    this.maxPerPayment = amount(options.maxPerPayment, 'maxPerPayment')
    this.maxPerWindow = amount(options.maxPerWindow, 'maxPerWindow')
    const windowMs = options.windowMs ?? 86_400_000
    if (!Number.isSafeInteger(windowMs) || windowMs < 1) {
      throw invalid('windowMs must be a whole number of ms, at least 1.', 'windowMs')
    }
    this.windowMs = windowMs
    this.payees = listOf(options.allowedPayTo, 'allowedPayTo', (value) =>
      validateWallet(value, 'allowedPayTo').toLowerCase(),
    )
    this.origins = listOf(options.allowedOrigins, 'allowedOrigins', originOf)
    const onOverCap = options.onOverCap ?? 'skip'
    if (onOverCap !== 'skip' && onOverCap !== 'block') {
      throw invalid("onOverCap must be 'skip' or 'block'.", 'onOverCap')
    }
    this.block = onOverCap === 'block'
  }

  /** Whether the policy needs each payment's origin. */
  get needsOrigins(): boolean {
    return this.origins !== undefined
  }

  /**
   * Whether a recall may fund this payment: `undefined` when it may, else why not. With
   * `onOverCap: 'block'` a payment above `maxPerPayment` throws instead.
   *
   * @param payment - The payment.
   * @param requestUrl - The URL of the request that asked for it, when known.
   * @throws {PaymentPolicyError} `PAYMENT_OVER_CAP` when blocking.
   */
  check(payment: BuyerPayment, requestUrl: string | undefined): SkippedPaymentReason | undefined {
    if (this.payees && !this.payees.has(payment.payTo.toLowerCase())) return 'payee-not-allowed'
    if (this.origins) {
      const origin = requestUrl === undefined ? undefined : safeOrigin(requestUrl)
      if (origin === undefined || !this.origins.has(origin)) return 'origin-not-allowed'
    }
    if (this.maxPerPayment !== undefined && payment.amount > this.maxPerPayment) {
      if (this.block) {
        throw new PaymentPolicyError(
          `Payment of ${formatUsdc(payment.amount)} USDC to ${payment.payTo} refused: above maxPerPayment (${formatUsdc(this.maxPerPayment)} USDC).`,
          {
            code: 'PAYMENT_OVER_CAP',
            details: { cap: 'maxPerPayment', amount: payment.amount, limit: this.maxPerPayment },
          },
        )
      }
      return 'over-cap'
    }
    return undefined
  }

  /** What recalls may still bring within the window now; `undefined` without `maxPerWindow`. */
  windowRemaining(now = Date.now()): bigint | undefined {
    if (this.maxPerWindow === undefined) return undefined
    const spent = this.recalledInWindow(now)
    return spent >= this.maxPerWindow ? 0n : this.maxPerWindow - spent
  }

  /** USDC the recalls of the window brought. */
  recalledInWindow(now = Date.now()): bigint {
    while (this.recalls.length > 0 && (this.recalls[0]?.at ?? now) <= now - this.windowMs) {
      this.recalls.shift()
    }
    return this.recalls.reduce((sum, recall) => sum + recall.amount, 0n)
  }

  /**
   * Counts a recall against the window.
   *
   * @returns Takes it back out: for a withdrawal that was not sent after all.
   */
  recordRecall(amount: bigint, now = Date.now()): () => void {
    const recall = { at: now, amount }
    this.recalls.push(recall)
    return () => {
      const index = this.recalls.indexOf(recall)
      if (index !== -1) this.recalls.splice(index, 1)
    }
  }

  /**
   * The error for a payment whose recall would pass `maxPerWindow`.
   *
   * @param amount - The payment.
   * @param needed - The recall it would take, with the payments before it.
   */
  windowError(amount: bigint, needed: bigint): PaymentPolicyError {
    const limit = this.maxPerWindow ?? 0n
    const recalledInWindow = this.recalledInWindow()
    return new PaymentPolicyError(
      `Payment of ${formatUsdc(amount)} USDC refused: its recall of ${formatUsdc(needed)} USDC would take the recalls of the last ${this.windowMs} ms past maxPerWindow (${formatUsdc(limit)} USDC; ${formatUsdc(recalledInWindow)} USDC recalled so far).`,
      {
        code: 'PAYMENT_OVER_CAP',
        details: { cap: 'maxPerWindow', amount, limit, recalledInWindow, needed },
      },
    )
  }
}

function listOf(
  values: readonly string[] | undefined,
  name: string,
  normalise: (value: string) => string,
): Set<string> | undefined {
  if (values === undefined) return undefined
  if (!Array.isArray(values)) throw invalid(`${name} must be an array.`, name)
  return new Set(values.map((value: unknown) => normalise(value as string)))
}

/** An allowlisted origin: `scheme://host[:port]`, lower case, as `URL#origin` gives it. */
function originOf(value: string): string {
  const origin = typeof value === 'string' ? safeOrigin(value) : undefined
  if (origin === undefined) {
    throw invalid(
      `allowedOrigins: ${typeof value === 'string' ? `'${value}'` : typeof value} is not an http(s) origin such as 'https://api.example.com'.`,
      'allowedOrigins',
    )
  }
  return origin
}

function safeOrigin(url: string): string | undefined {
  try {
    const parsed = new URL(url)
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.origin : undefined
  } catch {
    return undefined
  }
}

function invalid(message: string, field: string): VaultValidationError {
  return new VaultValidationError(message, { code: 'INVALID_ARGUMENT', details: { field } })
}
