import { execFile, execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { mcpToolNames } from '../../harness/mcpToolNames.js'
import { cliBin, runCli } from '../../harness/runCli.js'
import { cliCommands } from '../../src/cli/commands.js'
import { connectMcp } from '../support/mcp.js'

const hasUtilLinuxScript = (() => {
  try {
    return execFileSync('script', ['--version'], { encoding: 'utf8' }).includes('util-linux')
  } catch {
    return false
  }
})()

/** Runs a shell command on a pseudo-terminal; its stdout and stderr arrive mixed, as on a screen. */
function runOnTerminal(command: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    execFile(
      'script',
      ['--quiet', '--return', '--command', command, '/dev/null'],
      { env: { PATH: process.env.PATH } },
      (error, stdout) => resolve({ code: error ? (error.code as number) : 0, output: stdout }),
    )
  })
}

/** Every command of the table the CLI dispatches from: each has its help. */
const commands = cliCommands.map((command) => command.name)

describe('x402-vault: help and usage errors', () => {
  it('--help lists every command on stdout, exit 0', async () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
      const { code, stdout, stderr } = await runCli(args)
      expect(code, args.join(' ')).toBe(0)
      expect(stderr).toBe('')
      expect(stdout).toMatch(/^Usage: x402-vault <command> \[options\]$/m)
      for (const command of commands)
        expect(stdout).toMatch(new RegExp(`^ {2}${command} +\\S`, 'm'))
    }
  })

  // util-linux `script` runs the bin on a pseudo-terminal, as a user typing `x402-vault` does. Linux
  // systems ship it (on Debian, in the essential bsdutils), so there a missing one fails the test
  // rather than skipping it; macOS's and the BSDs' `script` take other flags.
  it.skipIf(process.platform !== 'linux')(
    'no command on a terminal prints the usage (on stderr), exit 2',
    async () => {
      expect(hasUtilLinuxScript, 'util-linux `script` runs the bin on a terminal').toBe(true)
      const { code, output } = await runOnTerminal(`'${process.execPath}' '${cliBin}'`)
      expect(code).toBe(2)
      expect(output).toMatch(/^Usage: x402-vault <command>/)
      expect(output).toContain('With no command and a stdin that is not a terminal')
    },
  )

  it('no command with a stdin that is not a terminal serves MCP: a real MCP client lists the tools', async () => {
    // What `npx -y x402-vault@beta` runs when an MCP client starts it; nothing listens on port 9.
    const mcp = await connectMcp(
      { BASE_SEPOLIA_RPC_URL: 'http://127.0.0.1:9', MCP_LOG_LEVEL: 'error' },
      { viaCli: true, cliArgs: [] },
    )
    try {
      expect((await mcp.client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(
        [...mcpToolNames].sort(),
      )
    } finally {
      await mcp.close()
    }
  })

  it('no command with stdin at its end (not a terminal) serves MCP until then, and exits 0 quietly', async () => {
    const { code, stdout, stderr } = await runCli([], { MCP_LOG_LEVEL: 'error' })
    expect(code).toBe(0)
    expect(stdout).toBe('')
    expect(stderr).toBe('')
  })

  it.each(commands)('`x402-vault %s --help` prints its usage and exits 0', async (command) => {
    for (const flag of ['--help', '-h']) {
      const { code, stdout, stderr } = await runCli([command, flag])
      expect(code, `${command} ${flag}`).toBe(0)
      expect(stderr).toBe('')
      expect(stdout).toMatch(new RegExp(`^Usage: x402-vault ${command}\\b`))
      expect(stdout).not.toMatch(/later release|coming soon|not implemented/i)
    }
  })

  it('an unknown command or option gets one short line, a pointer to help, and exit 2', async () => {
    const cases: [string[], RegExp, string][] = [
      [['deploy'], /^x402-vault: Unknown command "deploy": the commands are /, 'x402-vault --help'],
      [['--verbose'], /^x402-vault: Unknown option "--verbose"\./, 'x402-vault --help'],
      ...commands.map((command): [string[], RegExp, string] => [
        [command, '--no-such-flag'],
        /^x402-vault: Unknown option '--no-such-flag'/,
        `x402-vault ${command} --help`,
      ]),
      [['status', 'extra'], /^x402-vault: Unexpected argument 'extra'/, 'x402-vault status --help'],
    ]
    for (const [args, message, help] of cases) {
      const { code, stdout, stderr } = await runCli(args)
      expect(code, args.join(' ')).toBe(2)
      expect(stdout, args.join(' ')).toBe('')
      const lines = stderr.trimEnd().split('\n')
      expect(lines, args.join(' ')).toHaveLength(2)
      expect(lines[0]).toMatch(message)
      expect(lines[1]).toBe(`Run \`${help}\`.`)
    }
  })
})
