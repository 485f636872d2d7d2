import type { McpServer, StandardSchemaWithJSON } from '@modelcontextprotocol/server'
import type { McpConfig } from './config.js'
import type { McpLogger } from './logger.js'
import { createVaultMcp } from './server.js'
import type { AnyVaultTool } from './tool.js'

/** What `registerVaultTools` takes: the configuration, and optionally a logger and the tools. */
export type RegisterVaultToolsOptions = {
  /** The RPC, chain, plan cap and address override: from {@link loadMcpConfig}, or built by hand. */
  config: McpConfig
  /** Where log lines go; by default stderr at `config.logLevel`. */
  logger?: McpLogger | undefined
  /** The tools to register, in listing order. Default: every tool of {@link vaultTools}. */
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
 * Puts the vault's MCP tools ({@link vaultTools}: reads, and plans of unsigned transactions) on your
 * own MCP server, over a read-only connection to the vault that holds no key and can neither sign nor
 * send. Nothing touches the network until verification starts or a tool is called, so `tools/list`
 * never waits for the RPC.
 *
 * The tools check their own arguments, so a refused call is always `isError: true` with text that
 * starts with its stable code, never the MCP SDK's validation message. Their JSON Schemas are
 * converted once per process.
 *
 * @param server - An `McpServer` of `@modelcontextprotocol/server` (v2), not yet connected.
 * @param options - `config`, `logger`, `tools`.
 * @returns `{ verifyInBackground }`.
 * @throws {VaultConfigError} `ADDRESSES_FILE_INVALID` when `config.addresses` is not a full, valid set.
 * @example
 * const server = new McpServer({ name: 'my-server', version: '1.0.0' })
 * const tools = registerVaultTools(server, { config: await loadMcpConfig(process.env) })
 * await server.connect(new StdioServerTransport())
 * tools.verifyInBackground()
 */
export function registerVaultTools(
  server: McpServer,
  options: RegisterVaultToolsOptions,
): VaultToolsHandle {
  const vault = createVaultMcp(options.config, options)
  for (const listing of vault.runner.listing) {
    const config = {
      title: listing.title,
      description: listing.description,
      inputSchema: listedSchema(listing.inputSchema),
      outputSchema: listedSchema(listing.outputSchema ?? {}),
      annotations: listing.annotations,
    }
    server.registerTool(listing.name, config, (args: unknown) =>
      vault.runner.call(listing.name, args),
    )
  }
  return { verifyInBackground: vault.verifyInBackground }
}

/**
 * A tool's listed JSON Schema for `registerTool`, which lets every value through: the tool checks
 * its own arguments, so that its refusals keep their form.
 */
function listedSchema(
  json: Record<string, unknown>,
): StandardSchemaWithJSON<Record<string, unknown>> {
  return {
    '~standard': {
      version: 1,
      vendor: 'x402-vault',
      validate: (value) => ({ value: value as Record<string, unknown> }),
      jsonSchema: { input: () => json, output: () => json },
    },
  }
}
