import { timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { x402Facilitator } from '@x402/core/facilitator'
import { PaymentPayloadV2Schema, PaymentRequirementsV2Schema } from '@x402/core/schemas'
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types'
import { toFacilitatorEvmSigner } from '@x402/evm'
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/facilitator'
import { ExactEvmScheme } from '@x402/evm/exact/facilitator'
import { UptoEvmScheme } from '@x402/evm/upto/facilitator'
import { type Account, type Chain, createWalletClient, http, publicActions } from 'viem'
// x402's schemas are zod 3 (its own copy); this package's zod is 4, which carries zod 3 as `zod/v3`.
// A zod 4 object would not run zod 3 schemas inside it.
import { z } from 'zod/v3'
import { nodeHttpFetch, redactSecrets } from '../sdk/shared.js'
import { receiptPollingInterval } from './deploy.js'
import { DevnetError } from './errors.js'

export type FacilitatorServerOptions = {
  /** The chain's RPC URL (the devnet's anvil). */
  rpcUrl: string
  /** The viem chain the facilitator settles on; its id decides the x402 network `eip155:<id>`. */
  chain: Chain
  /**
   * The account that submits settlements and pays their gas. It is also the `receiverAuthorizer` the facilitator
   * advertises for `batch-settlement` (so it must sign typed data, as a local account does): it signs claims and
   * refunds for a seller that has no authorizer key of its own.
   */
  account: Account
  /** When set, every request must carry `Authorization: Bearer <token>`. */
  bearerToken?: string | undefined
  /** Port on 127.0.0.1; 0 (the default) picks a free one. */
  port?: number
}

export type FacilitatorServer = {
  /** `http://127.0.0.1:<port>`, the URL to give an `HTTPFacilitatorClient`. */
  url: string
  /** The x402 network the facilitator serves, such as `eip155:84532`. */
  network: `eip155:${number}`
  /** Stops listening and closes open connections. */
  stop: () => Promise<void>
}

/**
 * A `batch-settlement` claim carries about 610 bytes of JSON per voucher: x402's channel manager batches 100 by
 * default (about 61 kB), and a seller may choose more (`maxClaimsPerBatch`).
 */
const maxBodyBytes = 256 * 1024

// x402's channel manager sends its claims, settlements and refunds with `maxTimeoutSeconds: 0` (nothing waits on
// them), which x402's own schema, written for buyers' payments, refuses.
// Typed through x402's own types: two copies of zod 3's types nest too deep for TypeScript.
const requirementsSchema = (PaymentRequirementsV2Schema as unknown as z.AnyZodObject).extend({
  maxTimeoutSeconds: z.number().nonnegative(),
})
const requestBodySchema = z.object({
  x402Version: z.literal(2).optional(),
  paymentPayload: (PaymentPayloadV2Schema as unknown as z.AnyZodObject).extend({
    accepted: requirementsSchema,
  }) as unknown as z.ZodType<PaymentPayload>,
  paymentRequirements: requirementsSchema as unknown as z.ZodType<PaymentRequirements>,
})

/**
 * Builds an x402 facilitator for x402's three EVM schemes on one chain, paying gas from `account`: `exact`
 * (EIP-3009 or Permit2), `upto` (Permit2, through x402's upto proxy, which only `account` may settle) and
 * `batch-settlement` (deposits, claims, settlements and refunds on x402's batch-settlement contract), where it
 * advertises `account` as the `receiverAuthorizer` and signs claim batches and refunds that a seller sends
 * unsigned. Anyone who can reach the facilitator can have it sign a refund for a channel that names it, so
 * a facilitator that advertises an authorizer must authenticate its callers (x402's rule): give
 * {@link startFacilitatorServer} a bearer token where that matters.
 *
 * @returns The framework-neutral facilitator (`verify`, `settle`, `getSupported`).
 * @example
 * const facilitator = createDevnetFacilitator({ rpcUrl, chain, account })
 * const supported = facilitator.getSupported()
 */
export function createDevnetFacilitator(
  options: Pick<FacilitatorServerOptions, 'rpcUrl' | 'chain' | 'account'>,
): x402Facilitator {
  const client = createWalletClient({
    account: options.account,
    chain: options.chain,
    transport: http(options.rpcUrl, { fetchFn: nodeHttpFetch }),
    // viem's default for Base (a poll and a block-number cache of 1 s) would add a second to every
    // settlement on a chain that mines each transaction as it arrives.
    pollingInterval: receiptPollingInterval,
  }).extend(publicActions)
  // One account submits concurrent settlements, and each send takes the account's pending nonce: two
  // at once would take the same one, and all but one would be refused ("nonce too low"). So sends go
  // one at a time; waiting for receipts still overlaps. (viem's nonce manager would remember nonces
  // across the devnet's snapshot reverts and then send with a nonce from the future.)
  let lastSend: Promise<unknown> = Promise.resolve()
  const oneAtATime = <T>(send: () => Promise<T>): Promise<T> => {
    const sent = lastSend.then(send)
    lastSend = sent.catch(() => {})
    return sent
  }
  // The facilitator passes loosely typed ABIs; viem's strongly typed actions accept them at run time.
  const signer = toFacilitatorEvmSigner({
    address: options.account.address,
    getCode: (args) => client.getCode(args),
    readContract: (args) => client.readContract(args as never),
    verifyTypedData: (args) => client.verifyTypedData(args as never),
    writeContract: (args) => oneAtATime(() => client.writeContract(args as never)),
    sendTransaction: (args) => oneAtATime(() => client.sendTransaction(args)),
    waitForTransactionReceipt: (args) => client.waitForTransactionReceipt(args),
  })
  // viem's account types sign typed data with generics x402's plain records do not name.
  const receiverAuthorizer = {
    address: options.account.address,
    signTypedData: (args: Parameters<typeof client.signTypedData>[0]) => client.signTypedData(args),
  } as unknown as ConstructorParameters<typeof BatchSettlementEvmScheme>[1]
  const network = `eip155:${options.chain.id}` as const
  return new x402Facilitator()
    .register(network, new ExactEvmScheme(signer))
    .register(network, new UptoEvmScheme(signer))
    .register(network, new BatchSettlementEvmScheme(signer, receiverAuthorizer))
}

/**
 * Serves a local x402 facilitator over HTTP on loopback: `GET /supported`, `POST /verify`, `POST /settle`.
 *
 * Invalid payments answer 200 with `isValid: false` / `success: false` (as x402 expects); malformed
 * requests answer 400, a missing or wrong bearer token 401, unknown paths 404.
 *
 * @param options - RPC URL, chain, gas-paying account, optional bearer token and port.
 * @returns The URL, the network and `stop()`.
 * @example
 * const facilitator = await startFacilitatorServer({ rpcUrl, chain, account })
 * const client = new HTTPFacilitatorClient({ url: facilitator.url })
 */
export async function startFacilitatorServer(
  options: FacilitatorServerOptions,
): Promise<FacilitatorServer> {
  const facilitator = createDevnetFacilitator(options)
  const expectedAuth = options.bearerToken
    ? Buffer.from(`Bearer ${options.bearerToken}`)
    : undefined

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      // Never echo internals (RPC URLs, stacks) to the caller.
      const message = error instanceof Error ? error.message.split('\n')[0] : 'internal error'
      send(res, 500, {
        error: 'internal_error',
        message: redactSecrets(message ?? 'internal error', { hideHex32: true }),
      })
    })
  })

  async function handle(req: IncomingMessage, res: ServerResponse) {
    if (expectedAuth && !isAuthorized(req.headers.authorization, expectedAuth)) {
      res.setHeader('WWW-Authenticate', 'Bearer')
      return send(res, 401, { error: 'unauthorized', message: 'A valid bearer token is required.' })
    }
    const path = new URL(req.url ?? '/', 'http://localhost').pathname
    if (path === '/supported') {
      if (req.method !== 'GET') return methodNotAllowed(res, 'GET')
      return send(res, 200, facilitator.getSupported())
    }
    if (path !== '/verify' && path !== '/settle') {
      return send(res, 404, { error: 'not_found', message: `No route ${path}.` })
    }
    if (req.method !== 'POST') return methodNotAllowed(res, 'POST')

    const body = await readJson(req)
    if (!body.ok) return send(res, body.status, { error: 'invalid_request', message: body.message })
    const parsed = requestBodySchema.safeParse(body.value)
    if (!parsed.success) {
      const issue = parsed.error.issues[0]
      return send(res, 400, {
        error: 'invalid_request',
        message: `Invalid ${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'malformed'}.`,
      })
    }
    // The schemas check the network's `namespace:reference` shape but infer it as a plain string.
    const paymentPayload = parsed.data.paymentPayload as PaymentPayload
    const paymentRequirements = parsed.data.paymentRequirements as PaymentRequirements
    const result =
      path === '/verify'
        ? await facilitator.verify(paymentPayload, paymentRequirements)
        : await facilitator.settle(paymentPayload, paymentRequirements)
    return send(res, 200, result)
  }

  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', (cause) =>
      reject(
        new DevnetError('The local facilitator could not listen.', {
          code: 'FACILITATOR_START_FAILED',
          cause,
        }),
      ),
    )
    server.listen(options.port ?? 0, '127.0.0.1', () =>
      resolve((server.address() as AddressInfo).port),
    )
  })

  let stopping: Promise<void> | undefined
  return {
    url: `http://127.0.0.1:${port}`,
    network: `eip155:${options.chain.id}`,
    stop() {
      stopping ??= new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
      return stopping
    },
  }
}

function isAuthorized(header: string | undefined, expected: Buffer): boolean {
  if (!header) return false
  const given = Buffer.from(header)
  return given.length === expected.length && timingSafeEqual(given, expected)
}

function methodNotAllowed(res: ServerResponse, allow: string) {
  res.setHeader('Allow', allow)
  send(res, 405, { error: 'method_not_allowed', message: `Use ${allow}.` })
}

function send(res: ServerResponse, status: number, body: unknown) {
  if (res.headersSent) return
  const text = JSON.stringify(body, (_key, value) =>
    typeof value === 'bigint' ? value.toString() : value,
  )
  res.writeHead(status, { 'Content-Type': 'application/json' })
  res.end(text)
}

type JsonBody = { ok: true; value: unknown } | { ok: false; status: number; message: string }

async function readJson(req: IncomingMessage): Promise<JsonBody> {
  const type = req.headers['content-type'] ?? ''
  if (!type.includes('application/json')) {
    return { ok: false, status: 415, message: 'Content-Type must be application/json.' }
  }
  const chunks: Buffer[] = []
  let size = 0
  // A body over the limit is read to its end and dropped, not cut off: closing the socket on unread bytes
  // resets the connection, and the caller would see ECONNRESET instead of the 413.
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size <= maxBodyBytes) chunks.push(chunk as Buffer)
  }
  if (size > maxBodyBytes) {
    return { ok: false, status: 413, message: `Body larger than ${maxBodyBytes} bytes.` }
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) }
  } catch {
    return { ok: false, status: 400, message: 'Body is not valid JSON.' }
  }
}
