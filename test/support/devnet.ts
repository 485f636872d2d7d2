/**
 * A devnet for a test file (`useDevnet`) and the clients the SDK tests drive it with: the merchant's
 * counted vault client, a read-only client and anvil's test client.
 */
import {
  type Account,
  type Address,
  type Chain,
  createPublicClient,
  createTestClient,
  createWalletClient,
  type Hash,
  type Hex,
  http,
  type PublicClient,
  parseAbi,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { getTransaction, waitForTransactionReceipt } from 'viem/actions'
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest'
import { type CountingProxy, startCountingProxy } from '../../harness/countingProxy.js'
import { approvePermit2Once, type MerchantRpc, watchMerchantRpc } from '../../harness/merchant.js'
import { RequestCounter } from '../../harness/requestCounter.js'
import { type Devnet, type StartDevnetOptions, startDevnet } from '../../src/devnet/startDevnet.js'
import {
  createVaultClient,
  parseUsdc,
  type VaultAddresses,
  type VaultChainName,
  vaultHttp,
} from '../../src/index.js'
import type { SentTransaction } from '../../src/sdk/internal/waitForNonceSlot.js'
import { withGasMargin } from '../../src/sdk/internal/write.js'
import { nodeHttpFetch } from '../../src/sdk/shared.js'

/** Everything a devnet test needs: counted clients for the merchant, a read-only client, knobs. */
export function devnetClients(devnet: Devnet) {
  const counter = new RequestCounter()
  const chain: Chain = devnet.viemChain
  const publicClient = createPublicClient({
    chain,
    pollingInterval: 50,
    transport: vaultHttp(devnet.rpcUrl, { fetchFn: counter.fetchFn, retryDelay: 50 }),
  })
  const merchant = privateKeyToAccount(devnet.accounts.merchant.privateKey)
  const buyer = privateKeyToAccount(devnet.accounts.buyer.privateKey)
  const deployer = privateKeyToAccount(devnet.accounts.deployer.privateKey)
  const walletFor = (account: Account) =>
    createWalletClient({
      account,
      chain,
      pollingInterval: 50,
      transport: http(devnet.rpcUrl, { fetchFn: nodeHttpFetch }),
    })
  const merchantWallet = walletFor(merchant)
  const vaultFor = (
    walletClient?: ReturnType<typeof walletFor>,
    addresses?: Partial<VaultAddresses>,
  ) =>
    createVaultClient({
      publicClient,
      walletClient,
      chain: devnet.chain as VaultChainName,
      addresses: { ...devnet.addresses, ...addresses },
    })
  const vault = vaultFor(merchantWallet)
  const readOnly = vaultFor()
  const testClient = createTestClient({
    mode: 'anvil',
    chain,
    transport: http(devnet.rpcUrl, { fetchFn: nodeHttpFetch }),
  })
  const deployerWallet = walletFor(deployer)

  /** Sends an owner-only devnet knob (or any call) from the deployer and waits for it. */
  async function asDeployer(address: Address, signature: string, args: readonly unknown[] = []) {
    const abi = parseAbi([signature])
    const name = signature.slice('function '.length, signature.indexOf('('))
    const call = { account: deployer, address, abi, functionName: name, args } as never
    // Like the SDK, leave gas headroom: interest accrues between the estimate and the block.
    const gas = withGasMargin(await publicClient.estimateContractGas(call))
    const hash = await deployerWallet.writeContract({ ...(call as object), gas } as never)
    const receipt = await waitForTransactionReceipt(publicClient, { hash })
    expect(receipt.status).toBe('success')
  }
  /** Sends a raw transaction (a plan's) from an account and returns its receipt status. */
  async function send(account: Account, tx: { to: Address; data: Hex; value: bigint }) {
    // Like the SDK, leave gas headroom: interest accrues between the estimate and the block.
    const gas = await publicClient.estimateGas({
      account,
      to: tx.to,
      data: tx.data,
      value: tx.value,
    })
    const hash = await walletFor(account).sendTransaction({
      to: tx.to,
      data: tx.data,
      value: tx.value,
      gas: withGasMargin(gas),
    })
    return waitForTransactionReceipt(publicClient, { hash })
  }

  return {
    counter,
    publicClient,
    merchant,
    buyer,
    deployer,
    walletFor,
    vaultFor,
    vault,
    readOnly,
    testClient,
    asDeployer,
    send,
  }
}

/** What {@link devnetClients} returns. */
export type DevnetClients = ReturnType<typeof devnetClients>

/**
 * One devnet for the enclosing file or `describe`, with chain state reset around every test (an anvil
 * snapshot before it, reverted after it).
 *
 * @param options - `startDevnet`'s options.
 * @param ready - Runs once the devnet is up, before the first snapshot: keep the devnet and clients,
 *   and set up what every test starts from.
 */
export function useDevnet(
  options: StartDevnetOptions,
  ready: (devnet: Devnet, clients: DevnetClients) => Promise<unknown> | undefined,
): void {
  let devnet: Devnet | undefined
  let clients: DevnetClients
  let snapshot: Hex
  beforeAll(async () => {
    devnet = await startDevnet(options)
    clients = devnetClients(devnet)
    await ready(devnet, clients)
  })
  afterAll(async () => {
    await devnet?.stop()
  })
  beforeEach(async () => {
    snapshot = await clients.testClient.snapshot()
  })
  afterEach(async () => {
    await clients.testClient.revert({ id: snapshot })
  })
}

/** What {@link useMerchantDevnet} hands the seller tests. */
export type MerchantDevnet = {
  devnet: Devnet
  t: DevnetClients
  /** In front of the devnet's RPC: the merchant's clients in the tests send through `proxy.url`. */
  proxy: CountingProxy
  /** The merchant's RPC traffic at the proxy, with the rule that holds or fails it. */
  rpc: MerchantRpc
}

/**
 * {@link useDevnet} for the seller tests: the merchant registered once before the first test, as the
 * README asks of a deployment (so no test measures a registration), the devnet's buyer a regular one
 * (on Base Sepolia it has approved Permit2 once, so its payments can run concurrently), and a proxy in
 * front of the devnet's RPC that watches the merchant's traffic; it closes after the file.
 *
 * @param options - `startDevnet`'s options.
 * @param ready - Runs once all is up, before the first snapshot: keep what the tests use.
 * @example
 * useMerchantDevnet({ chain: 'base-sepolia' }, (m) => ({ devnet, t, proxy, rpc } = m))
 */
export function useMerchantDevnet(
  options: StartDevnetOptions,
  ready: (merchant: MerchantDevnet) => Promise<unknown> | unknown,
): void {
  let proxy: CountingProxy | undefined
  useDevnet(options, async (devnet, t) => {
    proxy = await startCountingProxy(devnet.rpcUrl)
    const rpc = watchMerchantRpc(proxy, devnet)
    await t.vault.ensureInitializedAndWait()
    await approvePermit2Once(devnet)
    await ready({ devnet, t, proxy, rpc })
  })
  afterAll(() => proxy?.close())
}

/**
 * Gives the merchant a position (200 USDC deposited) and an allowance for the router (100 USDC), so
 * that every plan the MCP tools make (withdrawals, deposits with and without an approval step) can take
 * its full path.
 *
 * @param devnet - A devnet whose merchant holds at least 200 USDC.
 */
export async function giveMerchantPositionAndAllowance(devnet: Devnet): Promise<void> {
  const t = devnetClients(devnet)
  await t.vault.ensureInitializedAndWait()
  await t.vault.depositAndWait({ amount: parseUsdc('200') })
  await t.vault.approveUsdcAndWait({ amount: parseUsdc('100') })
}

/** What `waitForSuccess` needs of a transaction sent outside the SDK: its hash, sender and nonce. */
export async function sentTransaction(client: PublicClient, hash: Hash): Promise<SentTransaction> {
  const { from, nonce } = await getTransaction(client, { hash })
  return { hash, from, nonce }
}
