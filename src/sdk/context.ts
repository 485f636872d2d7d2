import type { Account, Chain, Client, Transport } from 'viem'
import type { VaultAddresses, VaultChainName, VaultNetwork } from './chains.js'

/** Any viem client that can read: a `PublicClient`, or a wallet client extended with public actions. */
export type VaultPublicClient = Client<Transport, Chain | undefined>

/** Any viem client that can sign and send: a `WalletClient` (with or without a hoisted account). */
export type VaultWalletClient = Client<Transport, Chain | undefined, Account | undefined>

/**
 * What every vault action needs: the clients, the chain and the deployment's addresses.
 * A `VaultClient` is one; actions imported on their own take one as their first argument.
 */
export type VaultContext = {
  /** The client used for every read, plan and simulation. */
  readonly publicClient: VaultPublicClient
  /** The client used to sign and send; absent on a read-only client. */
  readonly walletClient: VaultWalletClient | undefined
  /** The chain's name in `vaultChains`, such as `'base-sepolia'`. */
  readonly chain: VaultChainName
  /** The chain's id, such as 84532. */
  readonly chainId: number
  /** The x402 network id, `eip155:<chainId>`. */
  readonly network: VaultNetwork
  /** The deployment's contracts (the built-in registry, with any override applied). */
  readonly addresses: Readonly<VaultAddresses>
  /** viem's definition of the chain (used as `chain` for writes when the wallet client has none). */
  readonly viemChain: Chain
}
