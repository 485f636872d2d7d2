import { createPublicClient } from 'viem'
import {
  createVaultContext,
  getMinDeposit,
  parseVaultAddresses,
  type VaultContext,
  VaultRpcError,
  vaultChains,
  vaultHttp,
  verifyAddresses,
} from '../index.js'
import { toVaultError } from '../sdk/shared.js'
import type { McpConfig } from './config.js'
import { McpToolError } from './errors.js'
import { capBelowMinimumText } from './inputs.js'
import type { McpLogger } from './logger.js'
import { outsideCalls, withRequestSignals } from './rpcSignal.js'

/** The server's read-only view of the vault, and the check that the chain holds that deployment. */
export type VaultConnection = {
  /**
   * Resolves with the vault once the deployment is verified. A verification that failed on RPC
   * trouble or on another chain id is tried again at the next call; contracts that do not match the
   * configured addresses stay refused (restart the server with a corrected environment).
   */
  ready: () => Promise<VaultContext>
  /**
   * Confirms that the RPC still serves the configured chain: one `eth_chainId`. Called with a
   * tool's first read, it travels in the same JSON-RPC batch, so it costs no round trip.
   */
  checkChain: () => Promise<void>
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
 * @param session - Aborted when the server stops serving: every RPC request in flight stops.
 * @param rpcFetch - The `fetch` the RPC transport sends with; the global `fetch` by default.
 * @returns The connection.
 * @throws {VaultConfigError} `ADDRESSES_FILE_INVALID` when `config.addresses` is not a full, valid set.
 * @example
 * const connection = createVaultConnection(config, logger)
 * const vault = await connection.ready()
 * const status = await getStatus(vault)
 */
export function createVaultConnection(
  config: McpConfig,
  logger: McpLogger,
  session?: AbortSignal,
  rpcFetch?: typeof fetch,
): VaultConnection {
  const chain = vaultChains[config.chain]
  // One attempt plus one retry, 8 s each: a tool answers within ~16 s even when the RPC hangs.
  // Calls made in the same tick share one HTTP request (a JSON-RPC batch): that is how the chain
  // check rides along with each tool's first read.
  // Each request carries its tool call's abort signal (see withCallSignal), or the session's.
  const transport = withRequestSignals(
    vaultHttp(config.rpcUrl, { retryCount: 1, timeout: 8_000, batch: true, fetchFn: rpcFetch }),
    session,
  )
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
      // Read in the same JSON-RPC batch as the verification: no extra round trip.
      const [result, minimum] = await Promise.all([
        verifyAddresses(vault),
        getMinDeposit(vault).catch(() => undefined),
      ])
      logger.info(
        `Verified the vault deployment on ${config.chain} at block ${result.blockNumber} (${result.checks.length} checks).`,
      )
      // Said once the minimum is known: at start-up over HTTP, after the handshake over stdio.
      if (minimum !== undefined && minimum > config.maxPlanUsdc) {
        logger.error(capBelowMinimumText(config.maxPlanUsdc, minimum))
      }
    } catch (error) {
      const vaultError = toVaultError(error)
      verification = undefined
      if (session?.aborted) {
        // The client has gone (an Inspector session that lists the tools and leaves): the
        // verification was stopped, not refused, and nobody is left to tell.
        logger.debug('Stopped verifying the vault deployment: the client has gone.')
        throw vaultError
      }
      if (vaultError.code === 'CHAIN_MISMATCH') {
        // Not final: the RPC may serve the right chain again (a node swapped behind a load balancer).
        throw chainMismatch(String(vaultError.details.actual))
      }
      if (vaultError.category === 'config') {
        refusal = new McpToolError(
          `The vault deployment failed verification, so no tool can answer: ${vaultError.message} Check BASE_SEPOLIA_RPC_URL and VAULT_ADDRESSES, then restart the server.`,
          { code: vaultError.code, category: 'config', details: vaultError.details },
        )
        logger.error(refusal.message)
        throw refusal
      }
      logger.warn(`Could not verify the vault deployment yet: ${vaultError.message}`)
      throw vaultError
    }
  }

  function chainMismatch(actual: string): McpToolError {
    const error = new McpToolError(
      `The RPC (BASE_SEPOLIA_RPC_URL) serves chain ${actual}, not ${config.chain} (${chain.chainId}), so nothing was read or planned: an answer from that chain would describe another deployment. Point BASE_SEPOLIA_RPC_URL at a ${chain.viemChain.name} node; the server checks the chain again at every call.`,
      { code: 'CHAIN_MISMATCH', category: 'config', details: { expected: chain.chainId, actual } },
    )
    logger.error(error.message)
    return error
  }

  async function checkChain(): Promise<void> {
    let answer: unknown
    try {
      answer = await vault.publicClient.request({ method: 'eth_chainId' })
    } catch (error) {
      throw toVaultError(error, { action: 'Chain check' })
    }
    if (typeof answer !== 'string' || !/^0x[0-9a-fA-F]{1,16}$/.test(answer)) {
      throw new VaultRpcError(
        `Chain check failed: the RPC answered eth_chainId with ${JSON.stringify(answer)?.slice(0, 40)}, not a chain id, so nothing was read or planned.`,
        { code: 'RPC_BAD_RESPONSE', retryable: true },
      )
    }
    const actual = Number.parseInt(answer, 16)
    if (actual !== chain.chainId) {
      // Verify the deployment again once the RPC serves the configured chain again.
      verification = undefined
      throw chainMismatch(String(actual))
    }
  }

  async function ready(): Promise<VaultContext> {
    if (refusal) throw refusal
    // Shared by every call: a cancelled call must not abort it for the others.
    verification ??= outsideCalls(verify)
    await verification
    return vault
  }

  return {
    ready,
    checkChain,
    verifyInBackground: () => {
      // Failures are logged by verify() and reported by the next tool call.
      ready().catch(() => {})
    },
  }
}
