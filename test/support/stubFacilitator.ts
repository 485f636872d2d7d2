/**
 * An x402 facilitator in the test's process: msw handlers for a facilitator URL (`GET /supported`, `POST
 * /verify`, `POST /settle`) that answer in the shapes of x402's HTTP facilitator (`@x402/core`'s
 * `SupportedResponse`, `VerifyResponse`, `SettleResponse`; a refusal is HTTP 200 with `isValid: false` or
 * `success: false`, as the devnet's facilitator answers), with a switch per call for each way a
 * facilitator fails: a refusal, an HTTP error, a garbled body, no answer (until the caller gives up), a
 * dropped connection. It signs and sends nothing: a settlement it accepts names a made-up transaction.
 *
 * Register the handlers on an msw server of the test (`setupServer(...facilitator.handlers)`).
 */
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types'
import { delay, HttpResponse, http, type RequestHandler } from 'msw'
import { type Hash, keccak256, toHex } from 'viem'
import { paymentAuthorizationOf } from '../../src/index.js'

/** How the facilitator answers a call. */
export type StubFacilitatorAnswer =
  /** As a facilitator that checked the payment and (for `settle`) sent its transaction. */
  | 'accept'
  /** HTTP 200 with `isValid: false` / `success: false` and this reason (and message, if any). */
  | { refuse: string; message?: string | undefined; transaction?: Hash | undefined }
  /** This status and raw body, such as 500 `{"error":"database down"}` or 200 `{"success":tr`. */
  | { status: number; body: string }
  /** No answer: the call hangs until the caller's timeout aborts it. */
  | 'hang'
  /** The connection fails before any answer (msw's network error). */
  | 'drop'

/** One call the facilitator received. */
export type StubFacilitatorCall = {
  path: '/supported' | '/verify' | '/settle'
  authorization: string | null
  paymentPayload?: PaymentPayload
  paymentRequirements?: PaymentRequirements
}

export type StubFacilitator = {
  url: string
  handlers: RequestHandler[]
  /** Sets how `verify` or `settle` answers from now on (default `'accept'` for both). */
  answer: (operation: 'verify' | 'settle', answer: StubFacilitatorAnswer) => void
  /** Every call received, in order. */
  readonly calls: StubFacilitatorCall[]
  /** The transactions of the settlements it accepted, in order. */
  readonly settled: Hash[]
}

/**
 * An in-process facilitator for `networks`, supporting `schemes` on each.
 *
 * @param options - Its networks (`eip155:8453`…), the schemes it supports (default exact and upto), the
 *   bearer token it requires (default none), and its URL.
 * @returns The facilitator: its URL, msw handlers, the answer switch, and what it received.
 * @example
 * const facilitator = stubFacilitator({ networks: ['eip155:8453'] })
 * facilitator.answer('settle', { status: 500, body: '{"error":"database down"}' })
 */
export function stubFacilitator(options: {
  networks: readonly string[]
  schemes?: readonly string[]
  bearerToken?: string
  url?: string
}): StubFacilitator {
  const url = (options.url ?? 'http://facilitator.stub.test').replace(/\/$/, '')
  const answers: Record<'verify' | 'settle', StubFacilitatorAnswer> = {
    verify: 'accept',
    settle: 'accept',
  }
  const calls: StubFacilitatorCall[] = []
  const settled: Hash[] = []

  const unauthorized = (request: Request) =>
    options.bearerToken !== undefined &&
    request.headers.get('authorization') !== `Bearer ${options.bearerToken}`
  const refuseUnauthorized = () =>
    HttpResponse.json(
      { error: 'unauthorized', message: 'A valid bearer token is required.' },
      { status: 401, headers: { 'WWW-Authenticate': 'Bearer' } },
    )

  /** Who pays, as x402's facilitator reports it: the signer of the authorisation. */
  const payerOf = (payload: PaymentPayload) => {
    try {
      return paymentAuthorizationOf(payload).payer
    } catch {
      return undefined
    }
  }

  const paid = (operation: 'verify' | 'settle') =>
    http.post(`${url}/${operation}`, async ({ request }) => {
      const body = (await request.json()) as {
        paymentPayload: PaymentPayload
        paymentRequirements: PaymentRequirements
      }
      calls.push({
        path: `/${operation}`,
        authorization: request.headers.get('authorization'),
        paymentPayload: body.paymentPayload,
        paymentRequirements: body.paymentRequirements,
      })
      if (unauthorized(request)) return refuseUnauthorized()
      const answer = answers[operation]
      const payer = payerOf(body.paymentPayload)
      const network = body.paymentRequirements.network
      if (answer === 'hang') {
        await delay('infinite')
        return HttpResponse.error()
      }
      if (answer === 'drop') return HttpResponse.error()
      if (answer === 'accept') {
        if (operation === 'verify') return HttpResponse.json({ isValid: true, payer })
        const transaction = keccak256(toHex(`settlement ${settled.length}`))
        settled.push(transaction)
        return HttpResponse.json({
          success: true,
          transaction,
          network,
          payer,
          amount: body.paymentRequirements.amount,
        })
      }
      if ('refuse' in answer) {
        return HttpResponse.json(
          operation === 'verify'
            ? {
                isValid: false,
                invalidReason: answer.refuse,
                invalidMessage: answer.message,
                payer,
              }
            : {
                success: false,
                errorReason: answer.refuse,
                errorMessage: answer.message,
                transaction: answer.transaction ?? '',
                network,
                payer,
              },
        )
      }
      return new HttpResponse(answer.body, {
        status: answer.status,
        headers: { 'Content-Type': 'application/json' },
      })
    })

  return {
    url,
    calls,
    settled,
    answer: (operation, answer) => {
      answers[operation] = answer
    },
    handlers: [
      http.get(`${url}/supported`, ({ request }) => {
        calls.push({ path: '/supported', authorization: request.headers.get('authorization') })
        if (unauthorized(request)) return refuseUnauthorized()
        return HttpResponse.json({
          kinds: options.networks.flatMap((network) =>
            (options.schemes ?? ['exact', 'upto']).map((scheme) => ({
              x402Version: 2,
              scheme,
              network,
            })),
          ),
          extensions: [],
          signers: {},
        })
      }),
      paid('verify'),
      paid('settle'),
    ],
  }
}
