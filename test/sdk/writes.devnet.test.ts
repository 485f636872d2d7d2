/**
 * Writes on the devnet under concurrency and interference: the per-account queue, a nonce taken by
 * another process with the same key, a permit used up between simulation and gas estimate, and a
 * write refused when its gas estimate fails, and a withdrawal whose block comes later than its gas
 * estimate assumed. "Another process" is a plain viem client with the same
 * key that a small fetch hook sends from at the chosen moment.
 */
import {
  type Account,
  type Address,
  createPublicClient,
  createWalletClient,
  type Hash,
  type Hex,
  http,
  isAddressEqual,
  parseSignature,
  type TransactionReceipt,
  toFunctionSelector,
} from 'viem'
import { nonceManager, privateKeyToAccount } from 'viem/accounts'
import { describe, expect, it, onTestFailed } from 'vitest'
import { gate, transferToMerchant } from '../../harness/merchant.js'
import type { Devnet } from '../../src/devnet/startDevnet.js'
import {
  createVaultClient,
  type DepositResult,
  parseUsdc,
  routerAbi,
  usdcAbi,
  vaultHttp,
} from '../../src/index.js'
import { permitTypes } from '../../src/sdk/abis/usdc.js'
import { type DevnetClients, useDevnet } from '../support/devnet.js'
import { expectVaultError } from '../support/expectVaultError.js'

let devnet: Devnet
let t: DevnetClients
useDevnet({ chain: 'base-sepolia' }, async (started, clients) => {
  devnet = started
  t = clients
  await t.vault.ensureInitializedAndWait()
})

type JsonRpcBody = { method: string; params?: unknown[] }

/** viem estimates gas with `eth_fillTransaction` where the node has it, else `eth_estimateGas`. */
const isGasEstimate = (method: string) =>
  method === 'eth_estimateGas' || method === 'eth_fillTransaction'

/**
 * A vault client for the merchant whose RPC traffic passes `hook` first (wallet client: sends;
 * public client: reads, simulations, estimates). `hook` runs once per request, before it is forwarded.
 */
function merchantVault(
  options: {
    account?: Account
    onSend?: (body: JsonRpcBody) => Promise<void>
    onRead?: (body: JsonRpcBody) => Promise<void>
    /** Runs when a read's answer has arrived. */
    onReadAnswered?: (body: JsonRpcBody) => void
    /** Answers a read in the node's place, when it returns a body. */
    answerRead?: (body: JsonRpcBody & { id?: number }) => object | undefined
  } = {},
) {
  const hooked = (
    hook: ((body: JsonRpcBody) => Promise<void>) | undefined,
    answered?: (body: JsonRpcBody) => void,
    answer?: (body: JsonRpcBody & { id?: number }) => object | undefined,
  ) => ({
    fetchFn: async (input: RequestInfo | URL, init?: RequestInit) => {
      const body = JSON.parse(String(init?.body)) as JsonRpcBody
      await hook?.(body)
      const instead = answer?.(body)
      const response = instead ? Response.json(instead) : await fetch(input, init)
      answered?.(body)
      return response
    },
  })
  const account = options.account ?? privateKeyToAccount(devnet.accounts.merchant.privateKey)
  return createVaultClient({
    publicClient: createPublicClient({
      chain: devnet.viemChain,
      pollingInterval: 50,
      transport: vaultHttp(
        devnet.rpcUrl,
        hooked(options.onRead, options.onReadAnswered, options.answerRead),
      ),
    }),
    walletClient: createWalletClient({
      account,
      chain: devnet.viemChain,
      pollingInterval: 50,
      transport: http(devnet.rpcUrl, hooked(options.onSend)),
    }),
    chain: 'base-sepolia',
    addresses: devnet.addresses,
  })
}

/** "Another process" with the merchant's key: plain viem, no SDK, no queue. */
function otherProcess() {
  return createWalletClient({
    account: privateKeyToAccount(devnet.accounts.merchant.privateKey),
    chain: devnet.viemChain,
    transport: http(devnet.rpcUrl),
  })
}

/** The other process with the merchant key sends `amount` USDC to the buyer, and it is mined. */
async function otherProcessSpends(amount: bigint) {
  const hash = await otherProcess().writeContract({
    address: devnet.addresses.usdc,
    abi: usdcAbi,
    functionName: 'transfer',
    args: [t.buyer.address, amount],
  })
  await t.publicClient.waitForTransactionReceipt({ hash })
}

/** Every transaction `from` sent since block `fromBlock`, with its receipt. */
async function receiptsFrom(from: Address, fromBlock: bigint): Promise<TransactionReceipt[]> {
  const latest = await t.publicClient.getBlockNumber({ cacheTime: 0 })
  const receipts: TransactionReceipt[] = []
  for (let number = fromBlock; number <= latest; number++) {
    const block = await t.publicClient.getBlock({ blockNumber: number, includeTransactions: true })
    for (const tx of block.transactions) {
      if (!isAddressEqual(tx.from, from)) continue
      receipts.push(await t.publicClient.getTransactionReceipt({ hash: tx.hash }))
    }
  }
  return receipts
}

const merchantNonce = () =>
  t.publicClient.getTransactionCount({ address: t.merchant.address, blockTag: 'latest' })

describe('concurrent writes from one account', () => {
  it.each([
    ['permit path', 'auto', false],
    ['permit path, with a nonceManager', 'auto', true],
    ['approve path', 'never', false],
    ['approve path, with a nonceManager', 'never', true],
  ] as const)(
    '5 concurrent depositAndWait (%s) all succeed; no transaction reverts',
    async (_path, permit, withNonceManager) => {
      const startBlock = (await t.publicClient.getBlockNumber({ cacheTime: 0 })) + 1n
      const amount = parseUsdc('20')
      // Five vault clients for one key, as five parts of one process would make them.
      const results = await Promise.all(
        Array.from({ length: 5 }, () => {
          const account = privateKeyToAccount(devnet.accounts.merchant.privateKey, {
            ...(withNonceManager ? { nonceManager } : {}),
          })
          return merchantVault({ account }).depositAndWait({ amount, permit })
        }),
      )

      expect(new Set(results.map((r: DepositResult) => r.txHash)).size).toBe(5)
      for (const result of results) {
        expect(result.method).toBe(permit === 'auto' ? 'depositWithPermit' : 'deposit')
        expect(result.usdcAmount).toBe(amount)
      }
      const receipts = await receiptsFrom(t.merchant.address, startBlock)
      expect(receipts).toHaveLength(permit === 'auto' ? 5 : 10)
      for (const receipt of receipts) expect(receipt.status).toBe('success')
      expect(await t.readOnly.getShareBalance({ wallet: t.merchant.address })).toBe(
        results.reduce((sum, r) => sum + r.sharesMinted, 0n),
      )
    },
  )

  it('deposit() returns the hash early but holds the account until its receipt', async () => {
    const startBlock = (await t.publicClient.getBlockNumber({ cacheTime: 0 })) + 1n
    const vault = merchantVault()
    const hashes = await Promise.all(
      Array.from({ length: 3 }, () => vault.deposit({ amount: parseUsdc('15') })),
    )
    for (const hash of hashes) {
      expect((await t.publicClient.waitForTransactionReceipt({ hash })).status).toBe('success')
    }
    const receipts = await receiptsFrom(t.merchant.address, startBlock)
    expect(receipts.map((r) => r.status)).toEqual(['success', 'success', 'success'])
  })
})

describe('another process with the same key', () => {
  it.each([false, true])(
    'takes the nonce between estimate and send: NONCE_CONFLICT, nothing sent, retry works (nonceManager %s)',
    async (withNonceManager) => {
      let injected: Hash | undefined
      // Where the test was when it failed (it timed out once in a full run: see onTestFailed).
      let stage = 'depositing'
      onTestFailed(async () => {
        const [latest, pending, pool] = await Promise.all([
          t.publicClient.getTransactionCount({ address: t.merchant.address, blockTag: 'latest' }),
          t.publicClient.getTransactionCount({ address: t.merchant.address, blockTag: 'pending' }),
          t.testClient.request({ method: 'txpool_content' } as never),
        ])
        console.error(
          `"takes the nonce" failed at "${stage}"; the other transaction ${injected}; the merchant's nonce ${latest} (pending ${pending}); the pool ${JSON.stringify(pool).slice(0, 2000)}`,
        )
      })
      const vault = merchantVault({
        account: privateKeyToAccount(devnet.accounts.merchant.privateKey, {
          ...(withNonceManager ? { nonceManager } : {}),
        }),
        onSend: async ({ method }) => {
          if (method !== 'eth_sendRawTransaction' || injected) return
          stage = 'the other process sends'
          injected = await otherProcess().sendTransaction({ to: t.buyer.address, value: 1n })
          stage = 'waiting for the other transaction'
          await t.publicClient.waitForTransactionReceipt({ hash: injected })
          stage = 'our send goes on'
        },
      })
      const nonceBefore = await merchantNonce()
      const error = await expectVaultError(
        vault.depositAndWait({ amount: parseUsdc('10') }),
        'NONCE_CONFLICT',
      )
      expect(error.retryable).toBe(true)
      expect(error.category).toBe('transaction')
      expect(error.message).toMatch(/Another sender used this account's transaction nonce/)
      expect(error.message).toContain('safe to retry')
      // Only the other process's transaction went through.
      expect(await merchantNonce()).toBe(nonceBefore + 1)
      expect(await t.readOnly.getShareBalance({ wallet: t.merchant.address })).toBe(0n)

      stage = 'the retry'
      const retried = await vault.depositAndWait({ amount: parseUsdc('10') })
      expect(retried.sharesMinted).toBeGreaterThan(0n)
    },
  )

  it('uses the permit nonce between simulation and gas estimate: falls back to approve then deposit', async () => {
    const depositWithPermit = toFunctionSelector(
      'depositWithPermit(uint256,address,uint256,uint8,bytes32,bytes32,uint256)',
    )
    let consumed = false
    const vault = merchantVault({
      onRead: async ({ method, params }) => {
        const data = (params?.[0] as { data?: string } | undefined)?.data
        if (!isGasEstimate(method) || consumed || !data?.startsWith(depositWithPermit)) return
        consumed = true
        await usePermitNonce()
      },
    })
    const result = await vault.depositAndWait({ amount: parseUsdc('25') })
    expect(consumed).toBe(true)
    expect(result.method).toBe('deposit')
    expect(result.approvalTxHash).toMatch(/^0x[0-9a-f]{64}$/)
    expect(result.usdcAmount).toBe(parseUsdc('25'))
  })

  it('moves the USDC away before the gas estimate: refused, nothing sent (INSUFFICIENT_USDC)', async () => {
    await t.vault.approveUsdcAndWait({ amount: parseUsdc('50') })
    const balance = await t.readOnly.getUsdcBalance({ wallet: t.merchant.address })
    let moved = false
    const vault = merchantVault({
      onRead: async ({ method }) => {
        if (!isGasEstimate(method) || moved) return
        moved = true
        await otherProcessSpends(balance - parseUsdc('1'))
      },
    })
    const nonceBefore = await merchantNonce()
    const error = await expectVaultError(
      vault.depositAndWait({ amount: parseUsdc('50') }),
      'INSUFFICIENT_USDC',
    )
    expect(error.message).toMatch(/^Deposit \(gas estimate\) failed/)
    expect(await merchantNonce()).toBe(nonceBefore + 1)
  })
})

describe('another process replaces a sent transaction in the pool', () => {
  /** A full block fetch: what viem's receipt wait scans for a replacement. */
  const isBlockScan = ({ method, params }: JsonRpcBody) =>
    method === 'eth_getBlockByNumber' && params?.[1] === true

  /**
   * Sends a 10 USDC deposit with the devnet not mining, lets its receipt wait poll twice while it is
   * pending, then has the other process replace it (`replace` makes the replacement from the pending
   * deposit) and mines the replacement and two more blocks, and lets the wait poll twice more, while
   * every block scan of the wait is held. viem's own wait handled only the last of the blocks that came
   * during a scan, missed the replacement, and held the account until its timeout (180 s by default).
   */
  async function replaceInPool(
    replace: (pending: PendingTransaction) => Promise<Hash>,
    options: { withoutSlotLookup?: boolean } = {},
  ) {
    await transferToMerchant(devnet, parseUsdc('10'))
    const scans = gate()
    let sent = false
    let receiptPolls = 0
    const polledPending = gate()
    let mined = false
    let answeredSinceMined = 0
    const polledAfterMining = gate()
    const vault = merchantVault({
      onSend: async ({ method }) => {
        if (method === 'eth_sendRawTransaction') sent = true
      },
      onRead: async (body) => {
        if (isBlockScan(body)) await scans.opened
      },
      // The second receipt poll: viem's wait had then looked the deposit up and seen it pending.
      onReadAnswered: ({ method }) => {
        if (sent && method === 'eth_getTransactionReceipt' && ++receiptPolls === 2) {
          polledPending.open()
        }
        if (mined && ++answeredSinceMined === 2) polledAfterMining.open()
      },
      answerRead: ({ method, id }) =>
        options.withoutSlotLookup && method === 'eth_getTransactionBySenderAndNonce'
          ? { jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } }
          : undefined,
    })
    await t.testClient.setAutomine(false)
    try {
      const result = vault.depositAndWait({ amount: parseUsdc('10'), timeout: 30_000 })
      result.catch(() => {})
      await polledPending.opened
      const pending = await pendingFromMerchant()
      const replacement = await replace(pending)
      await t.testClient.mine({ blocks: 3 })
      mined = true
      // The wait polls on (viem's learns of the three blocks) while its block scan is held.
      await polledAfterMining.opened
      scans.open()
      return { result, pending, replacement }
    } finally {
      scans.open()
      await t.testClient.setAutomine(true)
    }
  }

  it('by another write: NONCE_CONFLICT names the replacement, found at once, not at the timeout', async () => {
    const started = Date.now()
    const { result, pending, replacement } = await replaceInPool((pending) =>
      otherProcess().writeContract({
        address: devnet.addresses.usdc,
        abi: usdcAbi,
        functionName: 'transfer',
        args: [t.buyer.address, 1n],
        ...higherFees(pending),
      }),
    )
    const error = await expectVaultError(result, 'NONCE_CONFLICT')
    expect(error.details).toEqual({ txHash: pending.hash, replacedBy: replacement })
    expect(error.retryable).toBe(true)
    expect((await t.publicClient.getTransactionReceipt({ hash: replacement })).status).toBe(
      'success',
    )
    // The deposit's timeout is 30 s; the replacement is found within the polls after its block.
    expect(Date.now() - started).toBeLessThan(30_000)
  })

  it('by the same call with a higher fee (a fee bump): the deposit is the replacement, reported with its hash', async () => {
    const { result, replacement } = await replaceInPool((pending) =>
      otherProcess().sendTransaction({
        to: pending.to,
        data: pending.input,
        ...higherFees(pending),
      }),
    )
    const deposit = await result
    expect(deposit.txHash).toBe(replacement)
    expect(deposit.usdcAmount).toBe(parseUsdc('10'))
  })

  it('on a node without eth_getTransactionBySenderAndNonce: the block where the nonce was used is found', async () => {
    const { result, pending, replacement } = await replaceInPool(
      (pending) =>
        otherProcess().sendTransaction({ to: t.buyer.address, value: 1n, ...higherFees(pending) }),
      { withoutSlotLookup: true },
    )
    const error = await expectVaultError(result, 'NONCE_CONFLICT')
    expect(error.details).toEqual({ txHash: pending.hash, replacedBy: replacement })
  })
})

type PendingTransaction = {
  hash: Hash
  gas: bigint
  to: Address
  input: Hex
  nonce: number
  maxFeePerGas: bigint
}

/** The merchant's transaction in the pending block. */
async function pendingFromMerchant(): Promise<PendingTransaction> {
  const pool = await t.publicClient.getBlock({ blockTag: 'pending', includeTransactions: true })
  const ours = pool.transactions.find((tx) => isAddressEqual(tx.from, t.merchant.address))
  if (!ours?.to || ours.maxFeePerGas === undefined) throw new Error('no pending transaction')
  const { hash, gas, to, input, nonce, maxFeePerGas } = ours
  return { hash, gas, to, input, nonce, maxFeePerGas }
}

/** The pending transaction's nonce and gas with twice its fees: the node replaces it in the pool. */
function higherFees(pending: PendingTransaction) {
  return {
    nonce: pending.nonce,
    // Estimated on the pending state the deposit's USDC is already gone: the deposit's gas serves.
    gas: pending.gas,
    maxFeePerGas: pending.maxFeePerGas * 2n,
    maxPriorityFeePerGas: pending.maxFeePerGas * 2n,
  }
}

describe('the nonce is read no later than the state a write was decided on', () => {
  it('another process spends the USDC after the gas estimate, before the nonce read: NONCE_CONFLICT, nothing mined reverted', async () => {
    await t.vault.approveUsdcAndWait({ amount: parseUsdc('50') })
    const balance = await t.readOnly.getUsdcBalance({ wallet: t.merchant.address })
    const startBlock = (await t.publicClient.getBlockNumber({ cacheTime: 0 })) + 1n
    let estimateAnswered: () => void = () => {}
    const estimated = new Promise<void>((resolve) => {
      estimateAnswered = resolve
    })
    let moved = false
    const vault = merchantVault({
      onReadAnswered: ({ method }) => {
        if (isGasEstimate(method)) estimateAnswered()
      },
      onRead: async ({ method }) => {
        if (method !== 'eth_getTransactionCount' || moved) return
        // The estimate has passed on the old state; the other process's transfer is mined now,
        // before this nonce read reaches the node.
        moved = true
        await estimated
        await otherProcessSpends(balance - parseUsdc('1'))
      },
    })
    await expectVaultError(vault.depositAndWait({ amount: parseUsdc('50') }), 'NONCE_CONFLICT')
    expect(moved).toBe(true)
    // Only the other process's transfer was mined: the deposit, decided on the old balance, was not.
    const receipts = await receiptsFrom(t.merchant.address, startBlock)
    expect(receipts.map((receipt) => receipt.status)).toEqual(['success'])
  })
})

describe('block time that moves between the gas estimate and the block', () => {
  it('a withdrawal whose fee first falls due in between still has the gas for it', async () => {
    const buyer = privateKeyToAccount(devnet.accounts.buyer.privateKey)
    const plain = merchantVault({ account: buyer })
    await plain.ensureInitializedAndWait()
    const deposit = await plain.depositAndWait({ amount: parseUsdc('100') })
    const half = deposit.sharesMinted / 2n
    const { timestamp } = await t.publicClient.getBlock({ blockNumber: deposit.blockNumber })
    // The estimate sees the second after the deposit: no yield yet, so no fee to pay. The block comes
    // an hour later, when the yield is worth a fee: a transfer to the treasury the estimate never paid.
    await t.testClient.setNextBlockTimestamp({ timestamp: timestamp + 1n })
    const exact = await t.publicClient.estimateContractGas({
      account: buyer,
      address: devnet.addresses.router,
      abi: routerAbi,
      functionName: 'withdraw',
      args: [half, buyer.address, 0n],
    })
    const vault = merchantVault({
      account: buyer,
      onSend: async (body) => {
        if (body.method !== 'eth_sendRawTransaction') return
        await t.testClient.setNextBlockTimestamp({ timestamp: timestamp + 3600n })
      },
    })
    const withdrawal = await vault.withdrawAndWait({ shares: half })
    expect(withdrawal.feePaid).toBeGreaterThan(0n)
    const receipt = await t.publicClient.getTransactionReceipt({ hash: withdrawal.txHash })
    // The premise: sent with its exact estimate, this withdrawal would have run out of gas.
    expect(receipt.gasUsed).toBeGreaterThan(exact)
  })
})

/** Signs and submits a zero-value permit from the merchant to the buyer: the merchant's permit nonce moves on. */
async function usePermitNonce() {
  const merchant = privateKeyToAccount(devnet.accounts.merchant.privateKey)
  const nonce = await t.publicClient.readContract({
    address: devnet.addresses.usdc,
    abi: usdcAbi,
    functionName: 'nonces',
    args: [merchant.address],
  })
  const deadline = 2n ** 40n
  const signature = await merchant.signTypedData({
    // The vault's USDC on Base Sepolia is Aave's test token: "USDC", EIP-712 version "1".
    domain: {
      name: 'USDC',
      version: '1',
      chainId: devnet.chainId,
      verifyingContract: devnet.addresses.usdc,
    },
    types: permitTypes,
    primaryType: 'Permit',
    message: { owner: merchant.address, spender: t.buyer.address, value: 0n, nonce, deadline },
  })
  const { v, r, s } = parseSignature(signature)
  const hash = await t.walletFor(t.buyer).writeContract({
    address: devnet.addresses.usdc,
    abi: usdcAbi,
    functionName: 'permit',
    args: [merchant.address, t.buyer.address, 0n, deadline, Number(v), r, s],
  })
  await t.publicClient.waitForTransactionReceipt({ hash })
}
