import { createPublicClient } from 'viem'
import {
  createVaultContext,
  loadVaultAddresses,
  type VaultChainName,
  type VaultContext,
  VaultError,
  vaultChains,
  vaultHttp,
} from '../index.js'
import { redactUrl } from '../sdk/shared.js'
import { UsageError } from './usageError.js'

/** The environment variable that holds each chain's RPC URL. */
export const rpcUrlVariables = {
  base: 'BASE_MAINNET_RPC_URL',
  'base-sepolia': 'BASE_SEPOLIA_RPC_URL',
} as const satisfies Record<VaultChainName, string>

/** The chains' public RPCs, used by read-only commands when no RPC URL is given. */
export const publicRpcUrls = {
  base: 'https://mainnet.base.org',
  'base-sepolia': 'https://sepolia.base.org',
} as const satisfies Record<VaultChainName, string>

/** The common options of the commands that talk to a deployment. */
export const connectionOptions = {
  chain: { type: 'string', default: 'base-sepolia' },
  rpc: { type: 'string' },
  addresses: { type: 'string' },
} as const

/**
 * Checks `--chain`.
 *
 * @throws {UsageError} For anything but `base-sepolia` or `base`.
 */
export function chainOption(text: string): VaultChainName {
  if (text !== 'base-sepolia' && text !== 'base') {
    throw new UsageError(`--chain must be base-sepolia or base, not ${JSON.stringify(text)}.`)
  }
  return text
}

/**
 * The RPC URL: `--rpc`, else the chain's environment variable, else (when `fallback` is set) the chain's
 * public RPC. Only http(s) URLs are accepted; a bad one is named without its path or query, where
 * providers put API keys.
 *
 * @throws {UsageError} When there is none and no fallback, or it is not an http(s) URL.
 */
export function rpcUrlOption(
  chain: VaultChainName,
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  options: { fallbackToPublic: boolean },
): string {
  const variable = rpcUrlVariables[chain]
  const url = flag || env[variable] || (options.fallbackToPublic ? publicRpcUrls[chain] : undefined)
  if (!url) throw new UsageError(`Set ${variable} (or pass --rpc <url>) to reach ${chain}.`)
  let protocol: string
  try {
    protocol = new URL(url).protocol
  } catch {
    throw new UsageError(`The RPC URL is not a URL (${flag ? '--rpc' : variable}).`)
  }
  if (protocol !== 'http:' && protocol !== 'https:') {
    throw new UsageError(
      `The RPC URL must be http(s), not ${redactUrl(url)} (${flag ? '--rpc' : variable}).`,
    )
  }
  return url
}

/**
 * A read-only vault context for a command: the chain, its RPC, and the built-in addresses or those of
 * `--addresses` (an addresses file such as `x402-vault devnet` writes).
 *
 * @throws {UsageError} When the addresses file is missing or malformed (the message names the key).
 */
export async function connectReadOnly(
  chain: VaultChainName,
  rpcUrl: string,
  addressesPath: string | undefined,
): Promise<VaultContext> {
  let addresses: Awaited<ReturnType<typeof loadVaultAddresses>> | undefined
  if (addressesPath !== undefined) {
    try {
      addresses = await loadVaultAddresses(addressesPath, { chain })
    } catch (error) {
      if (error instanceof VaultError) throw new UsageError(error.message)
      throw error
    }
  }
  return createVaultContext({
    publicClient: createPublicClient({
      chain: vaultChains[chain].viemChain,
      transport: vaultHttp(rpcUrl),
    }),
    chain,
    addresses,
  })
}
