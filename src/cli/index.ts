#!/usr/bin/env node
import { parseArgs } from 'node:util'
import { UsageError } from './usageError.js'

const usage = `Usage: x402-vault <command> [options]

With no command and a stdin that is not a terminal (as an MCP client starts it), x402-vault serves
MCP over stdio, as \`x402-vault mcp\` does.

Commands:
  devnet    start a local chain with the vault protocol and an x402 facilitator
  mcp       start the MCP server over stdio, or Streamable HTTP with --http (for AI clients)
  sweep     deposit the merchant's idle USDC above a reserve into the vault now
  withdraw  take USDC out of the vault into the merchant wallet
  ledger    list a wallet's payments, sweeps and withdrawals, with reconciled totals (reads only)
  status    print the vault's status (reads only)

Environment (every command that reads the chain):
  VAULT_RPC_TIMEOUT   seconds one RPC request may take before it is retried (default 10); an RPC
                      that does not answer fails a command in about 4 × that + 2 s

Run \`x402-vault <command> --help\` for a command's options.`

/** Where a usage error points to: the command's own help once the command is known. */
let helpCommand = 'x402-vault --help'

const commands = new Set(['devnet', 'mcp', 'status', 'sweep', 'withdraw', 'ledger'])

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  if (command === '-h' || command === '--help' || command === 'help') {
    process.stdout.write(`${usage}\n`)
    return 0
  }
  if (command === undefined) {
    // An MCP client spawns the bin with pipes, and the registration most users write names only the
    // package (`npx -y x402-vault@beta`): serve MCP. On a terminal it is a mistake, not a request for
    // help: the usage goes to stderr, and the exit code says so.
    if (!process.stdin.isTTY) return runMcpCommand([])
    process.stderr.write(`${usage}\n`)
    return 2
  }
  if (commands.has(command)) helpCommand = `x402-vault ${command} --help`
  // Each sub-command loads only its own code: the MCP server must start fast and never load the devnet.
  if (command === 'devnet') return (await import('./devnet.js')).runDevnetCommand(rest)
  if (command === 'mcp') return runMcpCommand(rest)
  if (command === 'status') return (await import('./status.js')).runStatusCommand(rest, process.env)
  if (command === 'sweep') return (await import('./sweep.js')).runSweepCommand(rest)
  if (command === 'withdraw') return (await import('./withdraw.js')).runWithdrawCommand(rest)
  if (command === 'ledger') return (await import('./ledger.js')).runLedgerCommand(rest, process.env)
  throw new UsageError(
    command.startsWith('-')
      ? `Unknown option "${command}".`
      : `Unknown command "${command}": the commands are devnet, mcp, sweep, withdraw, ledger and status.`,
  )
}

const mcpUsage = `Usage: x402-vault mcp [--http [--port <port>] [--host <address>]]

Starts the x402-vault MCP server for AI clients (Claude Desktop, Claude Code, Cursor, Codex…): over
stdio by default, or over Streamable HTTP at POST /mcp with --http. It reads the vault on Base Sepolia
and plans unsigned transactions; it never signs or sends.

Options:
  --http              serve Streamable HTTP (stateless) instead of stdio
  --port <port>       the HTTP port (default VAULT_MCP_PORT, else 8402; 0 picks a free one)
  --host <address>    the address to listen on (default 127.0.0.1); beyond loopback a token is required

Environment:
  BASE_SEPOLIA_RPC_URL        RPC URL (default https://sepolia.base.org)
  VAULT_CHAIN                 must be base-sepolia (the default)
  VAULT_MCP_MAX_PLAN_USDC     largest USDC amount one plan may move (default 100)
  VAULT_ADDRESSES             path to an addresses JSON (such as the devnet's)
  MCP_LOG_LEVEL               debug, info (default), warn or error; logs go to stderr
  VAULT_MCP_HTTP_TOKEN        HTTP: the bearer token clients must send (required off loopback)
  VAULT_MCP_ALLOWED_ORIGINS   HTTP: comma-separated origins allowed to call (browser clients)
  VAULT_MCP_RATE_LIMIT        HTTP: requests per minute per client (default 600)
  VAULT_MCP_MAX_CONCURRENT    HTTP: requests served at once (default 128)
  VAULT_MCP_REQUEST_TIMEOUT   HTTP: seconds one request may take (default 30)`

async function runMcpCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      help: { type: 'boolean', short: 'h' },
      http: { type: 'boolean' },
      port: { type: 'string' },
      host: { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  })
  if (values.help) {
    process.stdout.write(`${mcpUsage}\n`)
    return 0
  }
  if (!values.http) {
    if (values.port !== undefined || values.host !== undefined) {
      throw new UsageError(
        '--port and --host go with --http; over stdio there is nothing to listen on.',
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
  const code = await runHttpServer(process.env, { port: values.port, host: values.host })
  // Idle keep-alive sockets to the RPC would hold the process open a few seconds more.
  process.exit(code)
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  async (error: unknown) => {
    if (
      error instanceof UsageError ||
      (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      process.stderr.write(`x402-vault: ${(error as Error).message}\nRun \`${helpCommand}\`.\n`)
      process.exitCode = 2
      return
    }
    process.exitCode = 1
    // No stack: the message is written to be read by a person. It is the SDK's conversion's, which
    // redacts: a raw RPC library error carries the whole RPC URL, key and all, and the request body.
    // Loaded only on this path, so that the MCP server (no sub-command) starts without it.
    const { toVaultError } = await import('../sdk/shared.js')
    process.stderr.write(`x402-vault: ${toVaultError(error).message}\n`)
  },
)
