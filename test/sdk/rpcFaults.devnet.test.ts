import { createPublicClient, createWalletClient } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  type CountingProxy,
  type RpcFault,
  startCountingProxy,
} from '../../harness/countingProxy.js'
import { type Devnet, startDevnet } from '../../src/devnet/startDevnet.js'
import { createVaultClient, parseUsdc, type VaultClient, vaultHttp } from '../../src/index.js'
import { devnetClients } from '../support/devnet.js'
import { expectVaultError } from '../support/expectVaultError.js'

// The SDK through `vaultHttp` behind a fault-injecting HTTP proxy in front of the devnet: reads,
// plans and writes. The RPC URL carries a provider-style key in its path and query.

const secret = /SECRETKEY|QUERYSECRET/
const transportConfig = { retryCount: 2, retryDelay: 20, timeout: 500 }
/** (retryCount + 1) × timeout plus backoff, with room for a loaded machine. */
const boundMs = 3 * transportConfig.timeout + 1_500

let devnet: Devnet
let t: ReturnType<typeof devnetClients>
let proxy: CountingProxy
let vault: VaultClient

beforeAll(async () => {
  devnet = await startDevnet({ chain: 'base-sepolia' })
  t = devnetClients(devnet)
  proxy = await startCountingProxy(devnet.rpcUrl)
  const transport = vaultHttp(`${proxy.url}/v2/SECRETKEY?apikey=QUERYSECRET`, transportConfig)
  const account = privateKeyToAccount(devnet.accounts.merchant.privateKey)
  vault = createVaultClient({
    publicClient: createPublicClient({ chain: devnet.viemChain, transport, pollingInterval: 50 }),
    walletClient: createWalletClient({ account, chain: devnet.viemChain, transport }),
    chain: 'base-sepolia',
    addresses: devnet.addresses,
  })
  // A position, so that a withdrawal plan takes its full path.
  await t.vault.ensureInitializedAndWait()
  await t.vault.depositAndWait({ amount: parseUsdc('100') })
})
afterEach(() => {
  proxy.setFault(undefined)
})
afterAll(async () => {
  await proxy?.close()
  await devnet?.stop()
})

const wallet = () => devnet.accounts.merchant.address
const operations: [string, () => Promise<unknown>][] = [
  ['verifyAddresses', () => vault.verifyAddresses()],
  ['getStatus', () => vault.getStatus()],
  ['getPosition', () => vault.getPosition({ wallet: wallet() })],
  ['planDeposit', () => vault.planDeposit({ wallet: wallet(), amount: parseUsdc('20') })],
  ['planWithdraw', () => vault.planWithdraw({ wallet: wallet(), amount: parseUsdc('5') })],
  ['depositAndWait', () => vault.depositAndWait({ amount: parseUsdc('20') })],
]

/** The merchant's USDC and shares, read past the proxy. */
async function holdings() {
  const [usdc, shares] = await Promise.all([
    t.readOnly.getUsdcBalance({ wallet: wallet() }),
    t.readOnly.getShareBalance({ wallet: wallet() }),
  ])
  return { usdc, shares }
}

/** Every string reachable from `value` through own properties, hidden ones included. */
function stringsIn(
  value: unknown,
  skip: readonly string[] = [],
  seen = new Set<unknown>(),
): string[] {
  if (typeof value === 'string') return [value]
  if (typeof value !== 'object' || value === null || seen.has(value)) return []
  seen.add(value)
  const strings: string[] = []
  for (const key of Reflect.ownKeys(value)) {
    if (typeof key === 'string' && skip.includes(key)) continue
    const descriptor = Object.getOwnPropertyDescriptor(value, key)
    strings.push(...stringsIn(descriptor?.value, skip, seen))
  }
  return strings
}

describe('RPC faults under the SDK', () => {
  const faults: [string, RpcFault, string][] = [
    [
      'HTTP 429 with a long Retry-After',
      { kind: 'status', status: 429, retryAfter: '3600' },
      'RPC_RATE_LIMITED',
    ],
    ['HTTP 500', { kind: 'status', status: 500 }, 'RPC_HTTP_ERROR'],
    ['malformed JSON', { kind: 'malformed-json' }, 'RPC_BAD_RESPONSE'],
    ['a reset connection', { kind: 'reset' }, 'RPC_UNREACHABLE'],
    ['a request that hangs past the timeout', { kind: 'hang' }, 'RPC_TIMEOUT'],
  ]

  /** Runs every operation under `fault`: each must fail retryably, in time, and lose nothing. */
  async function expectEveryOperationFails(fault: RpcFault, code: string) {
    const before = await holdings()
    proxy.setFault(fault)
    for (const [name, run] of operations) {
      const started = performance.now()
      const error = await expectVaultError(run(), code)
      const elapsed = performance.now() - started
      expect(error.category, name).toBe('rpc')
      expect(error.retryable, name).toBe(true)
      expect(elapsed, `${name} took ${Math.round(elapsed)} ms`).toBeLessThan(boundMs)
      // What a caller sees and logs; the hidden `rawCause` is the test further below.
      expect(stringsIn(error, ['rawCause']).join('\n'), name).not.toMatch(secret)
      expect(JSON.stringify(error.toJSON())).not.toMatch(secret)
    }
    proxy.setFault(undefined)
    expect(await holdings(), 'a failed write moved no money').toEqual(before)
  }

  it.each(faults)(
    '%s: reads, plans and writes fail with a retryable error in bounded time, lose nothing, and work once it clears',
    async (_name, fault, code) => {
      await expectEveryOperationFails(fault, code)
      const before = await holdings()
      for (const [name, run] of operations) await expect(run(), name).resolves.toBeDefined()
      const after = await holdings()
      expect(after.usdc).toBe(before.usdc - parseUsdc('20'))
      expect(after.shares).toBeGreaterThan(before.shares)
    },
  )

  // viem alone takes a JSON answer without `result` as an empty result (verification would fail as
  // UNKNOWN, reads as CONTRACT_NO_DATA); vaultHttp refuses an answer with neither `result` nor `error`.
  it('JSON that is not JSON-RPC: every operation fails with a retryable RPC_BAD_RESPONSE', () =>
    expectEveryOperationFails({ kind: 'not-json-rpc' }, 'RPC_BAD_RESPONSE'))

  // `0x` for eth_chainId, or as a filled transaction's gas, would reach viem's BigInt('0x'). (Reads
  // made of eth_call alone never see a number.)
  it('0x where a number is due: verification and writes fail with a retryable RPC_BAD_RESPONSE', async () => {
    proxy.setFault({ kind: 'empty-number' })
    for (const run of [
      () => vault.verifyAddresses(),
      () => vault.depositAndWait({ amount: parseUsdc('20') }),
    ]) {
      const error = await expectVaultError(run(), 'RPC_BAD_RESPONSE')
      expect(error.retryable).toBe(true)
    }
  })

  // viem's own errors carry the full RPC URL, key included, in their message, stack, `url` and cause:
  // the SDK's error keeps only a redacted summary, in no property at all, hidden ones included.
  it('no property of an RPC error, hidden ones included, holds the URL’s key', async () => {
    proxy.setFault({ kind: 'status', status: 500 })
    const error = await expectVaultError(vault.getStatus(), 'RPC_HTTP_ERROR')
    expect(stringsIn(error).join('\n')).not.toMatch(secret)
  })

  it('a send refused with 429 and Retry-After: 1 goes again after the wait and lands once', async () => {
    const before = await holdings()
    proxy.setFault(
      { kind: 'status', status: 429, retryAfter: '1' },
      { methods: ['eth_sendRawTransaction'], times: 1 },
    )
    const started = performance.now()
    const deposit = await vault.depositAndWait({ amount: parseUsdc('20') })
    expect(performance.now() - started).toBeGreaterThanOrEqual(950)
    const after = await holdings()
    expect(after.usdc).toBe(before.usdc - parseUsdc('20'))
    expect(after.shares).toBe(before.shares + deposit.sharesMinted)
  })

  it('a send whose connection drops is SEND_OUTCOME_UNKNOWN, not retryable; nothing is lost', async () => {
    const before = await holdings()
    proxy.setFault({ kind: 'reset' }, { methods: ['eth_sendRawTransaction'], times: 1 })
    // The client cannot tell a connection dropped before the node saw the transaction from one dropped
    // after: retrying the same deposit blindly could deposit twice, so the SDK says so.
    const error = await expectVaultError(
      vault.depositAndWait({ amount: parseUsdc('20') }),
      'SEND_OUTCOME_UNKNOWN',
    )
    expect(error.retryable).toBe(false)
    expect(error.message).toMatch(
      /may still be mined\. Check the account's transaction with nonce \d+/,
    )
    expect(error.details).toMatchObject({ from: t.merchant.address, rpcCode: 'RPC_UNREACHABLE' })
    expect(await holdings()).toEqual(before)
    const deposit = await vault.depositAndWait({ amount: parseUsdc('20') })
    expect(deposit.usdcAmount).toBe(parseUsdc('20'))
    expect((await holdings()).usdc).toBe(before.usdc - parseUsdc('20'))
  })
})
