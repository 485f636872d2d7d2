import { describe, expect, it } from 'vitest'
import { runCli } from '../support/runCli.js'

const commands = ['devnet', 'mcp', 'sweep', 'status'] as const

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

  it('no command prints the usage on stderr, exit 2', async () => {
    const { code, stdout, stderr } = await runCli([])
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toMatch(/^Usage: x402-vault <command>/)
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
        command === 'mcp'
          ? /^x402-vault: x402-vault mcp takes no arguments/
          : /^x402-vault: Unknown option '--no-such-flag'/,
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
