/** A minute's worth of requests that refills steadily: the rule behind both rate limits. */
export type TokenBucket = {
  /**
   * Takes one request's token at `time` (milliseconds).
   *
   * @returns 0 when it took one, else the whole seconds until one is there (for `Retry-After`).
   */
  take: (time: number) => number
  /** Whether it has refilled by `time`: its client may be forgotten. */
  fullAt: (time: number) => boolean
}

/**
 * A token bucket that holds `perMinute` tokens, starts full and refills at `perMinute` a minute. A
 * request refused costs nothing.
 *
 * @param perMinute - Requests a minute; also the most it lets through at once.
 * @param time - Now, in milliseconds.
 * @returns The bucket.
 * @example
 * const bucket = tokenBucket(600, performance.now())
 * if (bucket.take(performance.now()) > 0) // refuse
 */
export function tokenBucket(perMinute: number, time: number): TokenBucket {
  const perMs = perMinute / 60_000
  let tokens = perMinute
  let at = time
  const refill = (now: number) => Math.min(perMinute, tokens + (now - at) * perMs)
  return {
    take(now) {
      tokens = refill(now)
      at = now
      if (tokens >= 1) {
        tokens -= 1
        return 0
      }
      return Math.ceil((1 - tokens) / perMs / 1000)
    },
    fullAt: (now) => refill(now) >= perMinute,
  }
}
