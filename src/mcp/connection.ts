import { createPublicClient } from 'viem'
import {
  createVaultContext,
  parseVaultAddresses,
  toVaultError,
  type VaultContext,
  vaultChains,
  vaultHttp,
  verifyAddresses,
} from '../sdk/index.js'
import type { McpConfig } from './config.js'
import { McpToolError } from './errors.js'
import type { McpLogger } from './logger.js'

/** The server's read-only view of the vault, and the check that the chain holds that deployment. */
export type VaultConnection = {
  /**
   * Resolves with the vault once the deployment is verified. A verification that failed on RPC
   * trouble is tried again at the next call; a deployment that does not match the chain stays
   * refused (restart the server with a corrected environment).
   */
  ready: () => Promise<VaultContext>
  /** Starts verification without waiting for it (after the MCP handshake). */
  verifyInBackground: () => void
}

/**
 * Creates the server's vault connection: a read-only vault context (there is no wallet client, so
 * nothing can be signed or sent) and a lazy `verifyAddresses` gate. Nothing touches the network
 * until the first verification.
 *
 * @param config - RPC URL, chain and address override.
 * @param logger - For verification results.
 * @returns The connection.
 * @throws {VaultConfigError} `ADDRESSES_FILE_INVALID` when `config.addresses` is not a full, valid set.
 * @example
 * const connection = createVaultConnection(config, logger)
 * const vault = await connection.ready()
 * const status = await getStatus(vault)
 */
export function createVaultConnection(config: McpConfig, logger: McpLogger): VaultConnection {
  const chain = vaultChains[config.chain]
  // One attempt plus one retry, 8 s each: a tool answers within ~16 s even when the RPC hangs.
  const transport = vaultHttp(config.rpcUrl, { retryCount: 1, timeout: 8_000 })
  // A context without a wallet client: nothing here can sign or send.
  const vault = createVaultContext({
    publicClient: createPublicClient({ chain: chain.viemChain, transport }),
    chain: config.chain,
    // Checked as a full set for embedders that build the config by hand (loadMcpConfig already did).
    addresses: config.addresses
      ? parseVaultAddresses(config.addresses, { chain: config.chain, source: 'config.addresses' })
      : undefined,
  })

  let verification: Promise<void> | undefined
  let refusal: McpToolError | undefined

  async function verify(): Promise<void> {
    try {
      const result = await verifyAddresses(vault)
      logger.info(
        `Verified the vault deployment on ${config.chain} at block ${result.blockNumber} (${result.checks.length} checks).`,
      )
    } catch (error) {
      const vaultError = toVaultError(error)
      if (vaultError.category === 'config') {
        refusal = new McpToolError(
          vaultError.code,
          `The vault deployment failed verification, so no tool can answer: ${vaultError.message} Check BASE_SEPOLIA_RPC_URL and VAULT_ADDRESSES, then restart the server.`,
          { details: vaultError.details },
        )
        logger.error(refusal.message)
        throw refusal
      }
      verification = undefined
      logger.warn(`Could not verify the vault deployment yet: ${vaultError.message}`)
      throw vaultError
    }
  }

  async function ready(): Promise<VaultContext> {
    if (refusal) throw refusal
    verification ??= verify()
    await verification
    return vault
  }

  return {
    ready,
    verifyInBackground: () => {
      // Failures are logged by verify() and reported by the next tool call.
      ready().catch(() => {})
    },
  }
}
