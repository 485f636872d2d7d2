/**
 * The sweeper of `attachToResourceServer` on the devnet, driven through its after-settle hook with
 * crafted contexts: what counts as income, deduplication, coalescing, retries by phase, callbacks that
 * throw, `detach()` (which finishes a sweep still in its debounce), the timer, the manual sweep, the
 * report of a pause, and the account named when a sweep lacks gas. The money is real (transfers to the merchant on
 * the devnet); the merchant's RPC traffic passes a proxy that records it and injects faults.
 */
import { createWalletClient, type Hash, http, isAddressEqual, keccak256, toHex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { CountingProxy, RpcCall } from '../../harness/countingProxy.js'
import {
  depositedIn,
  gate,
  isSend,
  isSweepRead,
  type MerchantRpc,
  merchantVault,
  receiptsFrom,
  sweepEvents,
  timersTurn,
  transferToMerchant,
  usdcBalance,
} from '../../harness/merchant.js'
import type { Devnet } from '../../src/devnet/startDevnet.js'
import {
  type AttachToResourceServerOptions,
  type PauseChange,
  parseUsdc,
  routerAbi,
  type SettlementHookContext,
  type Sweeper,
  type SweeperProblem,
} from '../../src/index.js'
import { type DevnetClients, useMerchantDevnet } from '../support/devnet.js'
import { hookTarget } from '../support/settlementHook.js'

let devnet: Devnet
let t: DevnetClients
let proxy: CountingProxy
let rpc: MerchantRpc
useMerchantDevnet({ chain: 'base-sepolia' }, (m) => ({ devnet, t, proxy, rpc } = m))

const sweepers: Sweeper[] = []
afterEach(async () => {
  // Faults off first: detach() runs a sweep still in its debounce.
  rpc.setRule(undefined)
  proxy.setFault(undefined)
  for (const sweeper of sweepers.splice(0)) await sweeper.detach()
})

let hashCount = 0
const uniqueHash = (): Hash => keccak256(toHex(`settlement ${hashCount++} ${Date.now()}`))

/** What x402 hands the hook after a settlement that paid the merchant, with fields overridden. */
function settlementContext(
  overrides: {
    requirements?: Partial<SettlementHookContext['requirements']>
    result?: Partial<SettlementHookContext['result']>
  } = {},
) {
  return {
    paymentPayload: {},
    declaredExtensions: {},
    phase: 'afterHandler',
    requirements: {
      scheme: 'exact',
      network: 'eip155:84532',
      asset: devnet.addresses.usdc,
      amount: '1000000',
      payTo: devnet.accounts.merchant.address,
      maxTimeoutSeconds: 300,
      extra: {},
      ...overrides.requirements,
    },
    result: {
      success: true,
      transaction: uniqueHash(),
      network: 'eip155:84532',
      payer: devnet.accounts.buyer.address,
      amount: '1000000',
      ...overrides.result,
    },
  }
}

type Options = Omit<AttachToResourceServerOptions, 'onIdleDeposit' | 'onNonFatalError'>

/**
 * Attaches a sweeper for the merchant (RPC through the proxy, each request timing out after
 * `timeout` ms when given) to a fresh hook target.
 */
async function attach(options: Partial<Options> = {}, { timeout }: { timeout?: number } = {}) {
  const events = sweepEvents()
  const target = hookTarget()
  const balance = await usdcBalance(devnet, devnet.accounts.merchant.address)
  const sweeper = merchantVault(devnet, proxy.url, { timeout }).attachToResourceServer(target, {
    // By default everything now in the wallet is reserve: only what arrives in the test is idle.
    reserve: balance,
    minIdleThreshold: '10',
    debounceMs: 0,
    retry: { initialDelayMs: 10 },
    ...options,
    onIdleDeposit: events.onIdleDeposit,
    onNonFatalError: events.onNonFatalError,
  })
  sweepers.push(sweeper)
  return { events, target, sweeper, reserve: balance }
}

/**
 * Attaches a sweeper, has a sale start a sweep of 10 USDC, and holds the sweep's deposit at the proxy:
 * it resolves once the deposit has been sent and is waiting for `held.open()`. `from` is where the
 * sale's RPC calls start in `rpc.calls`.
 */
async function sweepHeldAtItsSend() {
  const attached = await attach()
  const held = gate()
  rpc.setRule(async (calls) => {
    if (calls.some(isSend)) await held.opened
    return undefined
  })
  await transferToMerchant(devnet, parseUsdc('10'))
  const from = rpc.calls.length
  await attached.target.settle(settlementContext())
  await rpc.until(() => rpc.indexOf(isSend, from) !== -1)
  return { ...attached, held, from }
}

/**
 * Waits until a sweep a hook just scheduled (with `debounceMs: 0`) has run: its timer fires first, so
 * it is in the write queue before the manual sweep, which returns after it.
 */
async function afterScheduledSweeps(sweeper: Sweeper) {
  await timersTurn()
  return sweeper.sweep()
}

describe('what the sweeper counts as income', () => {
  it('a settlement that paid the merchant: a sweep deposits the idle USDC; onIdleDeposit is exact', async () => {
    const { events, target, reserve } = await attach()
    const payment = await transferToMerchant(devnet, parseUsdc('12'))
    const context = settlementContext({
      requirements: { amount: '12000000' },
      result: { transaction: payment, amount: '12000000' },
    })
    const readsBefore = rpc.sweepReads()
    await target.settle(context)
    // The hook returned before the sweep read anything: the sweep runs in the background.
    expect(rpc.sweepReads()).toBe(readsBefore)
    await events.deposited()
    expect(events.deposits).toEqual([
      {
        deposited: true,
        idleAmount: parseUsdc('12'),
        reserveFloor: reserve,
        txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        wallet: devnet.accounts.merchant.address,
        walletBalance: reserve + parseUsdc('12'),
        minDeposit: parseUsdc('10'),
        sharesMinted: expect.any(BigInt),
        blockNumber: expect.any(BigInt),
        method: expect.stringMatching(/^deposit(WithPermit)?$/),
        settlements: [
          {
            txHash: payment,
            amount: parseUsdc('12'),
            payer: devnet.accounts.buyer.address,
            scheme: 'exact',
          },
        ],
      },
    ])
    expect(await usdcBalance(devnet, devnet.accounts.merchant.address)).toBe(reserve)
    expect(events.problems).toEqual([])
  })

  it('an upto settlement counts, with the amount actually settled', async () => {
    const { events, target } = await attach()
    await transferToMerchant(devnet, parseUsdc('11'))
    await target.settle(
      settlementContext({ requirements: { scheme: 'upto' }, result: { amount: '11000000' } }),
    )
    await events.deposited()
    expect(events.deposits[0]?.settlements).toMatchObject([{ scheme: 'upto', amount: 11_000_000n }])
  })

  it.each([
    ['another payTo', { requirements: { payTo: '0x000000000000000000000000000000000000dEaD' } }],
    ['another asset', { requirements: { asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e' } }],
    ['another network', { requirements: { network: 'eip155:8453' } }],
    ['another scheme (batch-settlement)', { requirements: { scheme: 'batch-settlement' } }],
    ['an empty transaction hash', { result: { transaction: '' } }],
    ['a failed settlement', { result: { success: false } }],
  ])('%s: no sweep', async (_name, overrides) => {
    const { events, target, sweeper } = await attach()
    await transferToMerchant(devnet, parseUsdc('20'))
    const readsBefore = rpc.sweepReads()
    await target.settle(settlementContext(overrides as never))
    // Only the manual sweep reads; it finds the 20 USDC the ignored settlement did not sweep.
    const manual = await afterScheduledSweeps(sweeper)
    expect(rpc.sweepReads() - readsBefore).toBe(1)
    expect(manual).toMatchObject({ deposited: true, idleAmount: parseUsdc('20') })
    expect(events.problems).toEqual([])
  })

  it('a context it cannot read is a settlement-check problem, one without requirements is ignored', async () => {
    const { events, target, sweeper } = await attach()
    const readsBefore = rpc.sweepReads()
    await expect(target.settle(null)).resolves.toBeUndefined()
    await target.settle({ result: { success: true, transaction: uniqueHash() } })
    await afterScheduledSweeps(sweeper)
    expect(rpc.sweepReads() - readsBefore).toBe(1)
    expect(events.problems).toMatchObject([{ phase: 'settlement-check', willRetry: false }])
  })
})

describe('each settlement once, in bounded memory', () => {
  it('the same transaction hash twice is one settlement', async () => {
    const { events, target } = await attach({ debounceMs: 50 })
    await transferToMerchant(devnet, parseUsdc('15'))
    const context = settlementContext()
    await target.settle(context)
    await target.settle(context)
    await target.settle({
      ...context,
      result: {
        ...context.result,
        transaction: context.result.transaction.toUpperCase().replace('0X', '0x'),
      },
    })
    await events.deposited()
    expect(events.deposits[0]?.settlements.map((s) => s.txHash)).toEqual([
      context.result.transaction,
    ])
  })

  it('remembers at most maxTrackedSettlements hashes and settlements, the newest', async () => {
    const { events, target, sweeper } = await attach({
      maxTrackedSettlements: 3,
      debounceMs: 60_000,
    })
    const contexts = Array.from({ length: 5 }, () => settlementContext())
    for (const context of contexts) await target.settle(context)
    expect(sweeper.memory()).toEqual({
      trackedSettlements: 3,
      pendingSettlements: 3,
      maxTrackedSettlements: 3,
    })
    await transferToMerchant(devnet, parseUsdc('10'))
    // The manual sweep reports the settlements recorded so far: only the newest 3 were kept.
    await sweeper.sweep()
    await events.deposited()
    expect(events.deposits[0]?.settlements.map((s) => s.txHash)).toEqual(
      contexts.slice(2).map((c) => c.result.transaction),
    )
    expect(sweeper.memory()).toMatchObject({ trackedSettlements: 3, pendingSettlements: 0 })

    // The first hash was forgotten: it counts again. The last one is still known.
    await transferToMerchant(devnet, parseUsdc('10'))
    for (const context of [contexts[0], contexts[4]]) await target.settle(context)
    await sweeper.sweep()
    await events.deposited(2)
    expect(events.deposits[1]?.settlements.map((s) => s.txHash)).toEqual([
      contexts[0]?.result.transaction,
    ])
  })
})

describe('one sweep at a time', () => {
  it('settlements during a sweep lead to exactly one follow-up sweep', async () => {
    const { events, target, sweeper } = await attach()
    const readsBefore = rpc.sweepReads()
    const held = gate()
    rpc.setRule(async (calls) => {
      if (calls.some((call) => isSweepRead(call, devnet)) && rpc.sweepReads() === readsBefore + 1)
        await held.opened
      return undefined
    })
    await transferToMerchant(devnet, parseUsdc('10'))
    await target.settle(settlementContext())
    await rpc.until(() => rpc.sweepReads() === readsBefore + 1)
    // The first sweep is reading; five more sales arrive meanwhile.
    for (let i = 0; i < 5; i++) {
      await transferToMerchant(devnet, parseUsdc('10'))
      await target.settle(settlementContext())
    }
    held.open()
    await events.deposited()
    await rpc.until(() => rpc.sweepReads() === readsBefore + 2)
    await sweeper.detach()
    expect(rpc.sweepReads() - readsBefore).toBe(2)
    // The first sweep read after the five sales had arrived: it deposited all 60 USDC, and the
    // follow-up found nothing left.
    expect(events.deposits.map((d) => d.idleAmount)).toEqual([parseUsdc('60')])
    expect(events.deposits[0]?.settlements).toHaveLength(1)
  })

  it('a manual sweep() waits for the sweep in flight instead of racing it', async () => {
    const { events, sweeper, held, from } = await sweepHeldAtItsSend()
    const manual = sweeper.sweep()
    held.open()
    expect(await manual).toMatchObject({
      deposited: false,
      reason: 'below-threshold',
      idleAmount: 0n,
    })
    await events.deposited()
    // The manual sweep read only after the hook sweep's deposit was sent (and mined).
    const send = rpc.indexOf(isSend, from)
    const manualRead = rpc.calls.findLastIndex((call) => isSweepRead(call, devnet))
    expect(manualRead).toBeGreaterThan(send)
  })
})

describe('problems are reported with their phase, and the money is swept later', () => {
  it('an RPC that starts serving another chain: CHAIN_MISMATCH at the read, nothing sent; the retry deposits once the chain is back', async () => {
    const { events, target } = await attach()
    await transferToMerchant(devnet, parseUsdc('10'))
    // The second sweep read waits until the RPC serves the vault's chain again.
    const restored = gate()
    let reads = 0
    rpc.setRule(async (calls) => {
      if (calls.some((call) => isSweepRead(call, devnet)) && ++reads === 2) await restored.opened
      return undefined
    })
    const from = rpc.calls.length
    await setAnvilChainId(8453)
    try {
      await target.settle(settlementContext())
      await events.problem((problem) => problem.phase === 'balance-read')
    } finally {
      await setAnvilChainId(devnet.chainId)
      restored.open()
    }
    await events.deposited()
    expect(events.problems).toMatchObject([
      {
        phase: 'balance-read',
        willRetry: true,
        error: { code: 'CHAIN_MISMATCH', details: { expected: devnet.chainId, actual: 8453 } },
      },
    ])
    expect(events.deposits.map((deposit) => deposit.idleAmount)).toEqual([parseUsdc('10')])
    // Nothing was sent on the other chain: the one send came after the second read.
    const secondRead = rpc.indexOf(
      (call) => isSweepRead(call, devnet),
      rpc.indexOf((call) => isSweepRead(call, devnet), from) + 1,
    )
    expect(rpc.calls.slice(from).filter(isSend)).toHaveLength(1)
    expect(rpc.indexOf(isSend, from)).toBeGreaterThan(secondRead)
  })

  it.each([
    ['balance-read', (call: RpcCall) => isSweepRead(call, devnet), 'RPC_HTTP_ERROR'],
    // The send failed with a 500, so the SDK cannot know whether it reached the node; the sweep's
    // retry reads again with the same nonce, so no second deposit can be mined.
    ['deposit', isSend, 'SEND_OUTCOME_UNKNOWN'],
    ['receipt', (call: RpcCall) => call.method === 'eth_getTransactionReceipt', 'RPC_HTTP_ERROR'],
  ] as const)('an RPC failure in the %s phase is retried', async (phase, failing, code) => {
    const { events, target } = await attach()
    let failures = 1
    rpc.setRule((calls) => (calls.some(failing) && failures-- > 0 ? 500 : undefined))
    await transferToMerchant(devnet, parseUsdc('10'))
    const firstBlock = await t.publicClient.getBlockNumber({ cacheTime: 0 })
    await target.settle(settlementContext())
    await events.deposited()
    expect(events.problems).toMatchObject([{ phase, willRetry: true, error: { code } }])
    expect(events.deposits.map((d) => d.idleAmount)).toEqual([parseUsdc('10')])
    // Exactly one deposit went on chain, also when its receipt had to be waited for twice.
    const receipts = await t.publicClient.getContractEvents({
      address: devnet.addresses.router,
      abi: routerAbi,
      eventName: 'Deposited',
      fromBlock: firstBlock,
    })
    expect(receipts).toHaveLength(1)
  })

  it('when retries run out the money stays, and the next sweep takes it', async () => {
    const { events, target } = await attach({ retry: { maxAttempts: 1 } })
    rpc.setRule((calls) => (calls.some((call) => isSweepRead(call, devnet)) ? 500 : undefined))
    await transferToMerchant(devnet, parseUsdc('10'))
    const first = settlementContext()
    await target.settle(first)
    await events.problem((problem) => problem.phase === 'balance-read')
    expect(events.problems).toMatchObject([{ phase: 'balance-read', willRetry: false }])
    rpc.setRule(undefined)

    await transferToMerchant(devnet, parseUsdc('1'))
    const second = settlementContext()
    await target.settle(second)
    await events.deposited()
    expect(events.deposits[0]).toMatchObject({ idleAmount: parseUsdc('11') })
    expect(events.deposits[0]?.settlements.map((s) => s.txHash)).toEqual([
      first.result.transaction,
      second.result.transaction,
    ])
  })

  it('an onIdleDeposit that throws is an observer problem; the sweeper goes on', async () => {
    const events = sweepEvents()
    const target = hookTarget()
    const reserve = await usdcBalance(devnet, devnet.accounts.merchant.address)
    let calls = 0
    const sweeper = merchantVault(devnet, proxy.url).attachToResourceServer(target, {
      reserve,
      minIdleThreshold: '10',
      debounceMs: 0,
      onIdleDeposit: (deposit) => {
        calls++
        events.onIdleDeposit(deposit)
        if (calls === 1) throw new Error('bookkeeping is down')
        return Promise.reject(new Error('still down'))
      },
      onNonFatalError: (problem) => {
        events.onNonFatalError(problem)
        throw new Error('the error reporter fails too')
      },
    })
    sweepers.push(sweeper)
    for (const expected of [1, 2]) {
      await transferToMerchant(devnet, parseUsdc('10'))
      await target.settle(settlementContext())
      await events.deposited(expected)
      await events.until(() => events.problems.length === expected)
    }
    expect(events.problems).toMatchObject([
      {
        phase: 'observer',
        willRetry: false,
        error: { message: 'onIdleDeposit failed: bookkeeping is down' },
      },
      {
        phase: 'observer',
        willRetry: false,
        error: { message: 'onIdleDeposit failed: still down' },
      },
    ])
  })
})

describe('RPC faults during a sweep: a retryable problem with its phase, and no money lost', () => {
  const merchant = () => devnet.accounts.merchant.address

  // [name, the fault, the JSON-RPC method it hits (once), the phase reported, the error code]
  it.each([
    [
      'a 429 with Retry-After',
      { kind: 'status', status: 429, retryAfter: '1' },
      'eth_call',
      'balance-read',
      'RPC_RATE_LIMITED',
    ],
    ['malformed JSON', { kind: 'malformed-json' }, 'eth_call', 'balance-read', 'RPC_BAD_RESPONSE'],
    // The proxy drops the send before the node sees it; the SDK cannot know that, so the retry reads
    // again with the same nonce and at most one deposit can be mined.
    [
      'a connection reset',
      { kind: 'reset' },
      'eth_sendRawTransaction',
      'deposit',
      'SEND_OUTCOME_UNKNOWN',
    ],
    [
      'a request that hangs past the timeout',
      { kind: 'hang' },
      'eth_call',
      'balance-read',
      'RPC_TIMEOUT',
    ],
  ] as const)('%s', async (_name, fault, method, phase, code) => {
    const { events, target, reserve } = await attach({}, { timeout: 1_000 })
    await transferToMerchant(devnet, parseUsdc('10'))
    const firstBlock = (await t.publicClient.getBlockNumber({ cacheTime: 0 })) + 1n
    proxy.setFault(fault, { methods: [method], times: 1 })
    await target.settle(settlementContext())
    await events.problem(() => true)
    const reported = performance.now()
    await events.deposited()
    const problem = events.problems[0] as SweeperProblem
    expect(events.problems).toHaveLength(1)
    // SEND_OUTCOME_UNKNOWN is not retryable for a caller who would send the same thing again; the
    // sweeper retries it from a fresh read.
    expect(problem).toMatchObject({ phase, willRetry: true, error: { code } })
    expect(problem.error.message).not.toMatch(/\n\s+at /)
    if (fault.kind === 'status') {
      // The retry waited as long as the RPC asked (1 s), not the sweeper's own 10 ms.
      expect(performance.now() - reported).toBeGreaterThanOrEqual(950)
    }
    // Exactly one deposit mined, of all 10 USDC: nothing lost, nothing twice.
    const receipts = await receiptsFrom(devnet, merchant(), firstBlock)
    expect(receipts.map((receipt) => receipt.status)).toEqual(['success'])
    expect(depositedIn(devnet, receipts, merchant())).toEqual([parseUsdc('10')])
    expect(events.deposits.map((deposit) => deposit.idleAmount)).toEqual([parseUsdc('10')])
    expect(await usdcBalance(devnet, merchant())).toBe(reserve)
  })
})

describe('another process with the same key', () => {
  const lookups = new Set([
    'eth_getTransactionByHash',
    'eth_getTransactionReceipt',
    'eth_getTransactionBySenderAndNonce',
  ])
  const lookup = (call: RpcCall) => lookups.has(call.method)

  it.each([
    ['after the sweep polled for its deposit’s receipt', 'seen'],
    ['before the sweep looked its deposit up', 'unseen'],
  ] as const)(
    'replaces the sweep’s deposit %s: a retryable receipt problem, and no deposit reported here',
    async (_, timing) => {
      const { events, target, sweeper, reserve } = await attach()
      await t.vault.approveUsdcAndWait({ amount: parseUsdc('1000') })
      await transferToMerchant(devnet, parseUsdc('10'))
      const lookedUp = gate()
      // 'unseen': every transaction and receipt lookup of the sweep waits until the replacement is mined.
      if (timing === 'unseen')
        rpc.setRule(async (calls) => {
          if (calls.some(lookup)) await lookedUp.opened
          return undefined
        })
      await t.testClient.setAutomine(false)
      try {
        const from = rpc.calls.length
        const answeredFrom = rpc.answered.length
        await target.settle(settlementContext())
        await rpc.until(() => rpc.answered.slice(answeredFrom).some(isSend))
        const pool = await t.publicClient.getBlock({
          blockTag: 'pending',
          includeTransactions: true,
        })
        const ours = pool.transactions.find((tx) =>
          isAddressEqual(tx.from, devnet.accounts.merchant.address),
        )
        if (!ours?.to || ours.maxFeePerGas === undefined) throw new Error('no pending deposit')
        if (timing === 'seen') {
          await rpc.until(() =>
            rpc.answered
              .slice(answeredFrom)
              .some(
                (call) =>
                  call.method === 'eth_getTransactionReceipt' &&
                  JSON.stringify(call.params).includes(ours.hash),
              ),
          )
        }
        // The other process sends the same deposit with the same nonce and a higher fee, which
        // replaces the sweep's; then a block is mined.
        const replacement = await createWalletClient({
          account: privateKeyToAccount(devnet.accounts.merchant.privateKey),
          chain: devnet.viemChain,
          transport: http(devnet.rpcUrl),
        }).sendTransaction({
          to: ours.to,
          data: ours.input,
          nonce: ours.nonce,
          gas: ours.gas,
          maxFeePerGas: ours.maxFeePerGas * 2n,
          maxPriorityFeePerGas: ours.maxFeePerGas * 2n,
        })
        await t.testClient.mine({ blocks: 1 })
        await t.testClient.setAutomine(true)
        lookedUp.open()

        await events.problem((problem) => problem.phase === 'receipt')
        expect(events.problems).toMatchObject([
          {
            phase: 'receipt',
            willRetry: true,
            error: {
              code: 'NONCE_CONFLICT',
              details: { txHash: ours.hash, replacedBy: replacement },
            },
          },
        ])
        // The retry reads again and finds the other process's deposit took the 10 USDC.
        const sent = rpc.indexOf(isSend, from)
        await rpc.until(() => rpc.indexOf((call) => isSweepRead(call, devnet), sent) !== -1)
        await sweeper.detach()
        expect(events.deposits).toEqual([])
        expect(events.problems).toHaveLength(1)
        expect(await usdcBalance(devnet, devnet.accounts.merchant.address)).toBe(reserve)
      } finally {
        lookedUp.open()
        await t.testClient.setAutomine(true)
      }
    },
  )
})

describe('detach, the timer and the manual sweep', () => {
  it('detach() waits for the sweep in flight and stops every later one', async () => {
    const { events, target, sweeper, held } = await sweepHeldAtItsSend()
    const order: string[] = []
    const detached = sweeper.detach().then(() => order.push('detached'))
    await target.settle(settlementContext()) // inert now
    held.open()
    await events.deposited()
    order.push('deposited')
    await detached
    expect(order).toEqual(['deposited', 'detached'])

    await transferToMerchant(devnet, parseUsdc('10'))
    const readsBefore = rpc.sweepReads()
    await target.settle(settlementContext())
    await afterScheduledSweeps(sweeper) // the manual sweep still works, on request
    expect(rpc.sweepReads() - readsBefore).toBe(1)
  })

  it('detach() while a sale’s sweep waits out its debounce: the sweep runs now and has deposited when detach resolves', async () => {
    const { events, target, sweeper, reserve } = await attach({ debounceMs: 60_000 })
    await transferToMerchant(devnet, parseUsdc('10'))
    const context = settlementContext()
    await target.settle(context)
    const readsBefore = rpc.sweepReads()
    await sweeper.detach()
    // Not dropped, not 60 s later: deposited before detach resolved.
    expect(await usdcBalance(devnet, devnet.accounts.merchant.address)).toBe(reserve)
    expect(rpc.sweepReads() - readsBefore).toBe(1)
    await events.deposited()
    expect(events.deposits[0]).toMatchObject({ idleAmount: parseUsdc('10') })
    expect(events.deposits[0]?.settlements.map((s) => s.txHash)).toEqual([
      context.result.transaction,
    ])
    expect(events.problems).toEqual([])
  })

  it('detach() while the RPC fails: the scheduled sweep makes one attempt and says the money waits (willRetry: false)', async () => {
    const { events, target, sweeper, reserve } = await attach({ debounceMs: 60_000 })
    await transferToMerchant(devnet, parseUsdc('10'))
    await target.settle(settlementContext())
    proxy.setFault({ kind: 'status', status: 503 })
    await sweeper.detach()
    await events.problem(() => true)
    expect(events.problems).toMatchObject([{ phase: 'balance-read', willRetry: false }])
    expect(events.deposits).toEqual([])
    proxy.setFault(undefined)
    // Handed over: the money waits in the wallet for the next sweep.
    expect(await usdcBalance(devnet, devnet.accounts.merchant.address)).toBe(
      reserve + parseUsdc('10'),
    )
  })

  it('sweepIntervalMs sweeps money that arrived without a sale', async () => {
    const { events, sweeper } = await attach({ sweepIntervalMs: 100 })
    await transferToMerchant(devnet, parseUsdc('25'))
    await events.deposited()
    expect(events.deposits[0]).toMatchObject({ idleAmount: parseUsdc('25'), settlements: [] })
    await sweeper.detach()
    // The timer is gone with detach: only the manual sweep reads from now on.
    const readsBefore = rpc.sweepReads()
    await afterScheduledSweeps(sweeper)
    expect(rpc.sweepReads() - readsBefore).toBe(1)
  })

  it('the manual sweep reports its deposit to onIdleDeposit, with the settlements waiting', async () => {
    const { events, target, sweeper } = await attach({ debounceMs: 60_000 })
    await transferToMerchant(devnet, parseUsdc('10'))
    const context = settlementContext()
    await target.settle(context)
    const result = await sweeper.sweep()
    expect(result).toMatchObject({ deposited: true, idleAmount: parseUsdc('10') })
    await events.deposited()
    expect(events.deposits[0]).toMatchObject({
      idleAmount: parseUsdc('10'),
      txHash: result.deposited ? result.txHash : '',
    })
    expect(events.deposits[0]?.settlements.map((s) => s.txHash)).toEqual([
      context.result.transaction,
    ])
  })
})

describe('options', () => {
  it.each([
    [{ minIdleThreshold: 'lots' }, 'INVALID_AMOUNT'],
    [{ minIdleThreshold: '10', debounceMs: -1 }, 'INVALID_ARGUMENT'],
    [{ minIdleThreshold: '10', sweepIntervalMs: 0 }, 'INVALID_ARGUMENT'],
    [{ minIdleThreshold: '10', retry: { maxAttempts: 0 } }, 'INVALID_ARGUMENT'],
    [{ minIdleThreshold: '10', maxTrackedSettlements: 1.5 }, 'INVALID_ARGUMENT'],
  ])('refuses %o at once', (options, code) => {
    expect(() => t.vault.attachToResourceServer(hookTarget(), options as never)).toThrow(
      expect.objectContaining({ code }),
    )
  })

  it('needs a resource server and a client that can send', () => {
    expect(() => t.vault.attachToResourceServer({} as never, { minIdleThreshold: '10' })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    )
    expect(() =>
      t.readOnly.attachToResourceServer(hookTarget(), { minIdleThreshold: '10' }),
    ).toThrow(expect.objectContaining({ code: 'WALLET_CLIENT_REQUIRED' }))
  })
})

/** Makes the devnet's node report another chain id (anvil_setChainId), as a swapped RPC node would. */
async function setAnvilChainId(chainId: number): Promise<void> {
  const response = await fetch(devnet.rpcUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_setChainId', params: [chainId] }),
  })
  const answer = (await response.json()) as { error?: { message: string } }
  if (answer.error) throw new Error(`anvil_setChainId: ${answer.error.message}`)
}

describe('nothing stops in silence', () => {
  it('deposits paused: said once when a sweep finds them paused, and once when a later sweep finds them open', async () => {
    const changes: PauseChange[] = []
    let changed = () => {}
    const untilChanges = (count: number) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (changes.length >= count) resolve()
          else changed = check
        }
        check()
      })
    const logged = vi.spyOn(console, 'warn').mockImplementation(() => {})
    try {
      const { events, target, sweeper, reserve } = await attach({
        onPauseChange: (change) => {
          changes.push(change)
          changed()
        },
      })
      await t.asDeployer(devnet.addresses.router, 'function pauseDeposits()')
      const wallet = devnet.accounts.merchant.address
      // Two sales while paused, each swept (and a manual sweep after each): the first sweep says so,
      // the later ones say nothing new.
      for (const amount of ['12', '3']) {
        await transferToMerchant(devnet, parseUsdc(amount))
        await target.settle(settlementContext())
        expect(await afterScheduledSweeps(sweeper)).toMatchObject({ reason: 'paused' })
      }
      await untilChanges(1)
      expect(changes).toEqual([
        {
          paused: true,
          wallet,
          walletBalance: reserve + parseUsdc('12'),
          idleAmount: parseUsdc('12'),
        },
      ])
      expect(events.problems).toEqual([])
      expect(logged.mock.calls.map(([line]) => line)).toEqual([
        `x402-vault: deposits into the vault are paused: 12 USDC idle in ${wallet} waits there until they resume (sales still settle; withdrawals still work).`,
      ])
      expect(events.deposits).toEqual([])

      // Open again: the next sale's sweep says so, and deposits all that waited.
      await t.asDeployer(devnet.addresses.router, 'function unpauseDeposits()')
      await transferToMerchant(devnet, parseUsdc('1'))
      await target.settle(settlementContext())
      await events.deposited()
      await untilChanges(2)
      expect(changes[1]).toEqual({
        paused: false,
        wallet,
        walletBalance: reserve + parseUsdc('16'),
        idleAmount: parseUsdc('16'),
      })
      expect(logged.mock.calls.map(([line]) => line)).toEqual([
        expect.stringContaining('are paused'),
        `x402-vault: deposits into the vault are open again: sweeping ${wallet} resumes.`,
      ])
      expect(events.deposits.map((d) => d.idleAmount)).toEqual([parseUsdc('16')])
      expect(events.problems).toEqual([])
    } finally {
      logged.mockRestore()
    }
  })

  it('an onPauseChange that throws is an observer problem', async () => {
    const logged = vi.spyOn(console, 'warn').mockImplementation(() => {})
    try {
      const { events, target } = await attach({
        onPauseChange: () => {
          throw new Error('pager is down')
        },
      })
      await t.asDeployer(devnet.addresses.router, 'function pauseDeposits()')
      await target.settle(settlementContext())
      await events.problem((problem) => problem.phase === 'observer')
      expect(events.problems.map(({ phase, error }) => [phase, error.message])).toEqual([
        ['observer', 'onPauseChange failed: pager is down'],
      ])
    } finally {
      logged.mockRestore()
    }
  })

  it('a sending key without ETH: the deposit problem names the account to fund', async () => {
    const { events, target } = await attach()
    const account = devnet.accounts.merchant.address
    await transferToMerchant(devnet, parseUsdc('10'))
    await t.testClient.setBalance({ address: account, value: 0n })
    await target.settle(settlementContext())
    await events.problem((problem) => problem.phase === 'deposit')
    const [problem] = events.problems
    expect(problem).toMatchObject({ phase: 'deposit', willRetry: false })
    expect(problem?.error.code).toBe('INSUFFICIENT_FUNDS_FOR_GAS')
    expect(problem?.error.details).toEqual({ account, chain: 'base-sepolia' })
    expect(problem?.error.message).toContain(
      `${account}, the key that sends every sweep, has too little ETH for gas on base-sepolia. Send it ETH`,
    )
  })
})
