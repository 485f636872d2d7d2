/**
 * `attachToResourceServer` put together, with fake timers and no chain: its RPC answers every request
 * with an HTTP error, so each sweep fails at its read. What is left to see is how the parts work
 * together: the hook records settlements and starts debounced sweeps, a failed sweep is retried with
 * the policy's backoff (or as long as `Retry-After` asks), its settlements wait for the next sweep,
 * and detach ends it all.
 */
import {
  createPublicClient,
  createWalletClient,
  custom,
  type Hash,
  HttpRequestError,
  keccak256,
  toHex,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import {
  type AttachToResourceServerOptions,
  attachToResourceServer,
  createVaultContext,
  type SettlementHookContext,
  type SweeperProblem,
  vaultChains,
} from '../../../src/index.js'
import { hookTarget } from '../../support/settlementHook.js'

beforeEach(() => {
  vi.useFakeTimers({ now: 0 })
})
afterEach(() => {
  vi.useRealTimers()
})

const account = privateKeyToAccount(generatePrivateKey())
const chain = vaultChains['base-sepolia'].viemChain

/** A vault client whose RPC answers every request with `status` (and `Retry-After`, when given). */
function failingVault(status: number, retryAfter?: string) {
  const requests: number[] = []
  const transport = custom(
    {
      request: async () => {
        requests.push(Date.now())
        throw new HttpRequestError({
          url: 'https://rpc.example',
          status,
          ...(retryAfter === undefined
            ? {}
            : { headers: new Headers({ 'Retry-After': retryAfter }) }),
        })
      },
    },
    { retryCount: 0 },
  )
  const ctx = createVaultContext({
    publicClient: createPublicClient({ chain, transport }),
    walletClient: createWalletClient({ account, chain, transport }),
    chain: 'base-sepolia',
  })
  return { ctx, requests }
}

/** A settlement that paid the merchant 1 USDC. */
function paid(ctx: ReturnType<typeof failingVault>['ctx'], n: number): SettlementHookContext {
  return {
    requirements: {
      scheme: 'exact',
      network: ctx.network,
      asset: ctx.addresses.usdc,
      amount: '1000000',
      payTo: account.address,
    },
    result: { success: true, transaction: keccak256(toHex(`sale ${n}`)) as Hash },
  }
}

function attach(
  ctx: ReturnType<typeof failingVault>['ctx'],
  options: Partial<AttachToResourceServerOptions> = {},
) {
  const problems: SweeperProblem[] = []
  const target = hookTarget()
  const sweeper = attachToResourceServer(ctx, target, {
    minIdleThreshold: '10',
    debounceMs: 100,
    retry: { maxAttempts: 4, initialDelayMs: 10, maxDelayMs: 1_000 },
    onNonFatalError: (problem) => {
      problems.push(problem)
    },
    ...options,
  })
  return { target, sweeper, problems }
}

describe('attachToResourceServer, without a chain', () => {
  it('a burst of settlements is one sweep; a failing one is retried with doubling backoff, then gives up', async () => {
    const { ctx, requests } = failingVault(503)
    const { target, sweeper, problems } = attach(ctx)
    for (let n = 0; n < 3; n++) {
      await target.settle(paid(ctx, n))
      await vi.advanceTimersByTimeAsync(50)
    }
    await vi.advanceTimersByTimeAsync(10_000)
    // Settlements at 0, 50, 100: the sweep starts at 200, then retries 10, 20 and 40 ms later.
    expect(requests).toEqual([200, 210, 230, 270])
    expect(problems.map(({ phase, willRetry, error }) => [phase, willRetry, error.code])).toEqual([
      ['balance-read', true, 'RPC_HTTP_ERROR'],
      ['balance-read', true, 'RPC_HTTP_ERROR'],
      ['balance-read', true, 'RPC_HTTP_ERROR'],
      ['balance-read', false, 'RPC_HTTP_ERROR'],
    ])
    // The settlements wait for the next sweep.
    expect(sweeper.memory()).toEqual({
      trackedSettlements: 3,
      pendingSettlements: 3,
      maxTrackedSettlements: 10_000,
    })
    await sweeper.detach()
  })

  it('waits as long as Retry-After asks rather than its own backoff', async () => {
    const { ctx, requests } = failingVault(429, '1')
    const { target, sweeper, problems } = attach(ctx, {
      retry: { maxAttempts: 3, initialDelayMs: 10, maxDelayMs: 8_000 },
    })
    await target.settle(paid(ctx, 0))
    await vi.advanceTimersByTimeAsync(10_000)
    expect(requests).toEqual([100, 1_100, 2_100])
    expect(problems.map((problem) => problem.error.code)).toEqual([
      'RPC_RATE_LIMITED',
      'RPC_RATE_LIMITED',
      'RPC_RATE_LIMITED',
    ])
    await sweeper.detach()
  })

  it("the handle's sweep() makes one attempt, rejects, and leaves the settlements pending", async () => {
    const { ctx, requests } = failingVault(503)
    const { target, sweeper, problems } = attach(ctx, { debounceMs: 60_000 })
    await target.settle(paid(ctx, 0))
    await expect(sweeper.sweep()).rejects.toMatchObject({ code: 'RPC_HTTP_ERROR' })
    expect(requests).toHaveLength(1)
    expect(problems).toEqual([])
    expect(sweeper.memory()).toMatchObject({ trackedSettlements: 1, pendingSettlements: 1 })
    await sweeper.detach()
  })

  it('detach ends a backoff at once, stops the timers, and leaves the hook inert', async () => {
    const { ctx, requests } = failingVault(503)
    const { target, sweeper, problems } = attach(ctx, {
      sweepIntervalMs: 5_000,
      retry: { maxAttempts: 4, initialDelayMs: 1_000, maxDelayMs: 1_000 },
    })
    await target.settle(paid(ctx, 0))
    await vi.advanceTimersByTimeAsync(100)
    expect(requests).toEqual([100])
    expect(problems).toMatchObject([{ phase: 'balance-read', willRetry: true }])
    // In the first backoff: detach resolves without waiting it out.
    await sweeper.detach()
    expect(Date.now()).toBe(100)
    expect(vi.getTimerCount()).toBe(0)

    await target.settle(paid(ctx, 1))
    await vi.advanceTimersByTimeAsync(60_000)
    expect(requests).toEqual([100])
    expect(sweeper.memory()).toMatchObject({ trackedSettlements: 1, pendingSettlements: 1 })
  })
})
