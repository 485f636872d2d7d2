import { inspect } from 'node:util'
import { bypass, delay, HttpResponse, http } from 'msw'
import { setupServer } from 'msw/node'
import { createPublicClient, HttpRequestError, TimeoutError, http as viemHttp } from 'viem'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type Devnet, startDevnet } from '../../src/devnet/startDevnet.js'
import {
  createVaultClient,
  type VaultHttpConfig,
  type VaultRpcError,
  vaultHttp,
} from '../../src/index.js'
import { retryDecision } from '../../src/sdk/transport.js'
import { expectVaultError } from '../support/expectVaultError.js'

/** A fake RPC URL with a key in its path and query: it must never show up in an error. */
const faultyUrl = 'http://faulty-rpc.test/v2/SECRETKEY?apikey=QUERYSECRET'

type Fault = (
  | { kind: 'status'; status: number; headers?: Record<string, string> }
  | { kind: 'malformed' }
  | { kind: 'hang' }
  /** A 200 answer with this body, JSON-RPC or not. */
  | { kind: 'body'; body: string }
  /** A JSON-RPC answer whose `result` is this value, for the request's own id. */
  | { kind: 'result'; result: unknown }
) & {
  /** Only requests for this JSON-RPC method get the fault; others pass through. */
  method?: string
}

let devnet: Devnet
let faults: Fault[] = []
/** When set, every request gets this fault (after the queue is empty). */
let always: Fault | undefined
let requests = 0

const server = setupServer(
  http.post('http://faulty-rpc.test/*', async ({ request }) => {
    requests++
    const text = await request.text()
    const { id, method } = JSON.parse(text) as { id: number; method: string }
    const next = faults[0] ?? always
    const fault = next && (next.method === undefined || next.method === method) ? next : undefined
    if (fault && fault === faults[0]) faults.shift()
    if (fault?.kind === 'status') {
      return new HttpResponse(`error ${fault.status}`, {
        status: fault.status,
        headers: fault.headers ?? {},
      })
    }
    if (fault?.kind === 'malformed') {
      return new HttpResponse('{"jsonrpc":"2.0","id":1,"result":"0x', {
        status: 200,
        headers: { 'Content-Type': 'application/json' },
      })
    }
    if (fault?.kind === 'hang') {
      await delay('infinite')
    }
    if (fault?.kind === 'body') {
      return new HttpResponse(fault.body, { headers: { 'Content-Type': 'application/json' } })
    }
    if (fault?.kind === 'result') {
      return HttpResponse.json({ jsonrpc: '2.0', id, result: fault.result })
    }
    const forwarded = new Request(devnet.rpcUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: text,
    })
    return fetch(bypass(forwarded))
  }),
)

beforeAll(async () => {
  devnet = await startDevnet({ chain: 'base-sepolia' })
  server.listen({ onUnhandledRequest: 'bypass' })
})
afterEach(() => {
  faults = []
  always = undefined
  requests = 0
})
afterAll(async () => {
  server.close()
  await devnet?.stop()
})

function vaultWith(config: VaultHttpConfig = {}) {
  return createVaultClient({
    publicClient: createPublicClient({
      chain: devnet.viemChain,
      transport: vaultHttp(faultyUrl, {
        retryCount: 3,
        retryDelay: 20,
        maxRetryDelay: 2_000,
        timeout: 500,
        ...config,
      }),
    }),
    chain: 'base-sepolia',
    addresses: devnet.addresses,
  })
}

function expectNoSecret(error: Error) {
  const text = `${error.message} ${JSON.stringify((error as VaultRpcError).toJSON?.() ?? {})} ${String((error.cause as Error | undefined)?.message)}`
  expect(text).not.toContain('SECRETKEY')
  expect(text).not.toContain('QUERYSECRET')
}

describe('RPC fault injection (msw in front of the devnet)', () => {
  it('passes through when nothing is wrong', async () => {
    const status = await vaultWith().getStatus()
    expect(status.depositsPaused).toBe(false)
    expect(requests).toBe(1)
  })

  it('honours Retry-After on a 429, then succeeds', async () => {
    faults = [{ kind: 'status', status: 429, headers: { 'Retry-After': '1' } }]
    const started = Date.now()
    const status = await vaultWith().getStatus()
    const elapsed = Date.now() - started
    expect(status.minDeposit).toBe(10_000_000n)
    expect(requests).toBe(2)
    expect(elapsed).toBeGreaterThanOrEqual(950)
    expect(elapsed).toBeLessThan(5_000)
  })

  it('honours Retry-After given as an HTTP date', async () => {
    faults = [
      {
        kind: 'status',
        status: 429,
        headers: { 'Retry-After': new Date(Date.now() + 1_500).toUTCString() },
      },
    ]
    const started = Date.now()
    await vaultWith().getYield()
    expect(requests).toBe(2)
    expect(Date.now() - started).toBeGreaterThanOrEqual(300)
  })

  it('fails at once, retryable, when Retry-After is longer than allowed', async () => {
    always = { kind: 'status', status: 429, headers: { 'Retry-After': '3600' } }
    const started = Date.now()
    const error = await expectVaultError(vaultWith().getStatus(), 'RPC_RATE_LIMITED')
    expect(Date.now() - started).toBeLessThan(1_000)
    expect(requests).toBe(1)
    expect(error.retryable).toBe(true)
    expect((error as VaultRpcError).retryAfterMs).toBe(3_600_000)
    expectNoSecret(error)
  })

  it('retries a 500, then succeeds', async () => {
    faults = [
      { kind: 'status', status: 500 },
      { kind: 'status', status: 503 },
    ]
    const position = await vaultWith().getPosition({ wallet: devnet.accounts.merchant.address })
    expect(position.liquidUsdc).toBe(1_000_000_000n)
    expect(requests).toBe(3)
  })

  it('retries a malformed JSON answer, then succeeds', async () => {
    faults = [{ kind: 'malformed' }]
    const result = await vaultWith().verifyAddresses()
    expect(result.chainId).toBe(84532)
  })

  it('times out a hanging request and retries', async () => {
    faults = [{ kind: 'hang' }]
    const started = Date.now()
    const status = await vaultWith({ timeout: 300 }).getStatus()
    expect(status.shareSymbol).toBe('dvUSDC')
    expect(requests).toBe(2)
    expect(Date.now() - started).toBeLessThan(3_000)
  })

  it.each([
    ['a 500', { kind: 'status', status: 500 } as Fault, 'RPC_HTTP_ERROR'],
    ['a 429 without Retry-After', { kind: 'status', status: 429 } as Fault, 'RPC_RATE_LIMITED'],
    ['malformed JSON', { kind: 'malformed' } as Fault, 'RPC_BAD_RESPONSE'],
    ['a hang', { kind: 'hang' } as Fault, 'RPC_TIMEOUT'],
  ])(
    'gives up on persistent %s with a retryable error, bounded in time',
    async (_name, fault, code) => {
      always = fault
      const started = Date.now()
      const error = await expectVaultError(
        vaultWith({ retryCount: 2, timeout: 250 }).getStatus(),
        code,
      )
      expect(error.retryable).toBe(true)
      expect(error.category).toBe('rpc')
      expect(requests).toBe(3)
      expect(Date.now() - started).toBeLessThan(4_000)
      expectNoSecret(error)
    },
  )

  it('plans fail with a retryable error too, never hang', async () => {
    always = { kind: 'hang' }
    const error = await expectVaultError(
      vaultWith({ retryCount: 1, timeout: 200 }).planDeposit({
        wallet: devnet.accounts.merchant.address,
        amount: 10_000_000n,
      }),
      'RPC_TIMEOUT',
    )
    expect(error.retryable).toBe(true)
  })

  it("a client on viem's own http() still gets a retryable VaultError", async () => {
    always = { kind: 'status', status: 502 }
    const vault = createVaultClient({
      publicClient: createPublicClient({
        chain: devnet.viemChain,
        transport: viemHttp(faultyUrl, { retryCount: 1, retryDelay: 10 }),
      }),
      chain: 'base-sepolia',
      addresses: devnet.addresses,
    })
    const error = await expectVaultError(vault.getYield(), 'RPC_HTTP_ERROR')
    expect(error.retryable).toBe(true)
    expectNoSecret(error)
  })
})

describe('malformed answers (msw in front of the devnet)', () => {
  const notJsonRpc: [string, string][] = [
    ['an object without result or error', '{"hello":"world"}'],
    ['null', 'null'],
    ['an array', '[]'],
    ['a string', '"ok"'],
  ]

  it.each(notJsonRpc)('retries JSON that is not JSON-RPC (%s), then succeeds', async (_n, body) => {
    faults = [{ kind: 'body', body }]
    const status = await vaultWith().getStatus()
    expect(status.minDeposit).toBe(10_000_000n)
    expect(requests).toBe(2)
  })

  it('retries `0x` where a number is due (eth_chainId), then succeeds', async () => {
    faults = [{ kind: 'result', result: '0x', method: 'eth_chainId' }]
    const result = await vaultWith().verifyAddresses()
    expect(result.chainId).toBe(84532)
    expect(requests).toBe(3)
  })

  it.each([
    ['JSON that is not JSON-RPC', { kind: 'body', body: '{"hello":"world"}' } as Fault],
    ['null', { kind: 'body', body: 'null' } as Fault],
    ['`0x` for eth_chainId', { kind: 'result', result: '0x', method: 'eth_chainId' } as Fault],
  ])('gives up on persistent %s with RPC_BAD_RESPONSE, retryable', async (_name, fault) => {
    always = fault
    const vault = vaultWith({ retryCount: 2 })
    const error = await expectVaultError(
      fault.method ? vault.verifyAddresses() : vault.getStatus(),
      'RPC_BAD_RESPONSE',
    )
    expect(error.retryable).toBe(true)
    expectNoSecret(error)
  })

  it("a plain viem http() client's `0x` chain id is RPC_BAD_RESPONSE too", async () => {
    always = { kind: 'result', result: '0x', method: 'eth_chainId' }
    const vault = createVaultClient({
      publicClient: createPublicClient({
        chain: devnet.viemChain,
        transport: viemHttp(faultyUrl, { retryCount: 0 }),
      }),
      chain: 'base-sepolia',
      addresses: devnet.addresses,
    })
    const error = await expectVaultError(vault.verifyAddresses(), 'RPC_BAD_RESPONSE')
    expect(error.retryable).toBe(true)
  })

  it('an RPC error shows no URL path or key, even in hidden properties', async () => {
    always = { kind: 'status', status: 500 }
    const error = await expectVaultError(vaultWith({ retryCount: 0 }).getStatus(), 'RPC_HTTP_ERROR')
    const shown = inspect(error, { showHidden: true, depth: 20 })
    expect(shown).not.toContain('SECRETKEY')
    expect(shown).not.toContain('QUERYSECRET')
    expect(shown).toContain('http://faulty-rpc.test')
  })
})

describe('retryDecision', () => {
  const body = { method: 'eth_call' }
  const url = 'http://x.test'
  it('retries reads on 408/429/5xx, timeouts and network failures; not on other 4xx', () => {
    for (const status of [408, 429, 500, 502, 503, 504]) {
      expect(retryDecision(new HttpRequestError({ url, body, status }), 'eth_call').retry).toBe(
        true,
      )
    }
    for (const status of [400, 401, 403, 404]) {
      expect(retryDecision(new HttpRequestError({ url, body, status }), 'eth_call').retry).toBe(
        false,
      )
    }
    expect(retryDecision(new TimeoutError({ url, body }), 'eth_call').retry).toBe(true)
    expect(
      retryDecision(
        new HttpRequestError({ url, body, cause: new TypeError('fetch failed') }),
        'eth_call',
      ).retry,
    ).toBe(true)
    expect(retryDecision(new Error('x'), 'eth_call').retry).toBe(false)
  })

  it('retries a transaction send only when the server refused it (429)', () => {
    expect(retryDecision(new TimeoutError({ url, body }), 'eth_sendRawTransaction').retry).toBe(
      false,
    )
    expect(
      retryDecision(new HttpRequestError({ url, body, status: 500 }), 'eth_sendRawTransaction')
        .retry,
    ).toBe(false)
    expect(
      retryDecision(new HttpRequestError({ url, body, status: 429 }), 'eth_sendRawTransaction')
        .retry,
    ).toBe(true)
  })

  it('reports Retry-After', () => {
    const decision = retryDecision(
      new HttpRequestError({
        url,
        body,
        status: 429,
        headers: new Headers({ 'Retry-After': '2' }),
      }),
      'eth_call',
    )
    expect(decision).toEqual({ retry: true, retryAfterMs: 2000 })
  })
})
