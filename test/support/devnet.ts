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
import { type Devnet, type StartDevnetOptions, startDevnet } from '../../src/devnet/startDevnet.js'
import {
  createVaultClient,
  type VaultAddresses,
  type VaultChainName,
  vaultHttp,
} from '../../src/index.js'
import { type SentTransaction, withGasMargin } from '../../src/sdk/internal/write.js'
import { RequestCounter } from './requestCounter.js'

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
    createWalletClient({ account, chain, pollingInterval: 50, transport: http(devnet.rpcUrl) })
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
  const testClient = createTestClient({ mode: 'anvil', chain, transport: http(devnet.rpcUrl) })
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

/** What `waitForSuccess` needs of a transaction sent outside the SDK: its hash, sender and nonce. */
export async function sentTransaction(client: PublicClient, hash: Hash): Promise<SentTransaction> {
  const { from, nonce } = await getTransaction(client, { hash })
  return { hash, from, nonce }
}
