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

import type { AddressInfo } from 'node:net'
import { createServer } from 'node:net'
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types'
import { delay, HttpResponse, http, type RequestHandler } from 'msw'
import { type Address, type Hash, keccak256, toHex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'

/** The facilitator's account: made from its name, it holds nothing anywhere. */
const address = privateKeyToAccount(keccak256(toHex('x402-vault stub facilitator'))).address

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
  /** The address it settles from, as its `/supported` names it (x402's upto buyers sign for it). */
  address: Address
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
  const schemes = options.schemes ?? ['exact', 'upto']

  const unauthorized = (request: Request) =>
    options.bearerToken !== undefined &&
    request.headers.get('authorization') !== `Bearer ${options.bearerToken}`
  const refuseUnauthorized = () =>
    HttpResponse.json(
      { error: 'unauthorized', message: 'A valid bearer token is required.' },
      { status: 401, headers: { 'WWW-Authenticate': 'Bearer' } },
    )

  /**
   * Who pays, as x402's EVM facilitators report it: the signer of the EIP-3009 authorisation or of the
   * Permit2 transfer (exact and upto alike).
   */
  const payerOf = (payload: PaymentPayload) => {
    const signed = payload.payload as {
      authorization?: { from?: string }
      permit2Authorization?: { from?: string }
    }
    return signed.authorization?.from ?? signed.permit2Authorization?.from
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
    address,
    calls,
    settled,
    answer: (operation, answer) => {
      answers[operation] = answer
    },
    handlers: [
      http.get(`${url}/supported`, ({ request }) => {
        calls.push({ path: '/supported', authorization: request.headers.get('authorization') })
        if (unauthorized(request)) return refuseUnauthorized()
        // As x402's facilitators: the upto kind names the address that may settle (its `getExtra`).
        return HttpResponse.json({
          kinds: options.networks.flatMap((network) =>
            schemes.map((scheme) => ({
              x402Version: 2,
              scheme,
              network,
              ...(scheme === 'upto' ? { extra: { facilitatorAddress: address } } : {}),
            })),
          ),
          extensions: [],
          signers: { 'eip155:*': [address] },
        })
      }),
      paid('verify'),
      paid('settle'),
    ],
  }
}

/**
 * A loopback URL nothing listens on (a port just given up): a connection to it is refused. Not port 9,
 * which fetch refuses itself as a "bad port" without connecting.
 */
export async function refusedUrl(): Promise<string> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return `http://127.0.0.1:${port}`
}
