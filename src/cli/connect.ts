import { type Account, createPublicClient, createWalletClient } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { getChainId, getCode } from 'viem/actions'
import {
  createVaultContext,
  loadVaultAddresses,
  parseUsdc,
  type VaultChainName,
  VaultConfigError,
  type VaultContext,
  VaultError,
  vaultChains,
  vaultHttp,
} from '../index.js'
import {
  chainChoices,
  defaultChainName,
  isVaultChainName,
  nodeHttpFetch,
  publicRpcUrlOf,
  redactUrl,
  toVaultError,
} from '../sdk/shared.js'
import { UsageError } from './usageError.js'

/**
 * The common options of the commands that talk to a deployment. `--chain` and `--addresses` default to
 * `VAULT_CHAIN` and `VAULT_ADDRESSES`, as the MCP server reads them (and `x402-vault devnet` prints
 * them): see {@link chainOption} and {@link addressesOption}.
 */
export const connectionOptions = {
  chain: { type: 'string' },
  rpc: { type: 'string' },
  addresses: { type: 'string' },
} as const

/**
 * The chain: `--chain`, else `VAULT_CHAIN`, else the default chain (`base-sepolia`).
 *
 * @throws {UsageError} For a name not in the chain table, naming where it came from.
 */
export function chainOption(flag: string | undefined, env: NodeJS.ProcessEnv = {}): VaultChainName {
  const text = flag ?? (env.VAULT_CHAIN || defaultChainName)
  if (!isVaultChainName(text)) {
    const source = flag === undefined ? 'VAULT_CHAIN' : '--chain'
    throw new UsageError(
      `${source} must be ${chainChoices((chain) => chain.name)}, not ${JSON.stringify(text.slice(0, 40))}.`,
    )
  }
  return text
}

/** Where the chain came from, for messages: `--chain`, `VAULT_CHAIN`, or the default. */
export function chainSource(flag: string | undefined, env: NodeJS.ProcessEnv = {}): string {
  return flag !== undefined ? '--chain' : env.VAULT_CHAIN ? 'VAULT_CHAIN' : 'the default chain'
}

/** The addresses file: `--addresses`, else `VAULT_ADDRESSES`, else none (the built-in deployment). */
export function addressesOption(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
): string | undefined {
  return flag ?? (env.VAULT_ADDRESSES || undefined)
}

/**
 * The RPC URL: `--rpc`, else the chain's environment variable, else (when `fallbackToPublic` is set)
 * the chain's public RPC. Only http(s) URLs are accepted; a bad one is named without its path or
 * query, where providers put API keys.
 *
 * @throws {UsageError} When there is none and no fallback, or it is not an http(s) URL.
 */
export function rpcUrlOption(
  chain: VaultChainName,
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  options: { fallbackToPublic: boolean },
): string {
  const variable = vaultChains[chain].rpcUrlVariable
  const url =
    flag || env[variable] || (options.fallbackToPublic ? publicRpcUrlOf(chain) : undefined)
  if (!url) {
    throw new UsageError(
      `${variable} is not set: export the RPC URL of ${chain}, or pass --rpc <url>.`,
    )
  }
  const source = flag ? '--rpc' : variable
  let protocol: string
  try {
    protocol = new URL(url).protocol
  } catch {
    throw new UsageError(`${source} is not a URL.`)
  }
  if (protocol !== 'http:' && protocol !== 'https:') {
    throw new UsageError(`${source} must be an http(s) URL, not ${redactUrl(url)}.`)
  }
  return url
}

/** How a command reaches its deployment, for its context and for {@link withChainCheck}'s message. */
export type Connection = {
  chain: VaultChainName
  /** Where the chain came from: see {@link chainSource}. */
  chainSource: string
  rpcUrl: string
  addressesPath: string | undefined
  /**
   * Send the requests made together as one JSON-RPC batch (one HTTP request), so the chain id check
   * rides with the command's first read. Default `true`; the ledger's log scan and the long-running
   * sweeper send one by one (the check then goes beside the first read, at the same time).
   */
  batch?: boolean
}

/** The longest `VAULT_RPC_TIMEOUT`, in seconds. */
const maxRpcTimeoutSeconds = 600

/**
 * The RPC transport's settings from the environment: `VAULT_RPC_TIMEOUT`, the seconds one RPC request
 * may take before it is tried again (default 10). With the transport's 3 retries and their backoff, an
 * RPC that does not answer fails a command within about 4 × that + 2 s.
 *
 * @param env - The environment.
 * @returns `vaultHttp`'s `timeout` (ms), when the variable is set.
 * @throws {UsageError} For anything but a number of seconds above 0 (at most 600).
 */
export function rpcTransportOptions(env: NodeJS.ProcessEnv): { timeout?: number } {
  const text = env.VAULT_RPC_TIMEOUT
  if (!text) return {}
  const seconds = Number(text)
  if (!/^\d+(\.\d+)?$/.test(text) || !(seconds > 0) || seconds > maxRpcTimeoutSeconds) {
    throw new UsageError(
      `VAULT_RPC_TIMEOUT must be a number of seconds above 0 and at most ${maxRpcTimeoutSeconds}, such as 10 or 2.5, not ${JSON.stringify(text.slice(0, 20))}.`,
    )
  }
  return { timeout: Math.max(1, Math.round(seconds * 1000)) }
}

/**
 * A read-only vault context for a command: the chain, its RPC, and the built-in addresses or those of
 * `--addresses` (an addresses file such as `x402-vault devnet` writes).
 *
 * @throws {UsageError} When the addresses file is missing or malformed (the message names the key).
 */
export function connectReadOnly(connection: Connection): Promise<VaultContext> {
  return connect(connection, undefined)
}

/**
 * A vault context that signs with `account`: as {@link connectReadOnly}, with a wallet client on the
 * same RPC for the command's writes.
 *
 * @throws {UsageError} When the addresses file is missing or malformed (the message names the key).
 */
export function connectSigning(connection: Connection, account: Account): Promise<VaultContext> {
  return connect(connection, account)
}

async function connect(
  connection: Connection,
  account: Account | undefined,
): Promise<VaultContext> {
  const { chain, rpcUrl, addressesPath } = connection
  let addresses: Awaited<ReturnType<typeof loadVaultAddresses>> | undefined
  if (addressesPath !== undefined) {
    try {
      addresses = await loadVaultAddresses(addressesPath, { chain })
    } catch (error) {
      if (error instanceof VaultError) throw new UsageError(error.message)
      throw error
    }
  }
  const viemChain = vaultChains[chain].viemChain
  // Every command reads its RPC settings from the process's environment, as the keys and URLs.
  const transport = vaultHttp(rpcUrl, {
    batch: connection.batch ?? true,
    // A command is a short process: its first request must not wait for fetch's set-up.
    fetchFn: nodeHttpFetch,
    ...rpcTransportOptions(process.env),
  })
  return createVaultContext({
    publicClient: createPublicClient({ chain: viemChain, transport }),
    walletClient: account && createWalletClient({ account, chain: viemChain, transport }),
    chain,
    addresses,
  })
}

/**
 * Runs a command's first read with the RPC's chain id asked beside it (in the same JSON-RPC batch, so
 * it costs no round trip), and refuses to go on when the RPC serves another chain than the command's:
 * the message says which chain each side is, and where the command's came from.
 *
 * @throws {UsageError} When the chain ids differ; else the read's own error.
 */
export async function withChainCheck<T>(
  vault: VaultContext,
  connection: Connection,
  read: () => Promise<T>,
): Promise<T> {
  const [chainId, result] = await Promise.allSettled([getChainId(vault.publicClient), read()])
  if (chainId.status === 'fulfilled' && chainId.value !== vault.chainId) {
    const served = Object.values(vaultChains).find((entry) => entry.chainId === chainId.value)
    throw new UsageError(
      `The RPC ${redactUrl(connection.rpcUrl)} serves chain id ${chainId.value}${served ? ` (${served.name})` : ''}, but this command is for ${vault.chain} (chain id ${vault.chainId}, from ${connection.chainSource}): give the RPC of ${vault.chain}, or --chain ${served?.name ?? '<its chain>'} with that chain's addresses (check --chain, --rpc and --addresses, or VAULT_CHAIN, ${vaultChains[vault.chain].rpcUrlVariable} and VAULT_ADDRESSES).`,
    )
  }
  if (result.status === 'rejected') throw result.reason
  if (chainId.status === 'rejected') throw toVaultError(chainId.reason, { action: 'Chain id read' })
  return result.value
}

/**
 * Stops a command that found no vault at the deployment's router address (a devnet that is not
 * running any more, another chain's addresses, a wrong `--rpc`), with one line that says what to check,
 * or that cannot read it (the RPC's failure, converted).
 *
 * @throws {VaultConfigError} `NO_CONTRACT_CODE` when the router address has no code (the CLI prints the
 *   message and exits 1).
 */
export async function requireDeployment(vault: VaultContext, rpcUrl: string): Promise<void> {
  const { router } = vault.addresses
  // The command's first read: an RPC that fails here fails the command at once, with the reason.
  const code = await getCode(vault.publicClient, { address: router }).catch((error) => {
    throw toVaultError(error, { action: 'Deployment check' })
  })
  if (code === undefined || code === '0x') {
    throw new VaultConfigError(
      `no vault deployment at ${router} on ${vault.chain} (RPC ${redactUrl(rpcUrl)}): check --chain, --rpc and --addresses (or VAULT_CHAIN, the RPC URL variable and VAULT_ADDRESSES).`,
      { code: 'NO_CONTRACT_CODE', details: { contract: 'router', address: router } },
    )
  }
}

/** A USDC amount option (`--reserve 50`), in base units. */
export function usdcFlag(text: string, flag: string): bigint {
  try {
    return parseUsdc(text)
  } catch (error) {
    throw new UsageError(`${flag}: ${(error as Error).message}`)
  }
}

/** The merchant's account from its key; the key is never part of a message. */
export function merchantAccount(key: string | undefined): Account {
  if (key === undefined || key === '') {
    throw new UsageError(
      'MERCHANT_PRIVATE_KEY is not set: export the merchant wallet’s private key (0x + 64 hex digits).',
    )
  }
  return accountFromKey(key, 'MERCHANT_PRIVATE_KEY')
}

/**
 * An account from a private key read from the environment variable `variable` (with or without 0x);
 * the key is never part of a message.
 */
export function accountFromKey(key: string, variable: string): Account {
  const hex = key.trim()
  const normalized = /^[0-9a-fA-F]{64}$/.test(hex) ? `0x${hex}` : hex
  if (!/^0x[0-9a-fA-F]{64}$/.test(normalized)) {
    throw new UsageError(
      `${variable} is not a private key: expected 0x followed by 64 hex digits (it has ${key.length} characters).`,
    )
  }
  try {
    return privateKeyToAccount(normalized as `0x${string}`)
  } catch {
    throw new UsageError(`${variable} is not a valid secp256k1 private key.`)
  }
}
