import { parseArgs } from 'node:util'
import { UsageError } from './usageError.js'

const mcpUsage = `Usage: x402-vault mcp [--http [--port <port>] [--host <address>] [--public]]

Starts the x402-vault MCP server for AI clients (Claude Desktop, Claude Code, Cursor, Codex…): over
stdio by default, or over Streamable HTTP at POST /mcp with --http. It reads the vault on Base Sepolia
and plans unsigned transactions; it never signs or sends.

Options:
  --http              serve Streamable HTTP (stateless) instead of stdio
  --port <port>       the HTTP port (default VAULT_MCP_PORT, else 8402; 0 picks a free one)
  --host <address>    the address to listen on (default 127.0.0.1); beyond loopback a token is required
  --public            serve anyone without authentication (a public endpoint; VAULT_MCP_ALLOWED_HOSTS required)

Environment:
  BASE_SEPOLIA_RPC_URL        RPC URL (default https://sepolia.base.org)
  VAULT_CHAIN                 must be base-sepolia (the default)
  VAULT_MCP_MAX_PLAN_USDC     largest USDC amount one plan may move (default 100)
  VAULT_ADDRESSES             path to an addresses JSON (such as the devnet's)
  MCP_LOG_LEVEL               debug, info (default), warn or error; logs go to stderr
  VAULT_MCP_HTTP_TOKEN        HTTP: the bearer token clients must send (required off loopback)
  VAULT_MCP_PUBLIC            HTTP: 1 to serve anyone without authentication, as --public does
  VAULT_MCP_ALLOWED_HOSTS     HTTP: comma-separated host names served (required when public)
  VAULT_MCP_ALLOWED_ORIGINS   HTTP: comma-separated origins allowed to call (browser clients, CORS)
  VAULT_MCP_TRUST_PROXY       HTTP: the header your proxy writes the client address in (default none)
  VAULT_MCP_RATE_LIMIT        HTTP: requests per minute per client (default 600)
  VAULT_MCP_SERVER_RATE_LIMIT HTTP: requests per minute from all clients together (default 6000)
  VAULT_MCP_MAX_CONCURRENT    HTTP: requests served at once (default 128)
  VAULT_MCP_REQUEST_TIMEOUT   HTTP: seconds one request may take (default 30)`

/**
 * Runs `x402-vault mcp` (and `x402-vault` with no command when stdin is not a terminal): the MCP
 * server over stdio, or over Streamable HTTP with `--http`.
 *
 * @param argv - The arguments after `mcp`.
 * @returns The exit code once the client has gone (stdio); the HTTP server exits the process itself.
 */
export async function runMcpCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      help: { type: 'boolean', short: 'h' },
      http: { type: 'boolean' },
      port: { type: 'string' },
      host: { type: 'string' },
      public: { type: 'boolean' },
    },
    strict: true,
    allowPositionals: false,
  })
  if (values.help) {
    process.stdout.write(`${mcpUsage}\n`)
    return 0
  }
  if (!values.http) {
    if (values.port !== undefined || values.host !== undefined || values.public) {
      throw new UsageError(
        '--port, --host and --public go with --http; over stdio there is nothing to listen on.',
      )
    }
    const { runStdioServer } = await import('../mcp/stdio.js')
    return runStdioServer(process.env)
  }
  if (values.port !== undefined && !/^\d{1,5}$/.test(values.port)) {
    throw new UsageError(
      `--port must be a port number from 0 to 65535, not "${values.port.slice(0, 20)}".`,
    )
  }
  if (values.host !== undefined && !/^[\w.:-]{1,253}$/.test(values.host)) {
    throw new UsageError(
      `--host must be an IP address or a host name, such as 127.0.0.1 or 0.0.0.0.`,
    )
  }
  const { runHttpServer } = await import('../mcp/httpServer.js')
  const code = await runHttpServer(process.env, {
    port: values.port,
    host: values.host,
    public: values.public,
  })
  // Idle keep-alive sockets to the RPC would hold the process open a few seconds more.
  process.exit(code)
}
