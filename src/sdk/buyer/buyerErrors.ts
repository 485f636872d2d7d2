import { VaultError, type VaultErrorOptions } from '../errors/classes.js'

/**
 * A payment the buyer's policy refuses (`onOverCap: 'block'`): above `maxPerPayment`, or a recall for it
 * would take the recalls of the window past `maxPerWindow`. Code `PAYMENT_OVER_CAP`; `details` has
 * `cap` (`'maxPerPayment'` or `'maxPerWindow'`), `amount`, `limit` and, for the window, `recalledInWindow`
 * and `needed`. Thrown before x402 signs: nothing was signed or sent.
 *
 * @example
 * new PaymentPolicyError('Payment of 5 USDC is above maxPerPayment (2 USDC).', {
 *   code: 'PAYMENT_OVER_CAP', details: { cap: 'maxPerPayment', amount: 5_000_000n, limit: 2_000_000n },
 * })
 */
export class PaymentPolicyError extends VaultError {
  override name = 'PaymentPolicyError'
  constructor(message: string, options: VaultErrorOptions) {
    super(message, { ...options, category: 'precondition' })
  }
}

/**
 * A payment aborted before x402 signs it, because the wallet cannot pay it and the vault could not make
 * up the difference. Nothing was signed or sent, and nothing moved. The code says why:
 * - `BUYER_FUNDS_SHORT`: the wallet's liquid USDC and its vault position together are short (or the
 *   wallet has no position);
 * - `VAULT_CANNOT_DELIVER`: the vault cannot pay out now (its venues are paused or out of withdrawal
 *   capacity, Morpho is unreachable);
 * - `RECALL_FAILED`: the withdrawal failed for another reason (the RPC, the transaction), after retries.
 *
 * `details` has `amount` (the payment), `walletBalance` (liquid USDC after the failure, when it could
 * be read), `paymentsTotal` (the payments the failed recall was for), `reason` (the failed withdrawal's
 * own code, such as `INSUFFICIENT_VAULT_LIQUIDITY`) and `step`; its `cause` is that failure.
 *
 * @example
 * new PaymentFundingError('…', { code: 'VAULT_CANNOT_DELIVER', details: { amount, walletBalance, reason } })
 */
export class PaymentFundingError extends VaultError {
  override name = 'PaymentFundingError'
  constructor(message: string, options: VaultErrorOptions) {
    super(message, { ...options, category: 'precondition' })
  }
}

/**
 * A payment refused before x402 signs it because an earlier payment for the same purchase (the same
 * resource URL, network, asset, `payTo` and amount) has an outcome the seller did not report, and
 * signing again could pay twice. The code says what the chain showed:
 * - `PAYMENT_ALREADY_SETTLED`: the earlier authorization was used: that purchase is paid for (the
 *   seller's answer was lost). Not retryable while the earlier one's window lasts.
 * - `PAYMENT_OUTCOME_UNKNOWN`: the earlier authorization is unused but can still be settled, until
 *   `details.earlierPayment.validBefore`; retryable from then on.
 *
 * `details` has `purchase` (`url`, `network`, `asset`, `payTo`, `amount`), `earlierPayment` (`method`,
 * `payer`, `nonce`, `validBefore` in unix seconds, `signedAt` as an ISO time) and `blockNumber` of the
 * read. Nothing was signed, sent or recalled.
 *
 * @example
 * new PaymentOutcomeError('…', { code: 'PAYMENT_ALREADY_SETTLED', details: { purchase, earlierPayment } })
 */
export class PaymentOutcomeError extends VaultError {
  override name = 'PaymentOutcomeError'
  constructor(message: string, options: VaultErrorOptions) {
    super(message, { ...options, category: 'precondition' })
  }
}
