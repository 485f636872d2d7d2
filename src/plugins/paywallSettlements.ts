import { decodePaymentSignatureHeader } from '@x402/core/http'
import type { x402ResourceServer } from '@x402/core/server'
import type { Network, SettleResponse } from '@x402/core/types'
import type { Hash } from 'viem'
import {
  formatUsdc,
  type PaymentAuthorization,
  type PaymentAuthorizationState,
  type PaymentSettlement,
  paymentAuthorizationOf,
  type SettlementHookContext,
  type SettlementHookTarget,
  type SweepPhase,
  type VaultClient,
  VaultError,
  VaultTransactionError,
  type X402PaymentPayload,
} from '../index.js'
import { permit2Address, sleep, toVaultError } from '../sdk/shared.js'
import {
  type FacilitatorTrouble,
  facilitatorError,
  facilitatorTroubleOf,
} from './facilitatorClient.js'

/** Tells the seller of a problem: the log, and `onNonFatalError` when the sweeper is on. */
export type PaywallReport = (phase: SweepPhase, error: VaultError) => void

/** What the paywall's settlement checks need. */
export type PaywallSettlementsOptions = {
  /** Reads the chain (its public client); its network is the one the paywall sells on. */
  vault: VaultClient
  /** How long a payment whose settle answer was lost, late or had no transaction is watched before answering. */
  checkMs: number
  /**
   * Whether each success the facilitator reports is checked on chain. It is what keeps the in-process
   * sweeper's settlements exact; without one (`sweep: false`) the sweeper elsewhere and the ledger count
   * from the chain's logs, and a sale costs no RPC request.
   */
  checkClaims: boolean
  report: PaywallReport
}

/** x402's settle-failure context, reduced to what is read here. */
type SettleFailure = {
  readonly paymentPayload: X402PaymentPayload
  readonly requirements: {
    readonly maxTimeoutSeconds?: number
  } & SettlementHookContext['requirements']
  readonly error: unknown
}

/** x402's after-settle context, reduced to what is read here. */
type SettleSuccess = SettlementHookContext & { readonly paymentPayload: X402PaymentPayload }

/** What the chain says of a payment, as far as the paywall could learn it in time. */
type Outcome =
  | { kind: 'settled'; settlement: PaymentSettlement }
  | { kind: 'not-taken'; state: PaymentAuthorizationState }
  | {
      kind: 'pending'
      /** The last state read; `used` when the authorisation is used but no settlement of it was found. */
      state?: PaymentAuthorizationState | undefined
      /** The last read's failure, when the chain could not be read. */
      error?: VaultError | undefined
    }

/** Why a settle call's outcome is unknown: what the facilitator did, and the transaction it named. */
type Unknown = {
  said: string
  trouble?: FacilitatorTrouble | undefined
  transaction?: Hash | undefined
}

/** x402's answer for a settlement still pending: its `errorReason`, on the `PAYMENT-RESPONSE` header too. */
export const settlementPendingReason = 'settlement_pending'
/** The `errorReason` of a payment whose authorisation expired unused: it was not taken. */
export const authorizationExpiredReason = 'authorization_expired'

const transactionHashPattern = /^0x[0-9a-fA-F]{64}$/
/** Claim checks run at once: each is a receipt read (and on Permit2 a transaction read). */
const maxChecksAtOnce = 4
/** How often a waiting claim check looks for a free slot, in ms. */
const slotWaitMs = 10
/** The least time searched back for a used authorisation's settlement: x402's default `maxTimeoutSeconds`. */
const minSearchSeconds = 300n
/** Extra seconds searched before the signing time: clocks differ. */
const searchSlackSeconds = 60n

/**
 * What the paywall does around x402's settlements, so that an outcome the facilitator did not tell is
 * learnt from the chain, and nothing is counted that the chain does not show:
 *
 * - A settlement that timed out, failed in transport, was answered garbled or without a transaction, or
 *   stayed `settlement_pending` after x402's one retry (x402's settle-failure hook): the chain is asked
 *   whether this payment's authorisation was used, every polling interval for up to `checkMs`. Used, and
 *   its transaction found: the buyer gets the resource (200, with that transaction) and the sale counts.
 *   Expired unused: the buyer is told the payment was not taken. Otherwise the buyer gets 402
 *   `settlement_pending`, the seller is told, and the payment is watched until its `validBefore`.
 * - A settlement the facilitator reports as a success (x402's after-settle hook): the paid response is
 *   not held up; in the background, its transaction is checked on chain, and only what the chain shows
 *   reaches the sweeper (the payer and amount signed, the transaction that carried them). A claim the
 *   chain does not bear out is reported.
 * - A settlement the facilitator refuses naming a transaction (x402's settle-failure hook): that
 *   transaction is read once; when it settled this payment the buyer gets 200, the sale counts, and the
 *   seller is told (`SETTLEMENT_CLAIM_MISMATCH`). Any other refusal stands, without a chain read.
 *
 * The sweeper attaches to `sweeperTarget`, not to the resource server: it hears of checked settlements.
 */
export class PaywallSettlements {
  /** Where the sweeper attaches (`attachToResourceServer`): it hears only settlements the chain shows. */
  readonly sweeperTarget: SettlementHookTarget
  private readonly sweeperHooks: ((context: SettlementHookContext) => Promise<void>)[] = []
  /** Claim checks in flight: short (a receipt read or two). */
  private readonly checks = new Set<Promise<void>>()
  /** Pending payments watched until they settle or expire. */
  private readonly watches = new Set<Promise<void>>()
  /**
   * Set by `close()`; loops look at it between reads. (Not an AbortController: on an edge runtime one
   * made in the request that built the paywall cannot be touched from another request.)
   */
  private closed = false
  /** Claim checks running; the rest wait their turn, so a burst of sales is no burst of reads. */
  private checksRunning = 0

  constructor(private readonly options: PaywallSettlementsOptions) {
    this.sweeperTarget = { onAfterSettle: (hook) => this.sweeperHooks.push(hook) }
  }

  /**
   * Registers the hooks on an x402 resource server.
   *
   * @param resourceServer - Anything with x402's `onAfterSettle` and `onSettleFailure`.
   */
  attach(resourceServer: x402ResourceServer): void {
    // x402's contexts are read-only versions of these shapes.
    resourceServer.onAfterSettle((context) => this.afterSettle(context as unknown as SettleSuccess))
    resourceServer.onSettleFailure((context) =>
      this.settleFailure(context as unknown as SettleFailure),
    )
  }

  /**
   * Passes on a settlement the paywall made and checked itself, outside x402's hooks (a `batch-settlement`
   * settle of claimed vouchers to `payTo`).
   *
   * @param context - As x402's after-settle context, with what the chain shows.
   */
  settled(context: SettlementHookContext): void {
    this.relay(context)
  }

  /** Resolves once no claim check is in flight (watches of pending payments go on). */
  async idle(): Promise<void> {
    while (this.checks.size > 0) await Promise.allSettled([...this.checks])
  }

  /** Stops watching pending payments and resolves once every check and watch has ended. */
  async close(): Promise<void> {
    this.closed = true
    while (this.checks.size + this.watches.size > 0) {
      await Promise.allSettled([...this.checks, ...this.watches])
    }
  }

  /** x402's settle-failure hook: learns an unknown outcome from the chain before the buyer is answered. */
  async settleFailure(
    context: SettleFailure,
  ): Promise<undefined | { recovered: true; result: SettleResponse }> {
    const authorization = this.authorizationOf(context.paymentPayload)
    if (!authorization) return undefined
    const unknown = unknownOutcomeOf(context.error)
    if (!unknown) return this.refusalContradicted(context, authorization)
    const { payer } = authorization
    const network = authorization.network as Network
    const outcome = await this.learn(context, {
      until: Date.now() + this.options.checkMs,
      transaction: unknown.transaction,
    })
    if (outcome.kind === 'settled') {
      const { settlement } = outcome
      this.forward(context, settlement)
      // A facilitator that said "pending" and was right needs no report; one that failed does.
      if (unknown.trouble) {
        this.options.report(
          'facilitator',
          facilitatorError(
            'settle',
            unknown.trouble,
            `answered 200: the chain shows the payment settled in ${settlement.txHash}, so the sale counts.`,
            { outcome: 'settled', txHash: settlement.txHash, payer },
          ),
        )
      }
      return {
        recovered: true,
        result: {
          success: true,
          transaction: settlement.txHash,
          network,
          payer: settlement.payer,
          amount: settlement.amount.toString(),
        },
      }
    }
    if (outcome.kind === 'not-taken') {
      const expiry = isoTime(authorization.validBefore)
      const told = `The payment was not taken: its authorization expired unused at ${expiry}, so nothing was transferred. Pay again to get the resource.`
      // A facilitator that said "pending" was not wrong either: nothing happened, and the buyer is told.
      if (unknown.trouble) {
        this.options.report(
          'facilitator',
          facilitatorError('settle', unknown.trouble, `answered 402: ${told}`, {
            outcome: 'not-taken',
            payer,
          }),
        )
      }
      return {
        recovered: true,
        result: {
          success: false,
          errorReason: authorizationExpiredReason,
          errorMessage: told,
          transaction: '',
          network,
          payer,
        },
      }
    }
    this.options.report(
      'facilitator',
      new VaultTransactionError(
        `A payment's settlement is pending: the x402 facilitator ${unknown.said}, and ${pendingWhy(outcome, this.options.checkMs)}. The buyer ${payer} was answered 402 settlement_pending: the payment of ${formatUsdc(authorization.amount)} USDC may still settle until ${isoTime(authorization.validBefore)}.${outcome.state?.state === 'used' ? '' : ' The paywall watches it until then and reports LATE_SETTLEMENT if it settles.'}`,
        {
          code: 'SETTLEMENT_PENDING',
          details: {
            payer,
            payTo: authorization.payTo,
            asset: authorization.asset,
            amount: authorization.amount,
            nonce: authorization.nonce,
            validBefore: authorization.validBefore,
            ...(unknown.trouble ? { facilitatorCode: unknown.trouble.code } : {}),
          },
          retryable: true,
          ...(outcome.error ? { cause: outcome.error } : {}),
        },
      ),
    )
    if (outcome.state?.state !== 'used') this.watch(context, authorization, 'pending')
    // Exactly what x402 puts on the PAYMENT-RESPONSE header for a settle response: no message here.
    return {
      recovered: true,
      result: {
        success: false,
        errorReason: settlementPendingReason,
        payer,
        transaction: '',
        network,
      },
    }
  }

  /**
   * A facilitator's refusal that names a transaction, read against the chain: a facilitator that misread
   * its own receipt (x402's answers `invalid_exact_evm_transfer_event_mismatch` with the transaction),
   * or lies, can refuse a payment that its transaction settled. When that transaction settled this
   * payment, the buyer gets what it paid for (200) and the sale counts; otherwise the refusal stands, as
   * x402 answers it. One receipt read (and on Permit2 a transaction read when the receipt moved the
   * money), on refusals that name a transaction only.
   *
   * A refusal without a transaction (or whose transaction did not settle this payment) is not searched
   * for on chain: a buyer that sends one payment to two requests at once gets one settled and the other
   * refused, and a search would find the first request's settlement and give the resource twice.
   */
  private async refusalContradicted(
    context: SettleFailure,
    authorization: PaymentAuthorization,
  ): Promise<undefined | { recovered: true; result: SettleResponse }> {
    const refusal = settleRefusalOf(context.error)
    if (!refusal?.transaction) return undefined
    let settlement: PaymentSettlement | undefined
    try {
      settlement = await this.options.vault.findPaymentSettlement({
        paymentPayload: context.paymentPayload,
        transaction: refusal.transaction,
      })
    } catch (error) {
      // The chain could not be read: the refusal stands, and the seller hears why it was not checked.
      const cause = toVaultError(error)
      this.options.report(
        'settlement-check',
        new VaultError(
          `The x402 facilitator refused a payment (${refusal.reason}) naming the transaction ${refusal.transaction}, and the chain could not be read to check it (${cause.message}): the buyer ${authorization.payer} was answered 402 as the facilitator said.`,
          {
            code: cause.code,
            category: cause.category,
            details: { txHash: refusal.transaction, payer: authorization.payer },
            cause,
            retryable: cause.retryable,
          },
        ),
      )
      return undefined
    }
    if (!settlement) return undefined
    this.forward(context, settlement)
    this.options.report(
      'facilitator',
      new VaultTransactionError(
        `The x402 facilitator answered that a payment failed (${refusal.reason}), but its transaction ${settlement.txHash} settled it on chain: the buyer ${settlement.payer} was answered 200, and the sale counts.`,
        {
          code: 'SETTLEMENT_CLAIM_MISMATCH',
          details: {
            txHash: settlement.txHash,
            payer: settlement.payer,
            amount: settlement.amount,
            errorReason: refusal.reason,
          },
        },
      ),
    )
    return {
      recovered: true,
      result: {
        success: true,
        transaction: settlement.txHash,
        network: authorization.network as Network,
        payer: settlement.payer,
        amount: settlement.amount.toString(),
      },
    }
  }

  /** x402's after-settle hook: returns at once; the facilitator's claim is checked in the background. */
  async afterSettle(context: SettleSuccess): Promise<void> {
    let authorization: PaymentAuthorization | undefined
    try {
      authorization = paymentAuthorizationOf(context.paymentPayload)
    } catch {
      // Not an x402 exact EVM payment: the sweeper hears it as x402 reported it, and ignores what it
      // does not count.
      this.relay(context)
      return
    }
    if (this.closed || !this.options.checkClaims) return
    this.track(this.checks, this.checkClaim(context, authorization))
  }

  /** Checks a facilitator's success claim when a check slot is free. */
  private async checkClaim(context: SettleSuccess, authorization: PaymentAuthorization) {
    // Each waiting check looks for a free slot on its own timer: on an edge runtime a promise one
    // request created must not be resolved by another's check.
    while (this.checksRunning >= maxChecksAtOnce) await sleep(slotWaitMs)
    this.checksRunning++
    try {
      await this.checkClaimNow(context, authorization)
    } finally {
      this.checksRunning--
    }
  }

  /** Checks a facilitator's success claim on chain and passes on what the chain shows. */
  private async checkClaimNow(context: SettleSuccess, authorization: PaymentAuthorization) {
    const { result } = context
    const claimed = typeof result.transaction === 'string' ? result.transaction : ''
    const wrongFields = claimedFieldsWrong(result, authorization)
    let settlement: PaymentSettlement | undefined
    if (transactionHashPattern.test(claimed)) {
      const checked = await this.retrying(() =>
        this.options.vault.findPaymentSettlement({
          paymentPayload: context.paymentPayload,
          transaction: claimed as Hash,
          timeout: this.options.checkMs,
        }),
      )
      if ('error' in checked) {
        this.options.report(
          'settlement-check',
          new VaultError(
            `The x402 facilitator answered that a payment settled in ${claimed}, and the chain could not be read to check it (${checked.error.message}): the sale is not counted among the sweep's settlements (the sweep still takes its money from the balance).`,
            {
              code: checked.error.code,
              category: checked.error.category,
              details: { txHash: claimed },
              cause: checked.error,
              retryable: checked.error.retryable,
            },
          ),
        )
        return
      }
      settlement = checked.value
    }
    if (settlement) {
      this.forward(context, settlement)
      if (wrongFields.length > 0) {
        this.options.report(
          'facilitator',
          claimMismatch(
            claimed,
            `${wrongFields.join(' and ')}; the chain shows ${settlement.payer} paying ${formatUsdc(settlement.amount)} USDC in that transaction, and the sale counts as the chain shows`,
          ),
        )
      }
      return
    }
    const said = transactionHashPattern.test(claimed)
      ? 'that transaction did not settle this payment'
      : 'it named no transaction'
    const outcome = await this.learn(context, { until: 0 })
    if (outcome.kind === 'settled') {
      this.forward(context, outcome.settlement)
      this.options.report(
        'facilitator',
        claimMismatch(claimed, `${said}: it settled in ${outcome.settlement.txHash}, which counts`),
      )
      return
    }
    if (outcome.kind === 'not-taken') {
      this.options.report(
        'facilitator',
        claimMismatch(
          claimed,
          `${said}, and its authorization expired unused: the buyer ${authorization.payer} got the resource without paying`,
        ),
      )
      return
    }
    this.options.report(
      'facilitator',
      claimMismatch(
        claimed,
        `${said}, and ${pendingWhy(outcome, 0)}: so far the buyer ${authorization.payer} got the resource without paying. The paywall watches the payment until ${isoTime(authorization.validBefore)} and reports LATE_SETTLEMENT if it settles.`,
      ),
    )
    if (outcome.state?.state !== 'used') this.watch(context, authorization, 'claimed')
  }

  /**
   * Reads the authorisation's state every polling interval until `until` (at least once): used (and
   * its settlement found), expired, or still unknown. A transaction the facilitator named is checked
   * first.
   */
  private async learn(
    context: {
      readonly paymentPayload: X402PaymentPayload
      readonly requirements: SettleFailure['requirements']
    },
    { until, transaction }: { until: number; transaction?: Hash | undefined },
  ): Promise<Outcome> {
    const { vault } = this.options
    const { paymentPayload } = context
    const pollMs = vault.publicClient.pollingInterval
    let last: Extract<Outcome, { kind: 'pending' }> = { kind: 'pending' }
    for (;;) {
      try {
        const named = transaction
          ? await vault.findPaymentSettlement({ paymentPayload, transaction })
          : undefined
        if (named) return { kind: 'settled', settlement: named }
        const state = await vault.getPaymentAuthorizationState({ paymentPayload })
        if (state.state === 'expired') return { kind: 'not-taken', state }
        if (state.state === 'used') {
          const settlement = await vault.findPaymentSettlement({
            paymentPayload,
            fromBlock: searchFrom(state, context.requirements.maxTimeoutSeconds),
          })
          // Used, but no transfer of it found: cancelled by the payer, or settled out of sight. Not
          // "not taken": the buyer must not be invited to pay again.
          return settlement ? { kind: 'settled', settlement } : { kind: 'pending', state }
        }
        last = { kind: 'pending', state }
      } catch (error) {
        last = { ...last, error: toVaultError(error) }
      }
      const left = until - Date.now()
      if (left <= 0 || this.closed) return last
      // The last read falls at `until`: the chain is watched for the whole time.
      await sleep(Math.min(pollMs, left))
    }
  }

  /** Watches a pending payment until it settles or expires (or the paywall closes). */
  private watch(
    context: Parameters<PaywallSettlements['learn']>[0],
    authorization: PaymentAuthorization,
    why: 'pending' | 'claimed',
  ): void {
    const task = async () => {
      // The chain's time can trail the wall clock by a block or two: a minute past `validBefore`, an
      // unused authorisation reads as expired.
      const until = Number(authorization.validBefore) * 1000 + 60_000
      const outcome = await this.learn(context, { until })
      if (this.closed) return
      const payment = `The payment of ${formatUsdc(authorization.amount)} USDC from ${authorization.payer}`
      if (outcome.kind === 'settled') {
        this.forward(context, outcome.settlement)
        this.options.report(
          'facilitator',
          new VaultTransactionError(
            `${payment} ${why === 'pending' ? 'that was answered settlement_pending' : 'that the facilitator claimed in another transaction'} settled later, in ${outcome.settlement.txHash}: the sale counts${why === 'pending' ? ', but the buyer was not given the resource for it: make it right with them' : ''}.`,
            {
              code: 'LATE_SETTLEMENT',
              details: {
                payer: authorization.payer,
                txHash: outcome.settlement.txHash,
                amount: authorization.amount,
              },
            },
          ),
        )
        return
      }
      console.warn(
        outcome.kind === 'not-taken'
          ? `x402-vault: ${payment} that was ${why === 'pending' ? 'pending' : 'claimed but not settled'} expired unused: nothing was transferred.`
          : `x402-vault: ${payment} is still unknown at ${isoTime(authorization.validBefore)}: ${pendingWhy(outcome, 0)}.`,
      )
    }
    this.track(this.watches, task())
  }

  /** Passes a settlement the chain shows to the sweeper, with the payer and amount that were signed. */
  private forward(
    context: { readonly requirements: SettlementHookContext['requirements'] },
    settlement: PaymentSettlement,
  ) {
    this.relay({
      requirements: {
        ...context.requirements,
        payTo: settlement.payTo,
        asset: settlement.asset,
        amount: settlement.amount.toString(),
      },
      result: {
        success: true,
        transaction: settlement.txHash,
        network: context.requirements.network,
        payer: settlement.payer,
        amount: settlement.amount.toString(),
      },
    })
  }

  private relay(context: SettlementHookContext) {
    for (const hook of this.sweeperHooks) void hook(context).catch(() => {})
  }

  private authorizationOf(paymentPayload: X402PaymentPayload): PaymentAuthorization | undefined {
    try {
      const authorization = paymentAuthorizationOf(paymentPayload)
      return authorization.network === this.options.vault.network ? authorization : undefined
    } catch {
      return undefined
    }
  }

  /** Runs a read again each polling interval while it fails, for up to `checkMs`. */
  private async retrying<T>(read: () => Promise<T>): Promise<{ value: T } | { error: VaultError }> {
    const until = Date.now() + this.options.checkMs
    const pollMs = this.options.vault.publicClient.pollingInterval
    for (;;) {
      try {
        return { value: await read() }
      } catch (error) {
        if (Date.now() + pollMs > until || this.closed) {
          return { error: toVaultError(error) }
        }
      }
      await sleep(pollMs)
    }
  }

  private track(set: Set<Promise<void>>, work: Promise<void>) {
    const task = work.catch((error: unknown) => {
      this.options.report('settlement-check', toVaultError(error))
    })
    set.add(task)
    void task.finally(() => set.delete(task))
  }
}

/**
 * Why a settle call's outcome is unknown, or `undefined` when the facilitator's answer is definite: a
 * refusal (nothing was settled), or a request that never reached it.
 */
function unknownOutcomeOf(error: unknown): Unknown | undefined {
  // By name: a resource server of the seller's own may come from another copy of @x402/core.
  if (error instanceof Error && (error.name === 'SettleError' || error.name === 'VerifyError')) {
    const { errorReason, transaction } = error as { errorReason?: unknown; transaction?: unknown }
    if (errorReason !== settlementPendingReason) return undefined
    return {
      said: "answered settlement_pending, and again to x402's one retry",
      transaction:
        typeof transaction === 'string' && transactionHashPattern.test(transaction)
          ? (transaction as Hash)
          : undefined,
    }
  }
  const trouble = facilitatorTroubleOf(error)
  if (trouble.neverReached) return undefined
  return { said: `failed to settle it (${trouble.detail})`, trouble }
}

/** A facilitator's own refusal of a settlement (not `settlement_pending`): its reason and any transaction. */
function settleRefusalOf(
  error: unknown,
): { reason: string; transaction?: Hash | undefined } | undefined {
  if (!(error instanceof Error) || error.name !== 'SettleError') return undefined
  const { errorReason, transaction } = error as { errorReason?: unknown; transaction?: unknown }
  if (errorReason === settlementPendingReason) return undefined
  return {
    reason: typeof errorReason === 'string' ? errorReason : error.message,
    transaction:
      typeof transaction === 'string' && transactionHashPattern.test(transaction)
        ? (transaction as Hash)
        : undefined,
  }
}

/** The fields of a success claim that differ from what the payment's authorisation says. */
function claimedFieldsWrong(
  result: SettlementHookContext['result'],
  authorization: PaymentAuthorization,
): string[] {
  const wrong: string[] = []
  if (
    typeof result.payer === 'string' &&
    result.payer.toLowerCase() !== authorization.payer.toLowerCase()
  ) {
    wrong.push(`it named the payer ${result.payer}`)
  }
  if (typeof result.amount === 'string' && result.amount !== authorization.amount.toString()) {
    wrong.push(`it named the amount ${result.amount} base units`)
  }
  if (typeof result.network === 'string' && result.network !== authorization.network) {
    wrong.push(`it named the network ${result.network}`)
  }
  return wrong
}

function claimMismatch(claimed: string, what: string): VaultTransactionError {
  return new VaultTransactionError(
    `The x402 facilitator answered that a payment settled${transactionHashPattern.test(claimed) ? ` in ${claimed}` : ''}, but ${what}.`,
    { code: 'SETTLEMENT_CLAIM_MISMATCH', details: { claimedTransaction: claimed } },
  )
}

/** Why the outcome is still unknown, for a message. */
function pendingWhy(outcome: Extract<Outcome, { kind: 'pending' }>, checkMs: number): string {
  if (outcome.state?.state === 'used') {
    return 'its authorization is used on chain, but no transfer of it to payTo was found (cancelled by the payer, or settled out of sight)'
  }
  if (!outcome.state && outcome.error)
    return `the chain could not be read (${outcome.error.message})`
  return checkMs > 0
    ? `its authorization is still unused on chain after ${checkMs} ms`
    : 'its authorization is still unused on chain'
}

/**
 * The first block to search for a used authorisation's settlement: it cannot be mined before its payer
 * signed it, which x402's clients do `maxTimeoutSeconds` before `validBefore`. Blocks are counted one a
 * second (Base makes one every two), so the search covers at least that time, and at least x402's default
 * five minutes.
 */
function searchFrom(
  state: PaymentAuthorizationState,
  maxTimeoutSeconds: number | undefined,
): bigint {
  const window = BigInt(Number.isSafeInteger(maxTimeoutSeconds) ? (maxTimeoutSeconds as number) : 0)
  const signedAt = state.authorization.validBefore - window
  const since = state.blockTimestamp > signedAt ? state.blockTimestamp - signedAt : 0n
  const seconds = (since > minSearchSeconds ? since : minSearchSeconds) + searchSlackSeconds
  return state.blockNumber > seconds ? state.blockNumber - seconds : 0n
}

const isoTime = (seconds: bigint) => new Date(Number(seconds) * 1000).toISOString()

/**
 * The payment's authorisation, from a request's payment header (`PAYMENT-SIGNATURE`); `undefined` when
 * it cannot be read.
 */
export function paymentAuthorizationInHeader(
  header: string | undefined,
): PaymentAuthorization | undefined {
  if (!header) return undefined
  try {
    return paymentAuthorizationOf(decodePaymentSignatureHeader(header))
  } catch {
    return undefined
  }
}

/**
 * The 402 body for a settlement still pending: not to pay again before the authorisation's
 * `validBefore`, how to check whether it was used, and the payment it concerns (`validBefore` in Unix
 * seconds, `amount` in base units).
 */
export function pendingPaymentBody(
  authorization: PaymentAuthorization | undefined,
  failure: { readonly network?: string | undefined; readonly payer?: string | undefined },
) {
  const intro =
    "The payment may still settle: the payment facilitator's answer was lost or late, and the chain does not show the payment settled yet."
  if (!authorization) {
    return {
      error: settlementPendingReason,
      reason: settlementPendingReason,
      message: `${intro} Do not pay again until the authorization you signed has expired, unless the chain shows it was not used.`,
      payment: { network: failure.network, payer: failure.payer },
    }
  }
  const until = isoTime(authorization.validBefore)
  const nonce = BigInt(authorization.nonce)
  const check =
    authorization.method === 'eip3009'
      ? `authorizationState(${authorization.payer}, ${authorization.nonce}) on the token at ${authorization.asset} is true once it is used`
      : `bit ${nonce & 255n} of nonceBitmap(${authorization.payer}, ${nonce >> 8n}) on Permit2 at ${permit2Address} is set once it is used`
  return {
    error: settlementPendingReason,
    reason: settlementPendingReason,
    message: `${intro} Do not pay again before ${until}: until then the authorization you signed can still be settled, and paying again could charge you twice. To check: ${check} (x402-vault's getPaymentAuthorizationState reads it). Used: you paid, and this seller received it. Still unused at ${until}: nothing was transferred, and you may pay again.`,
    payment: {
      network: authorization.network,
      asset: authorization.asset,
      payer: authorization.payer,
      payTo: authorization.payTo,
      amount: authorization.amount.toString(),
      validBefore: authorization.validBefore.toString(),
    },
  }
}
