import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { McpConfig } from './config.js'
import { createVaultConnection } from './connection.js'
import { createLogger, type McpLogger } from './logger.js'
import { type AnyVaultTool, registerTools } from './tool.js'
import { vaultTools } from './tools/index.js'

/** What `registerVaultTools` takes: the configuration, and optionally a logger and the tools. */
export type RegisterVaultToolsOptions = {
  /** The RPC, chain, plan cap and address override: from {@link loadMcpConfig}, or built by hand. */
  config: McpConfig
  /** Where log lines go; by default stderr at `config.logLevel`. */
  logger?: McpLogger | undefined
  /** The tools to register, in listing order. Default: all six of {@link vaultTools}. */
  tools?: readonly AnyVaultTool[] | undefined
}

/** What `registerVaultTools` leaves to its caller. */
export type VaultToolsHandle = {
  /**
   * Starts verifying the vault deployment without waiting for it, such as once the MCP handshake is
   * done. Optional: the first tool call verifies it anyway. A failure is logged, and every tool call
   * then answers with it until it is fixed (or, for RPC trouble, retries it).
   */
  verifyInBackground: () => void
}

/**
 * Puts the vault's MCP tools on your own MCP server: three reads (`vault_status`,
 * `vault_check_yield`, `vault_get_position`) and three unsigned plans (`vault_plan_approve_usdc`,
 * `vault_plan_deposit`, `vault_plan_withdraw`), over a read-only connection to the vault that holds no
 * key and can neither sign nor send. Nothing touches the network until verification starts or a tool
 * is called, so `tools/list` never waits for the RPC.
 *
 * The tools answer `tools/call` themselves, so a refused call is always `isError: true` with text that
 * starts with its stable code. Call {@link guardToolArguments} once the server is connected, so that
 * arguments the MCP SDK cannot parse safely get the same answer.
 *
 * @param server - An `McpServer` of `@modelcontextprotocol/sdk`, not yet connected.
 * @param options - `config`, `logger`, `tools`.
 * @returns `{ verifyInBackground }`.
 * @throws {VaultConfigError} `ADDRESSES_FILE_INVALID` when `config.addresses` is not a full, valid set.
 * @example
 * const server = new McpServer({ name: 'my-server', version: '1.0.0' })
 * const tools = registerVaultTools(server, { config: await loadMcpConfig(process.env) })
 * const transport = new StdioServerTransport()
 * await server.connect(transport)
 * guardToolArguments(transport, vaultTools)
 * tools.verifyInBackground()
 */
export function registerVaultTools(
  server: McpServer,
  options: RegisterVaultToolsOptions,
): VaultToolsHandle {
  const { config } = options
  const logger = options.logger ?? createLogger(config.logLevel)
  const connection = createVaultConnection(config, logger)
  registerTools(server, options.tools ?? vaultTools, { connection, config, logger })
  return { verifyInBackground: connection.verifyInBackground }
}
