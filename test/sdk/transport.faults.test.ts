import { bypass, delay, HttpResponse, http } from 'msw'
import { setupServer } from 'msw/node'
import { createPublicClient, HttpRequestError, TimeoutError, http as viemHttp } from 'viem'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type Devnet, startDevnet } from '../../src/devnet/startDevnet.js'
import {
  createVaultClient,
  retryDecision,
  type VaultHttpConfig,
  type VaultRpcError,
  vaultHttp,
} from '../../src/index.js'
import { expectVaultError } from './helpers.js'

/** A fake RPC URL with a key in its path and query: it must never show up in an error. */
const faultyUrl = 'http://faulty-rpc.test/v2/SECRETKEY?apikey=QUERYSECRET'

type Fault =
  | { kind: 'status'; status: number; headers?: Record<string, string> }
  | { kind: 'malformed' }
  | { kind: 'hang' }

let devnet: Devnet
let faults: Fault[] = []
/** When set, every request gets this fault (after the queue is empty). */
let always: Fault | undefined
let requests = 0

const server = setupServer(
  http.post('http://faulty-rpc.test/*', async ({ request }) => {
    requests++
    const fault = faults.shift() ?? always
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
    const forwarded = new Request(devnet.rpcUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: await request.text(),
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
    const position = await vaultWith().getPosition(devnet.accounts.merchant.address)
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
