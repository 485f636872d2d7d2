#!/usr/bin/env node
import { cliCommands } from './commands.js'
import { runMcpCommand } from './mcp.js'
import { UsageError } from './usageError.js'

const nameWidth = Math.max(...cliCommands.map((command) => command.name.length))

const usage = `Usage: x402-vault <command> [options]

With no command and a stdin that is not a terminal (as an MCP client starts it), x402-vault serves
MCP over stdio, as \`x402-vault mcp\` does.

Commands:
${cliCommands.map((command) => `  ${command.name.padEnd(nameWidth)}  ${command.summary}`).join('\n')}

Environment (every command that reads the chain):
  VAULT_RPC_TIMEOUT   seconds one RPC request may take before it is retried (default 10); an RPC
                      that does not answer fails a command in about 4 × that + 2 s

Run \`x402-vault <command> --help\` for a command's options.`

/** Where a usage error points to: the command's own help once the command is known. */
let helpCommand = 'x402-vault --help'

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
  const found = cliCommands.find((candidate) => candidate.name === command)
  if (found) {
    helpCommand = `x402-vault ${command} --help`
    return found.run(rest)
  }
  const names = cliCommands.map((candidate) => candidate.name)
  throw new UsageError(
    command.startsWith('-')
      ? `Unknown option "${command}".`
      : `Unknown command "${command}": the commands are ${names.slice(0, -1).join(', ')} and ${names.at(-1)}.`,
  )
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
