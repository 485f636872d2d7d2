#!/usr/bin/env node
import { UsageError } from './usageError.js'

const usage = `Usage: x402-vault <command> [options]

With no command and a stdin that is not a terminal (as an MCP client starts it), x402-vault serves
MCP over stdio, as \`x402-vault mcp\` does.

Commands:
  devnet    start a local chain with the vault protocol and an x402 facilitator
  mcp       start the MCP server over stdio (for AI clients; see the README)
  sweep     deposit the merchant's idle USDC above a reserve into the vault now
  withdraw  take USDC out of the vault into the merchant wallet
  ledger    list a wallet's payments, sweeps and withdrawals, with reconciled totals (reads only)
  status    print the vault's status (reads only)

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

const mcpUsage = `Usage: x402-vault mcp

Starts the x402-vault MCP server on stdio, for AI clients (Claude Desktop, Claude Code, Cursor,
Codex…). It reads the vault on Base Sepolia and plans unsigned transactions; it never signs or sends.

Environment:
  BASE_SEPOLIA_RPC_URL      RPC URL (default https://sepolia.base.org)
  VAULT_CHAIN               must be base-sepolia (the default)
  VAULT_MCP_MAX_PLAN_USDC   largest USDC amount one plan may move (default 100)
  VAULT_ADDRESSES           path to an addresses JSON (such as the devnet's)
  MCP_LOG_LEVEL             debug, info (default), warn or error; logs go to stderr`

async function runMcpCommand(argv: string[]): Promise<number> {
  if (argv.includes('-h') || argv.includes('--help')) {
    process.stdout.write(`${mcpUsage}\n`)
    return 0
  }
  if (argv.length > 0)
    throw new UsageError(
      `x402-vault mcp takes no arguments; it reads its settings from the environment.`,
    )
  const { runStdioServer } = await import('../mcp/stdio.js')
  return runStdioServer(process.env)
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    if (
      error instanceof UsageError ||
      (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      process.stderr.write(`x402-vault: ${(error as Error).message}\nRun \`${helpCommand}\`.\n`)
      process.exitCode = 2
      return
    }
    // One line, no stack: the message is written to be read by a person.
    process.stderr.write(`x402-vault: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  },
)
