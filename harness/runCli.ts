import { spawn } from 'node:child_process'
import { join } from 'node:path'

/** The built CLI: the tests run what `npx x402-vault` runs. */
export const cliBin = join(import.meta.dirname, '../dist/cli/index.js')

export type CliResult = { code: number | null; stdout: string; stderr: string }

/**
 * Runs the built CLI with only `env` (and PATH), in `options.cwd` if given, and collects its exit code
 * and output.
 *
 * @example
 * const { code, stderr } = await runCli(['status', '--verbose'])
 */
export function runCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  options: { cwd?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliBin, ...args], {
      ...options,
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}
