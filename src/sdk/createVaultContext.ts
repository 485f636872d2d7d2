import {
  chainChoices,
  isVaultChainName,
  networkOf,
  type VaultAddresses,
  type VaultChainName,
  vaultAddressKeys,
  vaultChains,
} from './chains.js'
import type { VaultContext, VaultPublicClient, VaultWalletClient } from './context.js'
import { VaultConfigError, VaultValidationError } from './errors/classes.js'
import { evmAddress } from './money.js'

export type CreateVaultContextParameters = {
  /** Any viem client that can read (a `PublicClient`). Its chain, if set, must be `chain`. */
  publicClient: VaultPublicClient
  /** A viem `WalletClient`, needed only for writes. Its chain, if set, must be `chain`. */
  walletClient?: VaultWalletClient | undefined
  /** Which deployment: a name of `vaultChains`, such as `'base-sepolia'`. */
  chain: VaultChainName
  /**
   * Overrides the built-in addresses (`vaultChains[chain].addresses`), field by field: a private deployment or the
   * devnet. Each is checked and checksummed.
   */
  addresses?: Partial<VaultAddresses> | undefined
}

/**
 * Checks a vault client's configuration and returns its context: the clients, chain, network and
 * addresses, with no actions bound. Every action takes a context as its first argument, so a caller
 * that must never reach a write (the MCP server) builds one with only a public client.
 *
 * It fails fast (`CHAIN_MISMATCH`) when a client's chain differs from `chain`, and checks and checksums
 * every address override.
 *
 * @param parameters - `publicClient`, `walletClient?`, `chain`, `addresses?`.
 * @returns The frozen context.
 * @throws {VaultConfigError} `UNKNOWN_CHAIN`, `CHAIN_MISMATCH`; {VaultValidationError} `INVALID_ADDRESS`.
 * @example
 * const vault = createVaultContext({ publicClient, chain: 'base-sepolia' })
 * const status = await getStatus(vault)
 */
export function createVaultContext(parameters: CreateVaultContextParameters): VaultContext {
  const { publicClient, walletClient, chain } = parameters
  const entry = isVaultChainName(chain) ? vaultChains[chain] : undefined
  if (!entry) {
    // A string first: turning any other value into a message can itself throw.
    const shown =
      typeof chain === 'string' ? JSON.stringify(chain) : `(${typeof chain}, not a string)`
    throw new VaultConfigError(`Unknown chain ${shown}: use ${chainChoices()}.`, {
      code: 'UNKNOWN_CHAIN',
      details: { chain: typeof chain === 'string' ? chain : typeof chain },
    })
  }
  if (!publicClient || typeof publicClient.request !== 'function') {
    throw new VaultValidationError('publicClient must be a viem client (createPublicClient).', {
      code: 'INVALID_ARGUMENT',
    })
  }
  for (const [name, client] of [
    ['publicClient', publicClient],
    ['walletClient', walletClient],
  ] as const) {
    const id = client?.chain?.id
    if (id !== undefined && id !== entry.chainId) {
      throw new VaultConfigError(
        `${name} is on chain ${id}, but the vault client is for ${chain} (${entry.chainId}).`,
        {
          code: 'CHAIN_MISMATCH',
          details: { field: `${name}.chain.id`, expected: entry.chainId, actual: id },
        },
      )
    }
  }
  const addresses = resolveAddresses(entry.addresses, parameters.addresses)
  const context: VaultContext = Object.freeze({
    publicClient,
    walletClient,
    chain,
    chainId: entry.chainId,
    network: networkOf(chain),
    addresses,
    viemChain: publicClient.chain ?? walletClient?.chain ?? entry.viemChain,
  })
  return context
}

function resolveAddresses(
  defaults: VaultAddresses,
  overrides: Partial<VaultAddresses> | undefined,
): Readonly<VaultAddresses> {
  if (overrides !== undefined && (typeof overrides !== 'object' || overrides === null)) {
    throw new VaultValidationError('`addresses` must be an object of contract addresses.', {
      code: 'INVALID_ADDRESS',
    })
  }
  const result = { ...defaults }
  for (const key of Object.keys(overrides ?? {})) {
    if (!(vaultAddressKeys as readonly string[]).includes(key)) {
      throw new VaultValidationError(
        `Unknown address field ${JSON.stringify(key)} in \`addresses\`: expected ${vaultAddressKeys.join(', ')}.`,
        { code: 'INVALID_ARGUMENT', details: { field: key } },
      )
    }
  }
  for (const key of vaultAddressKeys) {
    const value = overrides?.[key]
    if (value === undefined) continue
    try {
      result[key] = evmAddress(value)
    } catch (error) {
      throw new VaultValidationError(`addresses.${key}: ${(error as Error).message}`, {
        code: 'INVALID_ADDRESS',
        details: { field: `addresses.${key}` },
      })
    }
  }
  return Object.freeze(result)
}
