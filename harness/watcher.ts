/**
 * `x402-vault sweep --watch`, the built bin, as a child process: its JSON events as they come, and a
 * wait for the next one that matches (no sleeps: the tests wait on events).
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { cliBin } from './runCli.js'

/** One event line of the watcher, parsed. */
export type WatchEventLine = Record<string, unknown> & { event: string; time: string }

/**
 * Starts `x402-vault sweep --watch` with only `env` (and PATH).
 *
 * @param env - The keys and the RPC URL.
 * @param args - The options after `--watch`.
 * @returns The process, its events so far, its stderr, its exit code once it exits, and `next(match)`.
 */
export function startWatcher(env: Record<string, string | undefined>, args: string[]) {
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    [cliBin, 'sweep', '--watch', ...args],
    { env: { PATH: process.env.PATH, ...env } },
  )
  const events: WatchEventLine[] = []
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const waiters: {
    match: (event: WatchEventLine) => boolean
    resolve: (event: WatchEventLine) => void
  }[] = []
  let seen = 0
  createInterface({ input: child.stdout }).on('line', (line) => {
    const event = JSON.parse(line) as WatchEventLine
    events.push(event)
    for (const waiter of [...waiters]) {
      if (waiter.match(event)) {
        waiters.splice(waiters.indexOf(waiter), 1)
        waiter.resolve(event)
      }
    }
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return {
    child,
    events,
    stderr: () => stderr,
    exited,
    /**
     * The first event at position `from` or later that matches, now or when it comes. Unlike `next` it
     * moves no cursor, so a wait left pending (the losers of a `Promise.race`) cannot use up an event
     * that a later wait is for.
     */
    after(from: number, match: (event: WatchEventLine) => boolean): Promise<WatchEventLine> {
      const earlier = events.slice(from).find(match)
      if (earlier) return Promise.resolve(earlier)
      return new Promise((resolve) => {
        waiters.push({
          match: (event) => match(event) && events.indexOf(event) >= from,
          resolve,
        })
      })
    },
    /** The next event (after the last one waited for) that matches. */
    next(match: (event: WatchEventLine) => boolean): Promise<WatchEventLine> {
      const earlier = events.slice(seen).find(match)
      if (earlier) {
        seen = events.indexOf(earlier) + 1
        return Promise.resolve(earlier)
      }
      return new Promise((resolve) => {
        waiters.push({
          match,
          resolve: (event) => {
            seen = events.indexOf(event) + 1
            resolve(event)
          },
        })
      })
    },
  }
}

export type Watcher = ReturnType<typeof startWatcher>
