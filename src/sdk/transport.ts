import { type EIP1193RequestFn, type HttpTransport, type HttpTransportConfig, http } from 'viem'
import { MalformedRpcAnswerError, RpcHttpStatusError, readRpcFailure } from './errors/rpc.js'
import { sleep } from './internal/sleep.js'
import { isLogRangeTooLarge } from './logRanges.js'

/** Options of {@link vaultHttp}: viem's `http()` options with a bounded, `Retry-After`-aware retry. */
export type VaultHttpConfig = Omit<
  HttpTransportConfig,
  'retryCount' | 'retryDelay' | 'timeout' | 'raw'
> & {
  /** Retries after the first attempt. Default 3. */
  retryCount?: number
  /** Base backoff in ms; attempt n waits `retryDelay × 2^n` (with ±20 % jitter), capped by `maxRetryDelay`. Default 250. */
  retryDelay?: number
  /**
   * The longest single wait in ms, for backoff and for `Retry-After`. A server asking to wait longer
   * than this gets no retry: the call fails at once with a retryable rate-limit error that carries
   * `retryAfterMs`. Default 5 000.
   */
  maxRetryDelay?: number
  /** Per-attempt timeout in ms (headers and body). Default 10 000. */
  timeout?: number
}

/** HTTP statuses that say the URL or its key is wrong, whatever the body: never retried. */
const refusedStatuses = new Set([401, 403, 404])

/** Methods that send a transaction: retried only when the server said it did not process them (429). */
const sendMethods = new Set(['eth_sendRawTransaction', 'eth_sendTransaction'])

/**
 * An HTTP JSON-RPC transport for viem with bounded retries that honour `Retry-After`.
 *
 * It is viem's `http()` with viem's own retry switched off and this retry in its place:
 * - retried: HTTP 408, 429 and 5xx, JSON-RPC rate-limit codes (429, -32005, -32007), timeouts,
 *   network failures and malformed answers: not JSON, not a JSON-RPC response, over the body size
 *   limit (`maxResponseBodySize`, viem's default 10 MiB), or `0x` where a number is due;
 * - not retried: reverts and other JSON-RPC errors, other 4xx; transaction sends are retried only on
 *   a 429 (a timed-out send may have gone through); an `eth_getLogs` refused as too large (even with
 *   a rate-limit code, as some providers answer it) fails at once, for the caller to ask for less;
 * - the wait is the server's `Retry-After` (seconds or HTTP date) when present, else exponential
 *   backoff; no single wait exceeds `maxRetryDelay`.
 *
 * So a request takes at most `(retryCount + 1) × timeout + retryCount × maxRetryDelay` ms
 * (defaults: 4 × 10 s + 3 × 5 s = 55 s) and never hangs.
 *
 * @param url - The RPC URL (defaults to the chain's public RPC, like `http()`).
 * @param config - `retryCount`, `retryDelay`, `maxRetryDelay`, `timeout`, plus any `http()` option.
 * @returns A viem transport.
 * @example
 * const publicClient = createPublicClient({ chain: baseSepolia, transport: vaultHttp(process.env.BASE_SEPOLIA_RPC_URL) })
 */
export function vaultHttp(url?: string, config: VaultHttpConfig = {}): HttpTransport {
  const {
    retryCount = 3,
    retryDelay = 250,
    maxRetryDelay = 5_000,
    timeout = 10_000,
    ...httpConfig
  } = config
  const base = http(url, {
    ...httpConfig,
    retryCount: 0,
    timeout,
    async onFetchResponse(response) {
      await httpConfig.onFetchResponse?.(response)
      // The status decides first: a refused key or a wrong URL path is answered with any body
      // (plain text, HTML, even under a JSON content type), which must not read as a malformed,
      // retryable answer.
      if (refusedStatuses.has(response.status)) {
        await response.body?.cancel().catch(() => {})
        throw new RpcHttpStatusError(response.status, response.url || url)
      }
    },
  })
  return (params) => {
    const inner = base({ ...params, retryCount: 0, timeout })
    const request = (async (
      args: { method: string; params?: unknown },
      options?: { signal?: AbortSignal },
    ) => {
      for (let attempt = 0; ; attempt++) {
        try {
          const answer = checkAnswer(args, await inner.request(args as never, options as never))
          if (answer === '0x' && isAggregate3(args)) {
            await checkNoCode(args, (call) => inner.request(call as never, options as never))
          }
          return answer
        } catch (error) {
          if (options?.signal?.aborted || attempt >= retryCount) throw error
          const decision = retryDecision(error, args.method)
          if (!decision.retry) throw error
          let wait: number
          if (decision.retryAfterMs !== undefined) {
            if (decision.retryAfterMs > maxRetryDelay) throw error
            wait = decision.retryAfterMs
          } else {
            const exp = retryDelay * 2 ** attempt
            wait = Math.min(maxRetryDelay, Math.round(exp * (0.8 + Math.random() * 0.4)))
          }
          await sleep(wait, options?.signal)
        }
      }
    }) as unknown as EIP1193RequestFn
    return {
      config: { ...inner.config, retryCount: 0, retryDelay, timeout },
      request,
      value: inner.value,
    }
  }
}

/**
 * Decides whether a failed JSON-RPC request may be retried, and how long the server asked to wait.
 *
 * @param error - What the transport threw.
 * @param method - The JSON-RPC method.
 * @returns `{ retry, retryAfterMs? }`.
 * @example
 * retryDecision(new TimeoutError({ body: {}, url: 'http://x' }), 'eth_call') // { retry: true }
 */
export function retryDecision(
  error: unknown,
  method: string,
): { retry: boolean; retryAfterMs?: number } {
  const failure = readRpcFailure(error)
  if (!failure) return { retry: false }
  // The same request would be refused again: the log scan asks for a smaller range instead.
  if (method === 'eth_getLogs' && isLogRangeTooLarge(error)) return { retry: false }
  const withWait = (retry: boolean) =>
    failure.retryAfterMs === undefined ? { retry } : { retry, retryAfterMs: failure.retryAfterMs }
  if (sendMethods.has(method)) return withWait(failure.rateLimited)
  if (failure.rateLimited) return withWait(true)
  if (failure.status !== undefined) return withWait(failure.status === 408 || failure.status >= 500)
  return { retry: failure.kind !== 'jsonRpc' }
}

/** Methods whose result is a hex quantity: `0x` or anything else there is a malformed answer. */
const quantityMethods = new Set([
  'eth_blockNumber',
  'eth_chainId',
  'eth_estimateGas',
  'eth_gasPrice',
  'eth_getBalance',
  'eth_getTransactionCount',
  'eth_maxPriorityFeePerGas',
])

/** Checks what viem read from a JSON-RPC response before anything decodes it. */
function checkAnswer(args: { method: string; params?: unknown }, result: unknown): unknown {
  const { method } = args
  // A JSON-RPC response has `result` (possibly null) or `error`; viem has thrown on `error` already.
  if (result === undefined) {
    throw new MalformedRpcAnswerError(`The answer to ${method} is not a JSON-RPC response.`)
  }
  if (
    quantityMethods.has(method) &&
    !(typeof result === 'string' && /^0x[0-9a-f]+$/i.test(result))
  ) {
    throw new MalformedRpcAnswerError(`The answer to ${method} is not a hex number.`)
  }
  if (method === 'eth_call') {
    // Return data is whole bytes of hex: `null`, a number or odd hex is no answer to a call.
    if (typeof result !== 'string' || !/^0x(?:[0-9a-f]{2})*$/i.test(result)) {
      throw new MalformedRpcAnswerError('The answer to eth_call is not hex data.')
    }
    if (result !== '0x' && isAggregate3(args) && !isAggregate3Answer(args, result)) {
      throw new MalformedRpcAnswerError(
        'The answer to a Multicall3 aggregate3 eth_call does not hold one result per call.',
      )
    }
  }
  return result
}

/** Multicall3's `aggregate3((address,bool,bytes)[])` selector. */
const aggregate3Selector = '0x82ad56cb'

type CallParams = [{ to?: unknown; data?: unknown; input?: unknown }, unknown?]

function callData(args: { params?: unknown }): string | undefined {
  const [call] = (Array.isArray(args.params) ? args.params : []) as CallParams
  const data = call?.data ?? call?.input
  return typeof data === 'string' ? data.toLowerCase() : undefined
}

function isAggregate3(args: { method: string; params?: unknown }): boolean {
  return args.method === 'eth_call' && callData(args)?.startsWith(aggregate3Selector) === true
}

/**
 * Whether an `aggregate3` answer is shaped as its request: the array's offset (32) and one entry per
 * call. Every vault read is one such call, so this catches an answer such as 32 zero bytes (which
 * decodes as an empty array) at no cost, before a read takes it for a result.
 */
function isAggregate3Answer(args: { params?: unknown }, result: string): boolean {
  const data = callData(args) ?? ''
  const word = (hex: string, index: number) => hex.slice(index * 64, (index + 1) * 64)
  const calls = BigInt(`0x${word(data.slice(10), 1) || '0'}`)
  const answer = result.slice(2)
  if (answer.length < 128) return false
  return BigInt(`0x${word(answer, 0)}`) === 32n && BigInt(`0x${word(answer, 1)}`) === calls
}

/**
 * An `aggregate3` answered `0x`: true only where Multicall3 has no code (then viem reports no
 * contract). Where it has code, the RPC dropped the answer. Asked only on this error path, so a
 * read that succeeds costs no extra round trip.
 */
async function checkNoCode(
  args: { params?: unknown },
  request: (call: { method: string; params: unknown[] }) => Promise<unknown>,
): Promise<void> {
  const [call, block] = (args.params ?? []) as CallParams
  const code = await request({ method: 'eth_getCode', params: [call.to, block ?? 'latest'] })
  if (typeof code === 'string' && code !== '0x') {
    throw new MalformedRpcAnswerError(
      'The answer to eth_call is empty, though the called contract has code.',
    )
  }
}
