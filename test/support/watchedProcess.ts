/**
 * A child process whose stdout a test waits on, line by line: an example merchant, or a seller app
 * in a fresh folder.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { once } from 'node:events'

/** A running process: its stdout and stderr so far, a wait for a line, and its exit. */
export type WatchedProcess = {
  child: ChildProcessWithoutNullStreams
  stdout: () => string
  stderr: () => string
  /** Resolves with the first match of `pattern` in stdout; rejects when the process exits first. */
  waitFor: (pattern: RegExp) => Promise<RegExpMatchArray>
  /** Sends SIGTERM and resolves with the exit code. */
  stop: () => Promise<number | null>
}

/**
 * Spawns `command` with `args` and exactly `env` (and PATH).
 *
 * @param label - How failures name the process, such as `express-merchant.ts`.
 * @example
 * const seller = spawnWatched('seller.js', 'node', ['seller.js'], { cwd: app, env })
 * const [, port] = await seller.waitFor(/^listening (\d+)$/m)
 */
export function spawnWatched(
  label: string,
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string> },
): WatchedProcess {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', ...options.env },
  })
  let stdout = ''
  let stderr = ''
  const waiters: (() => void)[] = []
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
    for (const wake of waiters.splice(0)) wake()
  })
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  child.on('exit', () => {
    for (const wake of waiters.splice(0)) wake()
  })
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    async waitFor(pattern) {
      for (;;) {
        const match = stdout.match(pattern)
        if (match) return match
        if (child.exitCode !== null) {
          throw new Error(`${label} exited (${child.exitCode}) before ${pattern}: ${stderr}`)
        }
        await new Promise<void>((resolve) => waiters.push(resolve))
      }
    },
    async stop() {
      if (child.exitCode !== null) return child.exitCode
      const exited = once(child, 'exit')
      child.kill('SIGTERM')
      const [code] = await exited
      return code as number | null
    },
  }
}
