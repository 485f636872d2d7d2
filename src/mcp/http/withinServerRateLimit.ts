import { type HttpCheck, refuse } from './check.js'
import { tokenBucket } from './tokenBucket.js'

/**
 * Refuses (429 `SERVER_RATE_LIMITED`, with `Retry-After` in whole seconds) any request once the whole
 * server is past its requests per minute, whoever sends them: one token bucket for every client, so
 * that many clients together cannot spend more of the RPC's quota than the operator allows. It runs
 * after the per-client limit, so a client over its own limit spends none of it.
 *
 * @param perMinute - Requests per minute the server takes from all its clients together.
 * @param now - The clock, in milliseconds (`performance.now` by default; tests give their own).
 * @returns The check; it counts each request it passes.
 * @example
 * withinServerRateLimit(6_000)
 */
export function withinServerRateLimit(
  perMinute: number,
  now: () => number = () => performance.now(),
): HttpCheck {
  let bucket: ReturnType<typeof tokenBucket> | undefined
  return () => {
    const time = now()
    bucket ??= tokenBucket(perMinute, time)
    const seconds = bucket.take(time)
    if (seconds === 0) return undefined
    return refuse(
      429,
      'SERVER_RATE_LIMITED',
      `This server takes ${perMinute} requests a minute from all its clients together, and is past it: try again in ${seconds} s.`,
      { headers: { 'retry-after': String(seconds) } },
    )
  }
}
