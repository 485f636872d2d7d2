import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import packageJson from '../../package.json' with { type: 'json' }
import { formatUsdc } from '../index.js'
import { redactUrl } from '../sdk/shared.js'
import type { McpConfig } from './config.js'
import { createLogger, type McpLogger } from './logger.js'
import { registerVaultTools } from './registerVaultTools.js'

/** What `createServer` takes besides the configuration. */
export type CreateServerOptions = {
  /** Where log lines go; by default stderr at `config.logLevel`. */
  logger?: McpLogger | undefined
}

const instructions = `Tools for the x402-vault USDC yield vault on Base Sepolia. vault_status, vault_check_yield and vault_get_position read the chain. vault_plan_approve_usdc, vault_plan_deposit and vault_plan_withdraw return unsigned transactions: this server holds no key and cannot sign or send, so the user reviews each plan and sends it from their own wallet. Amounts are decimal USDC strings such as "12.5".`

/**
 * Creates the x402-vault MCP server (not yet connected): six tools, three reads and three unsigned
 * plans, over a read-only vault connection. Nothing is read from the chain until the MCP handshake
 * completes (then the deployment is verified in the background) or a tool is called, so
 * `tools/list` never waits for the network.
 *
 * @param config - From {@link loadMcpConfig}, or built by an embedder.
 * @param options - `logger`.
 * @returns The server; connect it to a transport.
 * @throws {VaultConfigError} `ADDRESSES_FILE_INVALID` when `config.addresses` is not a full, valid set.
 * @example
 * const server = createServer(await loadMcpConfig(process.env))
 * await server.connect(new StdioServerTransport())
 */
export function createServer(config: McpConfig, options: CreateServerOptions = {}): McpServer {
  const logger = options.logger ?? createLogger(config.logLevel)
  const server = new McpServer(
    { name: 'x402-vault', title: 'x402-vault', version: packageJson.version },
    { capabilities: { tools: {} }, instructions },
  )
  const tools = registerVaultTools(server, { config, logger })

  server.server.oninitialized = () => {
    const client = server.server.getClientVersion()
    logger.info(
      `Connected to ${client ? `${client.name} ${client.version}` : 'an MCP client'}; verifying the vault deployment on ${config.chain} through ${redactUrl(config.rpcUrl)}. Plans are capped at ${formatUsdc(config.maxPlanUsdc)} USDC.`,
    )
    tools.verifyInBackground()
  }
  return server
}
