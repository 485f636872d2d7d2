#!/usr/bin/env node
import { runDevnetCommand, UsageError } from './devnet.js'

const usage = `Usage: x402-vault <command> [options]

Commands:
  devnet    start a local chain with the vault protocol and an x402 facilitator
  mcp       start the MCP server over stdio (coming in a later release)
  sweep     deposit the merchant's idle USDC now (coming in a later release)
  status    print the vault's status (coming in a later release)

Run \`x402-vault <command> --help\` for a command's options.`

const notYet = new Set(['mcp', 'sweep', 'status'])

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
    process.stdout.write(`${usage}\n`)
    return command === undefined ? 2 : 0
  }
  if (command === 'devnet') return runDevnetCommand(rest)
  if (notYet.has(command)) {
    process.stderr.write(`x402-vault ${command} is not available in this release yet.\n`)
    return 1
  }
  throw new UsageError(`Unknown command "${command}".`)
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
      process.stderr.write(`x402-vault: ${(error as Error).message}\nRun \`x402-vault --help\`.\n`)
      process.exitCode = 2
      return
    }
    // One line, no stack: the message is written to be read by a person.
    process.stderr.write(`x402-vault: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  },
)
