import { runMcpCommand } from './mcp.js'

/** One `x402-vault` sub-command. */
export type CliCommand = {
  /** What the user types after `x402-vault`. */
  name: string
  /** Its line in `x402-vault --help`. */
  summary: string
  /**
   * Runs it. Each sub-command loads only its own code (a dynamic import): the MCP server must start
   * fast and never load the devnet.
   *
   * @param argv - The arguments after its name.
   * @returns The exit code.
   */
  run: (argv: string[]) => Promise<number>
}

/**
 * The sub-commands, in the order `x402-vault --help` lists them: the one place a command is added.
 * The CLI dispatches from it, its help and its unknown-command error list it, and the tests read it
 * (each command's `--help`, its section in docs/cli.md and its tests: test/howToAdd.test.ts).
 */
export const cliCommands: readonly CliCommand[] = [
  {
    name: 'devnet',
    summary: 'start a local chain with the vault protocol and an x402 facilitator',
    run: async (argv) => (await import('./devnet.js')).runDevnetCommand(argv),
  },
  {
    name: 'mcp',
    summary: 'start the MCP server over stdio, or Streamable HTTP with --http (for AI clients)',
    run: runMcpCommand,
  },
  {
    name: 'sweep',
    summary: "deposit the merchant's idle USDC above a reserve into the vault now",
    run: async (argv) => (await import('./sweep.js')).runSweepCommand(argv),
  },
  {
    name: 'withdraw',
    summary: 'take USDC out of the vault into the merchant wallet',
    run: async (argv) => (await import('./withdraw.js')).runWithdrawCommand(argv),
  },
  {
    name: 'ledger',
    summary:
      "list a wallet's payments, sweeps and withdrawals, with reconciled totals (reads only)",
    run: async (argv) => (await import('./ledger.js')).runLedgerCommand(argv, process.env),
  },
  {
    name: 'status',
    summary: "print the vault's status (reads only)",
    run: async (argv) => (await import('./status.js')).runStatusCommand(argv, process.env),
  },
]
