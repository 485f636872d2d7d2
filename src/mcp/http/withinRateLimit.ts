import { type HttpCheck, refuse } from './check.js'
import { type TokenBucket, tokenBucket } from './tokenBucket.js'

/**
 * Refuses (429 `RATE_LIMITED`, with `Retry-After` in whole seconds) a client past its requests per
 * minute: a token bucket per client that holds a minute's worth and refills steadily.
 *
 * @param perMinute - Requests per minute one client may make.
 * @param now - The clock, in milliseconds (`performance.now` by default; tests give their own).
 * @returns The check; it counts each request it passes.
 * @example
 * withinRateLimit(600)
 */
export function withinRateLimit(
  perMinute: number,
  now: () => number = () => performance.now(),
): HttpCheck {
  const buckets = new Map<string, TokenBucket>()
  return ({ client }) => {
    const time = now()
    let bucket = buckets.get(client)
    if (!bucket) {
      // Forget clients whose bucket has refilled, so that the map cannot grow without bound.
      if (buckets.size >= 10_000) {
        for (const [key, old] of buckets) if (old.fullAt(time)) buckets.delete(key)
      }
      bucket = tokenBucket(perMinute, time)
      buckets.set(client, bucket)
    }
    const seconds = bucket.take(time)
    if (seconds === 0) return undefined
    return refuse(
      429,
      'RATE_LIMITED',
      `Too many requests from this client: try again in ${seconds} s.`,
      { headers: { 'retry-after': String(seconds) } },
    )
  }
}
