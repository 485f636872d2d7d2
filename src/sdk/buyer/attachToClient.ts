import type { X402PaymentPayload } from '../actions/paymentAuthorization.js'
import type { VaultContext } from '../context.js'
import { VaultError, VaultValidationError } from '../errors/classes.js'
import { toVaultError } from '../errors/toVaultError.js'
import { resolveAccount, validateUsdcOption } from '../internal/validate.js'
import { runExclusive } from '../internal/writeQueue.js'
import { type IdleDeposit, resolveSweepSettings, sweepIn } from '../sweep/sweep.js'
import { SweepScheduler } from '../sweep/sweepScheduler.js'
import { resolveSweepTuning, type SweepTuningOptions } from '../sweep/sweepTuning.js'
import {
  type BuyerPayment,
  buyerPaymentOf,
  channelDepositOf,
  type PaymentCreationHookContext,
} from './buyerPayment.js'
import { BuyerPolicy, type BuyerPolicyOptions } from './buyerPolicy.js'
import { rememberThrown } from './findVaultError.js'
import {
  type PaymentResponseHookContext,
  type Purchase,
  PurchaseGuard,
  paymentOutcomeOf,
  purchaseOf,
} from './purchaseGuard.js'
import type { Recall, RecallStep } from './recall.js'
import { RecallRounds } from './recallRounds.js'

/**
 * Anything with x402's client hooks: an `x402Client` of `@x402/core/client` (also exported by
 * `@x402/fetch` and `@x402/axios`). `onAfterPaymentCreation` and `onPaymentResponse` are used where the
 * client has them (x402 ≥ 2.27); without both, payments for the same purchase are not checked.
 */
export type PaymentHookTarget = {
  onBeforePaymentCreation(hook: (context: PaymentCreationHookContext) => Promise<void>): unknown
  onAfterPaymentCreation?(
    hook: (context: PaymentCreationHookContext & { paymentPayload: object }) => Promise<void>,
  ): unknown
  onPaymentCreationFailure(hook: (context: PaymentCreationHookContext) => Promise<void>): unknown
  onPaymentResponse?(hook: (context: PaymentResponseHookContext) => Promise<void>): unknown
}

/**
 * An `x402HTTPClient` of `@x402/core/client` (what `wrapFetchWithPayment` takes): its 402 hook tells the
 * URL each payment is for, which `allowedOrigins` checks.
 */
export type PaymentRequiredHookTarget = {
  onPaymentRequired(
    hook: (context: { paymentRequired: object; requestUrl: string }) => Promise<void>,
  ): unknown
}

/**
 * Where on the buyer side a problem happened:
 * - `payment-check`: a payment x402 was about to sign could not be read (it proceeds, without a
 *   recall), or an earlier payment for the same purchase, still in flight, could not be looked up on
 *   chain (it proceeds);
 * - `balance-read`, `withdraw`, `receipt`: a recall's step;
 * - `redeposit`: sweeping the excess back into the vault;
 * - `observer`: an `onRecall` or `redeposit.onIdleDeposit` callback threw or rejected.
 */
export type BuyerPhase = 'payment-check' | RecallStep | 'redeposit' | 'observer'

/** A problem the buyer side survived: none of them stopped a payment. */
export type BuyerProblem = {
  phase: BuyerPhase
  /** What went wrong, as a `VaultError` (`code`, `retryable`, a short `message`). */
  error: VaultError
  /** Whether the recall tries again. */
  willRetry: boolean
}

export type AttachToClientOptions = BuyerPolicyOptions & {
  /** USDC kept liquid in the wallet beyond the payments: a recall tops it up too. Default 0. */
  reserve?: bigint | string | undefined
  /**
   * The x402 HTTP client that makes the requests (pass the one `wrapFetchWithPayment` drives): needed
   * by `allowedOrigins`. It also tells each purchase its request's URL, and that every paid request's
   * answer is reported, so that a request that failed in transit is checked from the first payment.
   */
  httpClient?: PaymentRequiredHookTarget | undefined
  /** Called after each recall's receipt. */
  onRecall?: ((recall: Recall) => unknown) | undefined
  /**
   * Called for every problem that does not stop a payment: a recall attempt that is tried again, a
   * failed recall the wallet's liquid USDC covers anyway, a failed redeposit, a callback that threw.
   * A problem that stops a payment is not reported here: it is the `cause` of the error the payment
   * fails with. Its own errors are ignored.
   */
  onNonFatalError?: ((problem: BuyerProblem) => unknown) | undefined
  /**
   * Sweep the wallet's USDC above `reserve` back into the vault once no payment is in flight, with the
   * seller's rule (`sweep`): when it reaches `minIdleThreshold` (and the protocol minimum).
   * `debounceMs` (default 2 000) is how long the wallet must be quiet first; `onIdleDeposit` is called
   * with each idle deposit it makes.
   */
  redeposit?:
    | {
        minIdleThreshold: bigint | string
        debounceMs?: number | undefined
        /** Called after each idle deposit's receipt succeeds. */
        onIdleDeposit?: ((deposit: IdleDeposit) => unknown) | undefined
        /**
         * The former name of `onIdleDeposit`, kept for this beta; not called when `onIdleDeposit` is
         * given.
         *
         * @deprecated Use `onIdleDeposit`, as the seller's sweeper names it.
         */
        onRedeposit?: ((deposit: IdleDeposit) => unknown) | undefined
      }
    | undefined
  /**
   * Retries of a recall that failed for a reason that can pass, as the sweeper's but sooner: a payment
   * waits. Default 3 attempts from 250 ms, doubled up to 2 000 ms.
   */
  retry?: SweepTuningOptions['retry']
  /** Give up waiting for a recall's receipt after this many ms. Default: viem's. */
  receiptTimeoutMs?: SweepTuningOptions['receiptTimeoutMs']
  /**
   * How long a signed payment still counts against the liquid USDC when x402 never tells its outcome
   * (the request failed in transit). Default 60 000.
   */
  holdMs?: number | undefined
}

/** The handle of an attached buyer. */
export type BuyerAttachment = {
  /**
   * Makes every hook a no-op (x402 cannot remove hooks) and stops redeposits; resolves once the recall
   * and the redeposit in flight, if any, have ended.
   */
  detach(): Promise<void>
  /** Resolves once no recall or redeposit runs or is scheduled. */
  idle(): Promise<void>
  /**
   * What it holds now: USDC of payments funded and not yet settled, and their number; what recalls
   * asked for within the window; payments answered without an outcome, whose purchase is refused
   * until the chain shows it settled or expired.
   */
  state(): {
    committed: bigint
    paymentsInFlight: number
    recalledInWindow: bigint
    paymentsOutcomeUnknown: number
  }
}

/**
 * Pays x402 from the vault: before x402 signs a payment this vault can fund, makes sure the wallet's
 * liquid USDC covers it, withdrawing exactly the shortfall (a "recall") and waiting for the receipt.
 *
 * Which payments: x402 version 2, the vault client's network and the vault's USDC, with scheme `exact`
 * (its price), `upto` (its maximum: what the seller charges less stays liquid, and `redeposit` sweeps it
 * back) or `batch-settlement` (the channel deposit x402's client signs when the channel needs one, funded
 * once signed and before the request is sent; a voucher moves no money and recalls nothing); anything
 * else is ignored and never blocked. The policy's caps apply to what is funded: the maximum, the
 * deposit. The paying wallet is the vault client's account, which must be the account x402 signs with.
 *
 * The recall withdraws by net amount: the wallet receives at least the shortfall, rounding in the buyer's
 * favour; `onRecall` reports the amount, fee, shares and transaction. Payments share recalls: one round
 * at a time, each covering every payment that arrived while the previous one ran (ten at once make at
 * most two withdrawals), in the account's write queue. A payment the policy leaves out (`allowedPayTo`,
 * `allowedOrigins`, `maxPerPayment`, `maxPerWindow`) goes on without a recall, paid from what is liquid;
 * with `onOverCap: 'block'` a capped one is refused instead, with a `PaymentPolicyError`.
 *
 * When the wallet and the vault together cannot fund a payment, or the vault cannot pay out, the hook
 * throws a `PaymentFundingError` before x402 signs: nothing is signed and nothing moves. When the recall
 * fails but the wallet can pay anyway, the payment proceeds and the problem goes to `onNonFatalError`.
 * Recalled USDC of a payment that failed stays in the wallet; `redeposit` sweeps it back once no
 * payment is in flight.
 *
 * No second charge for one purchase: when a paid request's answer leaves its payment's outcome unknown
 * (a settlement failure such as `settlement_pending`, a 5xx), a payment for the same purchase (same
 * URL, network, asset, `payTo` and amount) is checked on chain before x402 signs it, and refused with a
 * `PaymentOutcomeError` while the earlier one is settled (`PAYMENT_ALREADY_SETTLED`) or can still be
 * (`PAYMENT_OUTCOME_UNKNOWN`, until it expires); nothing is recalled for it. This holds for `exact` and
 * `upto` payments (an `upto` one is settled once the seller charged any amount of it). A
 * batch-settlement voucher leaves nothing on chain to check until the seller claims it; x402's client
 * keeps its channel's count and corrects it from the seller's answers.
 *
 * `x402Client.createPaymentPayload` rethrows these errors as they are; `@x402/fetch` rethrows them as
 * a plain `Error` with the same message after a prefix: `findVaultError(error)` returns the typed one.
 *
 * @param ctx - The vault client, with a wallet client whose account pays and withdraws.
 * @param client - An `x402Client` (anything with its client hooks).
 * @param options - Policy (`maxPerPayment`, `maxPerWindow`, `windowMs`, `allowedPayTo`,
 *   `allowedOrigins` with `httpClient`, `onOverCap`), `reserve`, `redeposit`, `onRecall`,
 *   `onNonFatalError`, `retry`, `receiptTimeoutMs`, `holdMs`.
 * @returns `{ detach(), idle(), state() }`.
 * @throws {VaultValidationError} for bad options; {VaultConfigError} `WALLET_CLIENT_REQUIRED`,
 *   `ACCOUNT_REQUIRED` when the client cannot send.
 * @example
 * const client = new x402Client().register('eip155:8453', new ExactEvmScheme(account))
 * const buyer = vault.attachToClient(client, {
 *   maxPerPayment: '2',
 *   maxPerWindow: '50',
 *   onRecall: ({ amount, fee, txHash }) => console.log(`recalled ${formatUsdc(amount)} USDC (fee ${formatUsdc(fee)}): ${txHash}`),
 * })
 * const pay = wrapFetchWithPayment(fetch, client)
 * await pay('https://api.example.com/paid')
 */
export function attachToClient(
  ctx: VaultContext,
  client: PaymentHookTarget,
  options: AttachToClientOptions = {},
): BuyerAttachment {
  for (const hook of ['onBeforePaymentCreation', 'onPaymentCreationFailure'] as const) {
    if (typeof client?.[hook] !== 'function') {
      throw new VaultValidationError(
        `client must be an x402Client (an object with ${hook}(hook)).`,
        { code: 'INVALID_ARGUMENT', details: { field: 'client' } },
      )
    }
  }
  const { address: wallet } = resolveAccount(ctx, undefined)
  const policy = new BuyerPolicy(options)
  const { httpClient } = options
  if (policy.needsOrigins && typeof httpClient?.onPaymentRequired !== 'function') {
    throw new VaultValidationError(
      'allowedOrigins needs httpClient: the x402HTTPClient that makes the requests (pass the same one to wrapFetchWithPayment), whose 402 hook tells each payment’s URL.',
      { code: 'INVALID_ARGUMENT', details: { field: 'httpClient' } },
    )
  }
  const reserve = validateUsdcOption(options.reserve ?? 0n, 'reserve')
  const tuning = resolveSweepTuning({
    retry: {
      maxAttempts: options.retry?.maxAttempts ?? 3,
      initialDelayMs: options.retry?.initialDelayMs ?? 250,
      maxDelayMs: options.retry?.maxDelayMs ?? 2_000,
    },
    receiptTimeoutMs: options.receiptTimeoutMs,
    debounceMs: options.redeposit?.debounceMs ?? 2_000,
  })
  const holdMs = options.holdMs ?? 60_000
  if (!Number.isSafeInteger(holdMs) || holdMs < 0) {
    throw new VaultValidationError('holdMs must be a whole number of ms, at least 0.', {
      code: 'INVALID_ARGUMENT',
      details: { field: 'holdMs' },
    })
  }

  const problem = (phase: BuyerPhase, error: unknown, willRetry: boolean) => {
    const { onNonFatalError } = options
    if (!onNonFatalError) return
    const reported = { phase, error: toVaultError(error, { addresses: ctx.addresses }), willRetry }
    // Its own failure has nowhere to go: reporting it to itself could loop.
    void Promise.resolve()
      .then(() => onNonFatalError(reported))
      .catch(() => {})
  }
  /** Hands a value to a callback in a later microtask; its failure is an `observer` problem. */
  const notify = <T>(callback: ((value: T) => unknown) | undefined, value: T) => {
    if (!callback) return
    void Promise.resolve()
      .then(() => callback(value))
      .catch((error: unknown) => problem('observer', error, false))
  }

  let detached = false
  /** Payments between the hook's start and their funding decision. */
  let deciding = 0
  const busy = () => deciding > 0 || rounds.state.inFlight > 0 || rounds.state.busy

  const redeposit = options.redeposit
  const redepositSettings = redeposit
    ? resolveSweepSettings(ctx, { wallet, minIdleThreshold: redeposit.minIdleThreshold, reserve })
    : undefined
  const onIdleDeposit = redeposit?.onIdleDeposit ?? redeposit?.onRedeposit
  /** Refuses a redeposit's send when a payment started after its read. */
  const paymentStarted = new Error('a payment started')
  const scheduler = redepositSettings
    ? new SweepScheduler(
        async () => {
          if (busy()) return
          try {
            const result = await runExclusive(ctx, undefined, (slot) =>
              sweepIn(slot, ctx, redepositSettings, undefined, {
                wait: tuning.wait,
                beforeSend: () => {
                  if (busy()) throw paymentStarted
                },
              }),
            )
            if (result.deposited) notify(onIdleDeposit, result)
          } catch (error) {
            // A payment that starts now asks for a redeposit again once it is released.
            if (error !== paymentStarted) problem('redeposit', error, false)
          }
        },
        { ...tuning.timing, maxDebounceMs: Math.max(tuning.timing.debounceMs, 30_000) },
      )
    : undefined

  const guard = new PurchaseGuard(
    ctx,
    (error) => problem('payment-check', error, false),
    httpClient !== undefined,
  )
  /** The purchase of each payment checked, by x402's requirements object (its later hooks share it). */
  const purchases = new WeakMap<object, Purchase>()

  const rounds = new RecallRounds(
    ctx,
    wallet,
    reserve,
    policy,
    {
      ctx,
      wallet,
      retry: tuning.retry,
      wait: tuning.wait,
      onRetry: (failure) => problem(failure.step, failure.error, true),
      countSend: (requested) => policy.recordRecall(requested),
    },
    {
      recalled: (recall) => notify(options.onRecall, recall),
      problem: (failure, willRetry) => problem(failure.step, failure.error, willRetry),
    },
    () => {
      if (!busy()) scheduler?.request()
    },
  )

  /** The release of each funded payment, by x402's requirements object (the key its later hooks share). */
  const commitments = new Map<object, (() => void)[]>()
  const hold = (key: object, release: () => void) => {
    const timer = setTimeout(release, holdMs)
    ;(timer as { unref?: () => void }).unref?.()
    const releaseOnce = () => {
      clearTimeout(timer)
      release()
    }
    const list = commitments.get(key) ?? []
    list.push(releaseOnce)
    commitments.set(key, list)
  }
  const releaseFor = (key: object | undefined) => {
    if (!key) return
    const list = commitments.get(key)
    const release = list?.shift()
    if (list?.length === 0) commitments.delete(key)
    release?.()
  }

  /** The URL each 402 was for, by x402's paymentRequired object (the hook's context holds the same one). */
  const requestUrls = new WeakMap<object, string>()
  httpClient?.onPaymentRequired(async ({ paymentRequired, requestUrl }) => {
    if (!detached && typeof requestUrl === 'string') requestUrls.set(paymentRequired, requestUrl)
  })

  // Without both hooks no payment's outcome is known: nothing to check a purchase against.
  const checksPurchases =
    typeof client.onAfterPaymentCreation === 'function' &&
    typeof client.onPaymentResponse === 'function'

  /** The payment x402 is signing, if the vault funds it; a payment that cannot be read is a problem. */
  const paymentOf = (context: PaymentCreationHookContext): BuyerPayment | undefined => {
    try {
      const payment = buyerPaymentOf(ctx, context)
      return 'ignored' in payment ? undefined : payment
    } catch (error) {
      problem('payment-check', error, false)
      return undefined
    }
  }

  /**
   * Makes sure the wallet's liquid USDC covers `payment` (for a batch-settlement one, its channel
   * deposit), recalling what it lacks, and holds it until x402 tells its outcome; throws to stop it.
   */
  const fund = async (payment: BuyerPayment, requestUrl: string | undefined, key: object) => {
    // Throws PaymentPolicyError for a payment over maxPerPayment when blocking.
    if (policy.check(payment, requestUrl) !== undefined) return
    const outcome = await rounds.fund(payment.amount)
    if (outcome.kind === 'abort') throw outcome.error
    if (outcome.kind === 'over-window') {
      if (policy.block) throw policy.windowError(payment.amount, outcome.needed)
      return
    }
    hold(key, outcome.release)
  }

  /** Decides whether x402 may sign a payment, recalling what it lacks; throws to stop it. */
  const beforeSigning = async (context: PaymentCreationHookContext) => {
    const payment = paymentOf(context)
    // A batch-settlement payment is funded once signed: only then is it known whether the channel
    // needs a deposit, and how much (x402's client decides from its channel state).
    if (!payment || payment.scheme === 'batch-settlement') return
    const requestUrl = requestUrls.get(context.paymentRequired)
    const purchase = purchaseOf(ctx, payment, context.paymentRequired.resource?.url, requestUrl)
    deciding++
    try {
      if (purchase && checksPurchases) {
        // Before any recall: a purchase that may be paid for already gets none.
        await guard.check(purchase)
        purchases.set(context.selectedRequirements, purchase)
      }
      await fund(payment, requestUrl, context.selectedRequirements)
    } finally {
      deciding--
    }
  }

  /**
   * Funds a batch-settlement payment x402 signed that deposits into its channel: the deposit, which
   * the seller's facilitator moves from the wallet when it settles the payment, after the request is
   * sent. A voucher moves no money: nothing to fund. Throwing here discards the signed payment: x402
   * never sends it.
   */
  const afterSigning = async (context: PaymentCreationHookContext & { paymentPayload: object }) => {
    const payment = paymentOf(context)
    if (payment?.scheme !== 'batch-settlement') return
    const deposit = channelDepositOf(context.paymentPayload)
    if (deposit === undefined || deposit === 0n) return
    deciding++
    try {
      await fund(
        { ...payment, amount: deposit },
        requestUrls.get(context.paymentRequired),
        context.selectedRequirements,
      )
    } finally {
      deciding--
    }
  }

  /** Runs a hook's work; x402's fetch wrapper rethrows its error as a plain Error with its message. */
  const rethrown = async (work: () => Promise<void>) => {
    try {
      await work()
    } catch (error) {
      // findVaultError finds it by that message.
      if (error instanceof VaultError) rememberThrown(error)
      throw error
    }
  }
  client.onBeforePaymentCreation(async (context) => {
    if (!detached) await rethrown(() => beforeSigning(context))
  })
  client.onAfterPaymentCreation?.(async (context) => {
    if (detached) return
    const purchase = purchases.get(context.selectedRequirements)
    if (purchase) guard.signed(purchase, context.paymentPayload as X402PaymentPayload)
    await rethrown(() => afterSigning(context))
  })
  client.onPaymentCreationFailure(async (context) => {
    // Not signed: nothing of it will be paid.
    releaseFor(context.selectedRequirements)
  })
  client.onPaymentResponse?.(async (context) => {
    if (!detached) guard.answered(context.paymentPayload, paymentOutcomeOf(context))
    // Settled or refused: either way the wallet's balance says it now.
    releaseFor(context.requirements)
  })

  return {
    async detach() {
      detached = true
      rounds.close()
      guard.clear()
      await Promise.all([scheduler?.detach(), rounds.idle()])
      for (const key of [...commitments.keys()]) {
        while (commitments.has(key)) releaseFor(key)
      }
    },
    async idle() {
      await rounds.idle()
      await scheduler?.idle()
    },
    state: () => ({
      committed: rounds.state.committed,
      paymentsInFlight: rounds.state.inFlight,
      recalledInWindow: policy.recalledInWindow(),
      paymentsOutcomeUnknown: guard.unknownOutcomes,
    }),
  }
}

/**
 * The former name of {@link attachToClient}, the same function, kept for this beta.
 *
 * @deprecated Use `attachToClient`: the buyer's mirror of the seller's `attachToResourceServer`.
 */
export const attachTo: typeof attachToClient = attachToClient

/**
 * The former name of {@link AttachToClientOptions}, kept for this beta.
 *
 * @deprecated Use `AttachToClientOptions`.
 */
export type AttachToOptions = AttachToClientOptions
