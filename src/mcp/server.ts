import { McpServer, type RequestId } from '@modelcontextprotocol/server'
import packageJson from '../../package.json' with { type: 'json' }
import { formatUsdc } from '../index.js'
import { redactUrl } from '../sdk/shared.js'
import type { McpConfig } from './config.js'
import { createVaultConnection } from './connection.js'
import { createLogger, type McpLogger } from './logger.js'
import { type AnyVaultTool, createToolRunner, refusedCall, type ToolRunner } from './tool.js'
import { vaultTools } from './tools/index.js'

/** What `createServer` takes besides the configuration. */
export type CreateServerOptions = {
  /** Where log lines go; by default stderr at `config.logLevel`. */
  logger?: McpLogger | undefined
}

const instructions = `Tools for the x402-vault USDC yield vault on Base Sepolia. This server holds no key and never signs or sends; amounts are decimal USDC strings such as "12.5".
1. Read: vault_status (pause, caps, oracle), vault_check_yield (rates), vault_get_position (a wallet's shares, value, registration, allowance).
2. Plan: vault_plan_deposit, vault_plan_withdraw or vault_plan_approve_usdc returns unsigned transactions, with structured warnings (level and code). An isError answer names what blocks the plan; fix that first.
3. Let the user's wallet sign: a plain wallet sends steps (or transaction) one by one, in order, each after the previous is confirmed; a smart wallet (or EIP-7702 account) sends calls in one wallet_sendCalls request, all or nothing.
4. Read again (vault_get_position) to confirm the result.
`

/**
 * How long a 2026-07-28 client may keep the listing and the discovery answer (`ttlMs`, `cacheScope`
 * on those results; the MCP SDK adds them to 2026-era answers only). They change only with the
 * server's version and hold nothing about the client, so any cache may keep them for an hour.
 */
const cacheHints = {
  'tools/list': { ttlMs: 3_600_000, cacheScope: 'public' },
  'server/discover': { ttlMs: 3_600_000, cacheScope: 'public' },
} as const

/**
 * Creates the x402-vault MCP server (not yet connected): the tools of {@link vaultTools} (reads, and
 * unsigned plans) over a read-only vault connection. Nothing is read from the chain until the MCP
 * handshake completes (then the deployment is verified in the background) or a tool is called, so
 * `tools/list` never waits for the network.
 *
 * It is one server for one connection. To serve several (stdio's discovery probe, one instance per
 * HTTP request), `runStdioServer` and {@link createMcpHttpHandler} build instances that share one
 * vault connection and one tool listing.
 *
 * @param config - From {@link loadMcpConfig}, or built by an embedder.
 * @param options - `logger`.
 * @returns The server (`McpServer` of `@modelcontextprotocol/server`); connect it to a transport.
 * @throws {VaultConfigError} `ADDRESSES_FILE_INVALID` when `config.addresses` is not a full, valid set.
 * @example
 * const server = createServer(await loadMcpConfig(process.env))
 * await server.connect(new StdioServerTransport())
 */
export function createServer(config: McpConfig, options: CreateServerOptions = {}): McpServer {
  const vault = createVaultMcp(config, options)
  return vault.newServer({ onInitialized: vault.onInitialized })
}

/** The costly parts, built once per process: the vault connection and the tools' listing. */
export type VaultMcp = {
  config: McpConfig
  logger: McpLogger
  tools: readonly AnyVaultTool[]
  runner: ToolRunner
  /** Starts verifying the deployment without waiting for it. */
  verifyInBackground: () => void
  /** For a connection's handshake: logs the client and starts verification. */
  onInitialized: (server: McpServer) => void
  /**
   * A new MCP server instance over the shared parts: what each connection or HTTP request needs,
   * and no more (an `McpServer` and its two tool handlers).
   */
  newServer: (options?: NewServerOptions) => McpServer
}

/** Per-instance settings of {@link VaultMcp.newServer}. */
export type NewServerOptions = {
  /** Refusals kept by `guardToolCall` for this connection or request, by request id. */
  refused?: Map<RequestId, string> | undefined
  /** Called once the client completed the 2025-era handshake. */
  onInitialized?: ((server: McpServer) => void) | undefined
}

/**
 * Builds what every server instance shares. Nothing touches the network until verification starts
 * or a tool is called.
 *
 * @param config - The checked configuration.
 * @param options - `logger`, the tools (every tool of `vaultTools` by default), and the `signal` that stops the server's
 *   RPC work.
 * @returns The shared parts and the instance factory.
 * @throws {VaultConfigError} `ADDRESSES_FILE_INVALID` when `config.addresses` is not a full, valid set.
 * @example
 * const vault = createVaultMcp(config, {})
 * const server = vault.newServer()
 */
export function createVaultMcp(
  config: McpConfig,
  options: CreateServerOptions & {
    tools?: readonly AnyVaultTool[] | undefined
    /** Aborted when the server stops serving: every RPC request in flight stops with it. */
    signal?: AbortSignal | undefined
    /** The `fetch` the RPC transport sends with; the global `fetch` by default. */
    rpcFetch?: typeof fetch | undefined
  },
): VaultMcp {
  const logger = options.logger ?? createLogger(config.logLevel)
  const tools = options.tools ?? vaultTools
  const connection = createVaultConnection(config, logger, options.signal, options.rpcFetch)
  const runner = createToolRunner(tools, { connection, config, logger })
  return {
    config,
    logger,
    tools,
    runner,
    verifyInBackground: connection.verifyInBackground,
    onInitialized(server) {
      const client = server.server.getClientVersion()
      logger.info(
        `Connected to ${client ? `${client.name} ${client.version}` : 'an MCP client'}; verifying the vault deployment on ${config.chain} through ${redactUrl(config.rpcUrl)}. Plans are capped at ${formatUsdc(config.maxPlanUsdc)} USDC.`,
      )
      connection.verifyInBackground()
    },
    newServer({ refused, onInitialized } = {}) {
      const server = new McpServer(
        { name: 'x402-vault', title: 'x402-vault', version: packageJson.version },
        { capabilities: { tools: {} }, instructions, cacheHints },
      )
      // The low-level handlers: the listing is built once, and every call answers itself (see
      // createToolRunner), so no per-instance tool registration or schema conversion happens.
      // A new result object each time: the SDK tags the one it is given (with the cache hint).
      server.server.setRequestHandler('tools/list', () => ({ tools: runner.listing }))
      server.server.setRequestHandler('tools/call', async (request, ctx) => {
        const result =
          refusedCall(refused, ctx.mcpReq.id) ??
          (await runner.call(request.params.name, request.params.arguments, ctx.mcpReq.signal))
        const listing = runner.listing.find((tool) => tool.name === request.params.name)
        return server.server.projectCallToolResult(result, listing?.outputSchema)
      })
      if (onInitialized) {
        // A client may repeat notifications/initialized: log and verify once per connection.
        let initialized = false
        server.server.oninitialized = () => {
          if (initialized) return
          initialized = true
          onInitialized(server)
        }
      }
      return server
    },
  }
}
