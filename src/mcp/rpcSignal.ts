import { AsyncLocalStorage } from 'node:async_hooks'
import type { Transport } from 'viem'

/** The abort signal of the tool call whose code is running, followed through every await. */
const callSignal = new AsyncLocalStorage<AbortSignal | undefined>()

/**
 * Runs one tool call so that every RPC request it makes carries `signal`: when the client cancels
 * the call (or goes away), its requests in flight are aborted, and no retry or backoff follows.
 *
 * @param signal - The call's signal.
 * @param run - The call.
 * @returns What `run` returns.
 * @example
 * await withCallSignal(ctx.mcpReq.signal, () => tool.handler(input, context))
 */
export function withCallSignal<T>(signal: AbortSignal | undefined, run: () => T): T {
  return callSignal.run(signal, run)
}

/**
 * Whether the running tool call has been stopped: its client cancelled it or went away. What it
 * throws then is the abort, not trouble worth a log line: a client that leaves is not an error.
 *
 * @returns `true` once the call's signal is aborted.
 * @example
 * if (callStopped()) logger.debug('stopped')
 */
export function callStopped(): boolean {
  return callSignal.getStore()?.aborted === true
}

/**
 * Runs work shared by every call (the deployment's verification) outside any one call, so that a
 * call cancelled while it waits does not abort it for the others.
 *
 * @param run - The shared work.
 * @returns What `run` returns.
 * @example
 * verification ??= outsideCalls(verify)
 */
export function outsideCalls<T>(run: () => T): T {
  return callSignal.run(undefined, run)
}

/**
 * Wraps a viem transport so that each request carries the running call's signal, or `session` for
 * work outside any call: aborting it (the stdio client has gone) stops every request at once. A
 * request that already has a signal keeps it.
 *
 * @param transport - The transport, such as `vaultHttp(url)`.
 * @param session - Aborted when the server stops serving.
 * @returns The same transport, with signals.
 * @example
 * const transport = withRequestSignals(vaultHttp(url), session.signal)
 */
export function withRequestSignals<T extends Transport>(
  transport: T,
  session: AbortSignal | undefined,
): T {
  return ((params: Parameters<T>[0]) => {
    const inner = transport(params)
    const request = ((args: unknown, options?: { signal?: AbortSignal }) => {
      const signal = options?.signal ?? callSignal.getStore() ?? session
      return inner.request(args as never, (signal ? { ...options, signal } : options) as never)
    }) as typeof inner.request
    return { ...inner, request }
  }) as T
}
