/**
 * Shared parts of the seller tests and the bench (so nothing here imports vitest): the merchant's
 * vault client (its RPC traffic through a proxy that records it, counts the sweeps' reads and injects
 * faults), the sweeper's callbacks as promises to wait on, and chain reads (balances, the merchant's
 * transactions, its deposits).
 */
import { createPermit2ApprovalTx } from '@x402/evm'
import {
  type Address,
  createPublicClient,
  createWalletClient,
  decodeFunctionData,
  type Hash,
  type Hex,
  http,
  isAddressEqual,
  parseAbi,
  parseEventLogs,
  type TransactionReceipt,
  toFunctionSelector,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import type { Devnet } from '../src/devnet/startDevnet.js'
import {
  createVaultClient,
  type IdleDeposit,
  routerAbi,
  type SweeperProblem,
  usdcAbi,
  type VaultClient,
  vaultHttp,
} from '../src/index.js'
import { multicall3Abi } from '../src/sdk/abis/venues.js'
import type { CountingProxy, Interceptor, RpcCall } from './countingProxy.js'

/**
 * The merchant's vault client with every request going through `rpcUrl` (a proxy in front of the
 * devnet). No transport retries: a fault the test injects reaches the sweeper as it is. `timeout`
 * (ms per request) is short in tests where the RPC hangs.
 */
export function merchantVault(
  devnet: Devnet,
  rpcUrl: string,
  { timeout }: { timeout?: number } = {},
): VaultClient {
  const chain = devnet.viemChain
  const account = privateKeyToAccount(devnet.accounts.merchant.privateKey)
  return createVaultClient({
    publicClient: createPublicClient({
      chain,
      pollingInterval: 50,
      transport: vaultHttp(rpcUrl, { retryCount: 0, ...(timeout ? { timeout } : {}) }),
    }),
    walletClient: createWalletClient({
      account,
      chain,
      pollingInterval: 50,
      transport: http(rpcUrl, { retryCount: 0, ...(timeout ? { timeout } : {}) }),
    }),
    chain: devnet.chain,
    addresses: devnet.addresses,
  })
}

const totalSupplySelector = toFunctionSelector('totalSupply()')

/** Whether a JSON-RPC call sends a signed transaction (a sweep's deposit). */
export const isSend = (call: RpcCall) => call.method === 'eth_sendRawTransaction'

/**
 * Whether a JSON-RPC call is a sweep's read: the Multicall3 `eth_call` that reads, among the rest, the
 * share token's `totalSupply()` (no other merchant read asks for it).
 */
export function isSweepRead(call: RpcCall, devnet: Devnet): boolean {
  if (call.method !== 'eth_call') return false
  const data = (call.params?.[0] as { data?: Hex; input?: Hex } | undefined)?.data
  if (!data) return false
  try {
    const { functionName, args } = decodeFunctionData({ abi: multicall3Abi, data })
    if (functionName !== 'aggregate3') return false
    return (args[0] as readonly { target: Address; callData: Hex }[]).some(
      (inner) =>
        isAddressEqual(inner.target, devnet.addresses.shareToken) &&
        inner.callData === totalSupplySelector,
    )
  } catch {
    return false
  }
}

/**
 * Watches the merchant's RPC traffic at its proxy: records every call in order (and, apart, the ones
 * answered), counts the sweeps'
 * reads, and lets a rule decide the fate of each request (hold it, fail it with an HTTP status, or
 * forward it). A request a rule fails or holds is recorded too: the sweeper tried it.
 */
export function watchMerchantRpc(proxy: CountingProxy, devnet: Devnet) {
  const calls: RpcCall[] = []
  const answered: RpcCall[] = []
  const waiters: (() => void)[] = []
  const notify = () => {
    for (const waiter of waiters.splice(0)) waiter()
  }
  let rule: Interceptor | undefined
  proxy.setInterceptor((batch) => {
    calls.push(...batch)
    notify()
    return rule?.(batch)
  })
  proxy.setAnsweredListener((batch) => {
    answered.push(...batch)
    notify()
  })
  const sweepReads = () => calls.filter((call) => isSweepRead(call, devnet)).length
  return {
    calls,
    /** The calls the devnet has answered, in the order it answered them. */
    answered,
    /** Sweep reads seen so far. */
    sweepReads,
    /** Resolves once the calls seen satisfy `condition`. */
    until(condition: () => boolean): Promise<void> {
      return new Promise((resolve) => {
        const check = () => (condition() ? resolve() : waiters.push(check))
        check()
      })
    },
    /** Position of the first call at or after `from` that matches, or -1. */
    indexOf(match: (call: RpcCall) => boolean, from = 0): number {
      const index = calls.slice(from).findIndex(match)
      return index === -1 ? -1 : from + index
    },
    setRule(next: Interceptor | undefined) {
      rule = next
    },
  }
}

/** What {@link watchMerchantRpc} returns. */
export type MerchantRpc = ReturnType<typeof watchMerchantRpc>

/** A promise to hold requests with, and the function that lets them go. */
export function gate() {
  let open = () => {}
  const opened = new Promise<void>((resolve) => {
    open = resolve
  })
  return { opened, open }
}

/**
 * The sweeper's callbacks, recorded, with promises to wait on them. Waiting is bounded by the test's
 * own timeout; nothing sleeps.
 */
export function sweepEvents() {
  const deposits: IdleDeposit[] = []
  const problems: SweeperProblem[] = []
  const waiters: (() => void)[] = []
  const notify = () => {
    for (const waiter of waiters.splice(0)) waiter()
  }
  const until = (condition: () => boolean): Promise<void> =>
    condition()
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          const check = () => (condition() ? resolve() : waiters.push(check))
          waiters.push(check)
        })
  return {
    deposits,
    problems,
    onIdleDeposit: (deposit: IdleDeposit) => {
      deposits.push(deposit)
      notify()
    },
    onNonFatalError: (problem: SweeperProblem) => {
      problems.push(problem)
      notify()
    },
    /** Resolves once `count` deposits have been reported. */
    deposited: (count = 1) => until(() => deposits.length >= count),
    /** Resolves once a problem matching `match` has been reported. */
    problem: (match: (problem: SweeperProblem) => boolean) => until(() => problems.some(match)),
    until,
  }
}

/**
 * Lets every timer already due run: Node fires timers of the same delay in the order they were set,
 * so a sweep a hook scheduled with `debounceMs: 0` has started (and joined the write queue) when this
 * resolves.
 */
export const timersTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 0))

const erc20 = parseAbi(['function balanceOf(address) view returns (uint256)'])

/** Reads a USDC balance. */
export function usdcBalance(devnet: Devnet, owner: Address): Promise<bigint> {
  return readClient(devnet).readContract({
    address: devnet.addresses.usdc,
    abi: erc20,
    functionName: 'balanceOf',
    args: [owner],
  })
}

/** Sends test USDC from the buyer straight to the merchant (no payment) and waits for it. */
export async function transferToMerchant(devnet: Devnet, amount: bigint): Promise<Hash> {
  const buyer = createWalletClient({
    account: privateKeyToAccount(devnet.accounts.buyer.privateKey),
    chain: devnet.viemChain,
    transport: http(devnet.rpcUrl),
  })
  const hash = await buyer.writeContract({
    address: devnet.addresses.usdc,
    abi: usdcAbi,
    functionName: 'transfer',
    args: [devnet.accounts.merchant.address, amount],
  })
  await readClient(devnet).waitForTransactionReceipt({ hash })
  return hash
}

/** Every transaction `from` sent in blocks `fromBlock` onwards, with its receipt. */
export async function receiptsFrom(
  devnet: Devnet,
  from: Address,
  fromBlock: bigint,
): Promise<TransactionReceipt[]> {
  const client = readClient(devnet)
  const latest = await client.getBlockNumber({ cacheTime: 0 })
  const receipts: TransactionReceipt[] = []
  for (let number = fromBlock; number <= latest; number++) {
    const block = await client.getBlock({ blockNumber: number, includeTransactions: true })
    for (const tx of block.transactions) {
      if (isAddressEqual(tx.from, from))
        receipts.push(await client.getTransactionReceipt({ hash: tx.hash }))
    }
  }
  return receipts
}

/** The USDC the router's `Deposited` logs in `receipts` say `wallet` deposited. */
export function depositedIn(
  devnet: Devnet,
  receipts: TransactionReceipt[],
  wallet: Address,
): bigint[] {
  return receipts.flatMap((receipt) =>
    receipt.logs
      .filter((log) => isAddressEqual(log.address, devnet.addresses.router))
      .flatMap((log) => {
        const [event] = parseEventLogs({ abi: routerAbi, eventName: 'Deposited', logs: [log] })
        return event && isAddressEqual(event.args.wallet, wallet) ? [event.args.usdcAmount] : []
      }),
  )
}

const readClients = new Map<string, ReturnType<typeof createPublicClient>>()
function readClient(devnet: Devnet) {
  let client = readClients.get(devnet.rpcUrl)
  if (!client) {
    client = createPublicClient({
      chain: devnet.viemChain,
      pollingInterval: 50,
      transport: http(devnet.rpcUrl),
    })
    readClients.set(devnet.rpcUrl, client)
  }
  return client
}

/**
 * What a buyer who pays often does once on a chain where x402 pays the vault's USDC through Permit2 (Base
 * Sepolia, and for `upto` every chain): approves Permit2 for all of it, one transaction. Concurrent
 * payments then need nothing more; a sponsored EIP-2612 permit covers one payment at a time. On Base an
 * `exact` (or batch-settlement) payment is EIP-3009's: there is nothing to do.
 *
 * @param devnet - The devnet.
 * @param privateKey - The buyer's key; default the devnet's buyer.
 * @param scheme - How the buyer pays: `upto` pays through Permit2 on Base too.
 * @example
 * await approvePermit2Once(devnet)
 */
export async function approvePermit2Once(
  devnet: Devnet,
  privateKey: Hex = devnet.accounts.buyer.privateKey,
  scheme: 'exact' | 'upto' = 'exact',
): Promise<void> {
  if (devnet.chain !== 'base-sepolia' && scheme !== 'upto') return
  const wallet = createWalletClient({
    account: privateKeyToAccount(privateKey),
    chain: devnet.viemChain,
    transport: http(devnet.rpcUrl),
  })
  const hash = await wallet.sendTransaction(createPermit2ApprovalTx(devnet.addresses.usdc))
  const receipt = await readClient(devnet).waitForTransactionReceipt({ hash })
  if (receipt.status !== 'success') throw new Error('the Permit2 approval reverted')
}
