/**
 * The paywall's facilitator client against a loopback server that fails each way a facilitator can:
 * every failure gets its own code and words that fit it, for the buyer (the 502's message) and for the
 * seller (the reported error), and a settlement whose outcome is unknown is left to the settle-failure
 * hook (not reported here, and never worded "not taken").
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types'
import { afterEach, describe, expect, it } from 'vitest'
import {
  FacilitatorCallError,
  type FacilitatorFailure,
  guardedFacilitatorClient,
} from '../../src/plugins/facilitatorClient.js'

/** How the loopback facilitator answers `/verify` and `/settle`. */
type Answer =
  | { status: number; body: string }
  | 'hang'
  | 'drop'
  | { success: true; transaction: string }

let server: Server | undefined
afterEach(async () => {
  server?.closeAllConnections()
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined))
  server = undefined
})

async function facilitator(answer: Answer): Promise<string> {
  const listening = createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      if (answer === 'hang') return
      if (answer === 'drop') {
        request.socket.destroy()
        return
      }
      if ('success' in answer) {
        response
          .writeHead(200, { 'Content-Type': 'application/json' })
          .end(JSON.stringify({ ...answer, network: 'eip155:8453' }))
        return
      }
      response.writeHead(answer.status, { 'Content-Type': 'application/json' }).end(answer.body)
    })
  })
  server = listening
  await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(listening.address() as AddressInfo).port}`
}

/** A port nothing listens on: connection refused. */
async function refusedUrl(): Promise<string> {
  const url = await facilitator({ status: 200, body: '{}' })
  server?.close()
  server = undefined
  return url
}

const payload = { x402Version: 2, accepted: {}, payload: {} } as unknown as PaymentPayload
const requirements = {} as unknown as PaymentRequirements

/**
 * Calls the facilitator through the guarded client. Only a facilitator that hangs gets the short
 * timeout its test waits out: a late answer on a busy machine must not read as no answer.
 */
async function call(url: string, operation: 'verify' | 'settle', hangs = false) {
  const failures: FacilitatorFailure[] = []
  const timeout = hangs ? 300 : 10_000
  const client = guardedFacilitatorClient(
    { url },
    { verify: timeout, settle: timeout },
    (failure) => failures.push(failure),
  )
  const error = await (operation === 'verify'
    ? client.verify(payload, requirements)
    : client.settle(payload, requirements)
  ).then(
    () => undefined,
    (thrown: unknown) => thrown,
  )
  expect(error).toBeInstanceOf(FacilitatorCallError)
  return { error: error as FacilitatorCallError, failures }
}

describe('a facilitator that fails to verify: the buyer is told what happened and that nothing was taken', () => {
  it.each([
    [
      'answers HTTP 500',
      () => facilitator({ status: 500, body: '{"error":"database down"}' }),
      'FACILITATOR_HTTP_ERROR',
      'The payment facilitator answered HTTP 500, its own failure',
      'Facilitator verify failed (500): {"error":"database down"}',
    ],
    [
      'answers HTTP 503 with a page',
      () => facilitator({ status: 503, body: '<html>busy</html>' }),
      'FACILITATOR_HTTP_ERROR',
      'The payment facilitator answered HTTP 503, its own failure',
      'Facilitator verify failed (503): <html>busy</html>',
    ],
    [
      'answers garbage',
      () => facilitator({ status: 200, body: '{"isValid":tr' }),
      'FACILITATOR_BAD_RESPONSE',
      'Facilitator verify returned invalid JSON: {"isValid":tr',
      'Facilitator verify returned invalid JSON: {"isValid":tr',
    ],
    [
      'does not answer in time',
      () => facilitator('hang'),
      'FACILITATOR_TIMEOUT',
      'Facilitator verify request timed out after 300ms',
      'Facilitator verify request timed out after 300ms',
    ],
    [
      'drops the connection',
      () => facilitator('drop'),
      'FACILITATOR_CONNECTION_LOST',
      'The connection to the payment facilitator failed before it answered',
      'fetch failed',
    ],
    [
      'cannot be reached',
      refusedUrl,
      'FACILITATOR_UNREACHABLE',
      'The payment facilitator could not be reached',
      'ECONNREFUSED',
    ],
  ])('%s', async (name, start, code, reason, cause) => {
    const { error, failures } = await call(
      await start(),
      'verify',
      name === 'does not answer in time',
    )
    expect(error.message).toBe(
      `${reason}. The payment was not taken: nothing was transferred. Try again later.`,
    )
    expect(failures).toHaveLength(1)
    const [failure] = failures
    expect(failure?.operation).toBe('verify')
    expect(failure?.error).toMatchObject({
      code,
      retryable: true,
      details: { operation: 'verify' },
    })
    expect(failure?.error.message).toContain(cause)
    expect(failure?.error.message).toMatch(
      /^The x402 facilitator failed to verify a payment \(.+\); the buyer was answered 502: /,
    )
    // "Could not be reached" only when it could not.
    expect(error.message.includes('could not be reached')).toBe(code === 'FACILITATOR_UNREACHABLE')
  })
})

describe('a facilitator call that fails outside the connection', () => {
  it('is worded a failed call, not a failed connection', async () => {
    const failures: FacilitatorFailure[] = []
    const client = guardedFacilitatorClient(
      {
        url: await facilitator({ status: 200, body: '{}' }),
        createAuthHeaders: async () => {
          throw new Error('the token store is locked')
        },
      },
      { verify: 300, settle: 300 },
      (failure) => failures.push(failure),
    )
    const error = await client.verify(payload, requirements).then(
      () => undefined,
      (thrown: unknown) => thrown,
    )
    expect(error).toBeInstanceOf(FacilitatorCallError)
    expect((error as FacilitatorCallError).message).toBe(
      'The call to the payment facilitator failed before it answered. The payment was not taken: nothing was transferred. Try again later.',
    )
    expect(failures.map((failure) => failure.error.code)).toEqual(['FACILITATOR_CONNECTION_LOST'])
    expect(failures[0]?.error.message).toContain('the token store is locked')
  })
})

describe('a facilitator that fails to settle', () => {
  it.each([
    [
      'answers HTTP 500',
      () => facilitator({ status: 500, body: 'oops' }),
      'FACILITATOR_HTTP_ERROR',
    ],
    ['does not answer in time', () => facilitator('hang'), 'FACILITATOR_TIMEOUT'],
    ['drops the connection', () => facilitator('drop'), 'FACILITATOR_CONNECTION_LOST'],
    [
      'answers success without a transaction',
      () => facilitator({ success: true, transaction: '' }),
      'FACILITATOR_BAD_RESPONSE',
    ],
  ])(
    '%s: the outcome is unknown, so nothing is reported yet and the payment may still settle',
    async (name, start, code) => {
      const { error, failures } = await call(
        await start(),
        'settle',
        name === 'does not answer in time',
      )
      expect(error.trouble).toMatchObject({ code, neverReached: false })
      expect(error.message).toMatch(
        /\. The payment may still settle: check the payer's balance before paying again\.$/,
      )
      // The settle-failure hook asks the chain and reports once it knows.
      expect(failures).toEqual([])
    },
  )

  it('an upto charge of 0 answered success without a transaction is a success: nothing was to be moved', async () => {
    const url = await facilitator({ success: true, transaction: '' })
    const client = guardedFacilitatorClient({ url }, { verify: 300, settle: 300 }, () => {})
    const upto = (amount: string) =>
      ({ scheme: 'upto', network: 'eip155:8453', amount }) as unknown as PaymentRequirements
    expect(await client.settle(payload, upto('0'))).toMatchObject({
      success: true,
      transaction: '',
    })
    // A charge of more than nothing still needs its transaction.
    const error = await client.settle(payload, upto('1')).then(
      () => undefined,
      (thrown: unknown) => thrown,
    )
    expect(error).toBeInstanceOf(FacilitatorCallError)
    expect((error as FacilitatorCallError).trouble.code).toBe('FACILITATOR_BAD_RESPONSE')
  })

  it('cannot be reached: nothing was sent, so the buyer is told it was not taken, and the seller hears at once', async () => {
    const { error, failures } = await call(await refusedUrl(), 'settle')
    expect(error.trouble).toMatchObject({ code: 'FACILITATOR_UNREACHABLE', neverReached: true })
    expect(error.message).toBe(
      'The payment facilitator could not be reached. The payment was not taken: nothing was transferred. Try again later.',
    )
    expect(failures.map((failure) => failure.error.code)).toEqual(['FACILITATOR_UNREACHABLE'])
  })
})
