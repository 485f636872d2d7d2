/**
 * A hostile x402 facilitator for the seller tests: a loopback HTTP server in front of the devnet's
 * facilitator that forwards `/supported` and `/verify` faithfully and, on `/settle`, does what its
 * scenario says: settle and drop the connection, answer success without a transaction or with another
 * payment's, name the wrong payer and amount, answer late, answer twice, refuse what it settled. The real settlements go through
 * the devnet's facilitator, so whatever it answers, the chain shows what really happened.
 */
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readBody } from '../../harness/countingProxy.js'

/** What the hostile facilitator does with a settlement. */
export type HostileScenario =
  /** Forwards and answers as the devnet's facilitator does. */
  | 'faithful'
  /** Settles, then drops the connection without an answer. */
  | 'settle-then-drop'
  /** Settles, then answers success with an empty transaction. */
  | 'success-without-transaction'
  /** Does not settle; answers success with an empty transaction. */
  | 'claim-without-transaction'
  /** Does not settle; answers success with the transaction of the last payment it settled. */
  | 'another-payments-transaction'
  /** Settles; answers success with the transaction of the last payment it settled before this one. */
  | 'settle-and-name-another-transaction'
  /** Settles; answers success naming another payer and ten times the amount. */
  | 'wrong-payer-and-amount'
  /** Settles at once; holds its answer until `release()`. */
  | 'late-answer'
  /** Holds the settlement itself until `release()`, then settles and answers. */
  | 'late-settlement'
  /** Settles and answers, then writes an unsolicited copy of its answer on the same connection. */
  | 'answers-twice'
  /** Settles and answers `settlement_pending` with the transaction; answers x402's retry with success. */
  | 'pending-then-success'
  /**
   * Settles, then refuses it naming its transaction, as x402's facilitator does when it misreads its
   * receipt (`invalid_exact_evm_transfer_event_mismatch`).
   */
  | 'settle-then-refuse'
  /** Does not settle; refuses naming the transaction of the last payment it settled. */
  | 'refuse-naming-another-transaction'

export type HostileFacilitator = {
  url: string
  setScenario: (scenario: HostileScenario) => void
  /** Lets what `late-answer` and `late-settlement` hold go on; resolves once they have answered. */
  release: () => Promise<void>
  /** Resolves once a `/settle` request has arrived since the scenario was set (the held one, say). */
  settleArrived: () => Promise<void>
  /** The transactions the devnet's facilitator settled through this server, in order. */
  readonly settled: readonly string[]
  /** The `/settle` requests received, in order. */
  readonly settleRequests: number
  close: () => Promise<void>
}

/** The refusal x402's facilitator answers when its receipt's transfer does not match the payment. */
export const transferEventMismatch = 'invalid_exact_evm_transfer_event_mismatch'

/** Another payer, named by `wrong-payer-and-amount`. */
export const strangerAddress = '0x000000000000000000000000000000000000dEaD'

/**
 * Starts a hostile facilitator on 127.0.0.1 in front of `targetUrl` (the devnet's facilitator).
 *
 * @param targetUrl - The devnet's facilitator URL.
 * @returns The server, its scenario switch, and what it settled.
 * @example
 * const hostile = await startHostileFacilitator(devnet.facilitatorUrl)
 * hostile.setScenario('settle-then-drop')
 */
export async function startHostileFacilitator(targetUrl: string): Promise<HostileFacilitator> {
  const target = targetUrl.replace(/\/$/, '')
  let scenario: HostileScenario = 'faithful'
  const settled: string[] = []
  let settleRequests = 0
  let closed = false
  const held: (() => void)[] = []
  let answeredHeld: Promise<void>[] = []
  let arrivals: (() => void)[] = []
  let arrivedSinceScenario = false
  /** Answers already given to a payment (by its signed payload), for x402's retry. */
  const pendingAnswers = new Map<string, unknown>()

  const forward = async (path: string, method: string, body: string) => {
    const answer = await fetch(`${target}${path}`, {
      method,
      headers: { 'Content-Type': 'application/json' },
      ...(body.length > 0 ? { body } : {}),
    })
    return { status: answer.status, text: await answer.text() }
  }
  const settle = async (body: string) => {
    const answer = await forward('/settle', 'POST', body)
    const parsed = JSON.parse(answer.text) as { success?: boolean; transaction?: string }
    if (parsed.success && parsed.transaction) settled.push(parsed.transaction)
    return { ...answer, parsed }
  }
  const send = (response: ServerResponse, status: number, body: unknown) =>
    response
      .writeHead(status, { 'Content-Type': 'application/json' })
      .end(typeof body === 'string' ? body : JSON.stringify(body))
  const hold = () => {
    let release = () => {}
    const released = new Promise<void>((resolve) => {
      release = resolve
    })
    held.push(release)
    return released
  }

  const server = createServer(async (request, response) => {
    const path = request.url ?? '/'
    const body = await readBody(request)
    if (!path.endsWith('/settle')) {
      const answer = await forward(path, request.method ?? 'GET', body)
      send(response, answer.status, answer.text)
      return
    }
    settleRequests++
    arrivedSinceScenario = true
    for (const arrived of arrivals.splice(0)) arrived()
    const request_ = JSON.parse(body) as {
      paymentPayload: { payload: unknown; accepted: { network: string; amount: string } }
    }
    const key = JSON.stringify(request_.paymentPayload.payload)
    const { network } = request_.paymentPayload.accepted
    switch (scenario) {
      case 'faithful': {
        const answer = await settle(body)
        send(response, answer.status, answer.text)
        return
      }
      case 'settle-then-drop': {
        await settle(body)
        request.socket.destroy()
        return
      }
      case 'success-without-transaction': {
        const answer = await settle(body)
        send(response, 200, { ...answer.parsed, transaction: '' })
        return
      }
      case 'claim-without-transaction': {
        send(response, 200, { success: true, transaction: '', network })
        return
      }
      case 'another-payments-transaction': {
        send(response, 200, { success: true, transaction: settled.at(-1), network })
        return
      }
      case 'settle-and-name-another-transaction': {
        const another = settled.at(-1)
        const answer = await settle(body)
        send(response, 200, { ...answer.parsed, transaction: another })
        return
      }
      case 'wrong-payer-and-amount': {
        const answer = await settle(body)
        const amount = (BigInt(request_.paymentPayload.accepted.amount) * 10n).toString()
        send(response, 200, { ...answer.parsed, payer: strangerAddress, amount })
        return
      }
      case 'late-answer': {
        const answer = await settle(body)
        const released = hold()
        answeredHeld.push(
          released.then(() => {
            if (!response.destroyed) send(response, answer.status, answer.text)
          }),
        )
        return
      }
      case 'late-settlement': {
        const released = hold()
        answeredHeld.push(
          released.then(async () => {
            if (closed) return
            const answer = await settle(body)
            if (!response.destroyed) send(response, answer.status, answer.text)
          }),
        )
        return
      }
      case 'answers-twice': {
        const answer = await settle(body)
        response.once('finish', () => {
          const copy = `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(answer.text)}\r\n\r\n${answer.text}`
          if (!request.socket.destroyed) request.socket.write(copy)
        })
        send(response, answer.status, answer.text)
        return
      }
      case 'pending-then-success': {
        const given = pendingAnswers.get(key)
        if (given) {
          send(response, 200, given)
          return
        }
        const answer = await settle(body)
        pendingAnswers.set(key, answer.parsed)
        send(response, 200, {
          ...answer.parsed,
          success: false,
          errorReason: 'settlement_pending',
        })
        return
      }
      case 'settle-then-refuse': {
        const answer = await settle(body)
        send(response, 200, {
          ...answer.parsed,
          success: false,
          errorReason: transferEventMismatch,
        })
        return
      }
      case 'refuse-naming-another-transaction': {
        send(response, 200, {
          success: false,
          errorReason: transferEventMismatch,
          transaction: settled.at(-1),
          network,
        })
        return
      }
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    setScenario(next) {
      scenario = next
      arrivedSinceScenario = false
    },
    async release() {
      for (const release of held.splice(0)) release()
      const answering = answeredHeld
      answeredHeld = []
      await Promise.all(answering)
    },
    settleArrived: () =>
      arrivedSinceScenario
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            arrivals.push(resolve)
          }),
    settled,
    get settleRequests() {
      return settleRequests
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        closed = true
        for (const release of held.splice(0)) release()
        arrivals = []
        server.closeAllConnections()
        server.close((error) => (error ? reject(error) : resolve()))
      }),
  }
}
