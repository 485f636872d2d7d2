import { loadavg } from 'node:os'

/** Runs one step of a set-up within its bound (see {@link setupSteps}). */
export type SetupStep = <T>(name: string, work: () => Promise<T>, boundMs?: number) => Promise<T>

/**
 * Times the steps of a set-up (a `beforeAll` that starts a devnet, then a server, then a client) and
 * bounds each one, so that a set-up that hangs fails naming the step that hung, how long each step
 * before it took, and the machine's load, rather than running into the hook's timeout unexplained.
 *
 * @param label - What is being set up, as the error names it.
 * @returns `step(name, work, boundMs = 60 s)`: runs `work` and resolves with its value, or rejects
 *   once the bound has passed (the work itself is not stopped: the hook's clean-up does that).
 * @example
 * const step = setupSteps('e2e')
 * devnet = await step('start the devnet', () => startDevnet())
 */
export function setupSteps(label: string): SetupStep {
  const done: string[] = []
  return async (name, work, boundMs = 60_000) => {
    const started = performance.now()
    let timer: NodeJS.Timeout | undefined
    const overrun = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        const before = done.length > 0 ? done.join(', ') : 'no step before it'
        reject(
          new Error(
            `${label}: the step "${name}" took more than ${boundMs} ms (${before}; load ${loadavg()[0]?.toFixed(1)})`,
          ),
        )
      }, boundMs)
    })
    try {
      const value = await Promise.race([work(), overrun])
      done.push(`"${name}" ${Math.round(performance.now() - started)} ms`)
      return value
    } finally {
      clearTimeout(timer)
    }
  }
}
