import { type HttpCheck, refuse } from './check.js'

/** How busy the handler is when a request arrives. */
export type HttpLoad = {
  /** Requests being served. */
  inFlight: number
  /** Draining or closed: it takes no more. */
  closed: boolean
}

/**
 * Refuses (503, with `Retry-After: 1`) a request the handler cannot take now: `SHUTTING_DOWN` once it
 * drains or closes, `TOO_MANY_REQUESTS_IN_FLIGHT` at the cap.
 *
 * @param maxConcurrent - Requests served at once.
 * @param load - Reads the handler's load at the time of the request.
 * @returns The check (it counts nothing: the handler takes the slot once every check has passed).
 * @example
 * withinCapacity(128, () => ({ inFlight, closed }))
 */
export function withinCapacity(maxConcurrent: number, load: () => HttpLoad): HttpCheck {
  return () => {
    const { inFlight, closed } = load()
    if (!closed && inFlight < maxConcurrent) return undefined
    return refuse(
      503,
      closed ? 'SHUTTING_DOWN' : 'TOO_MANY_REQUESTS_IN_FLIGHT',
      closed
        ? 'The server is shutting down: try another replica or try again shortly.'
        : `The server is serving ${maxConcurrent} requests already: try again in a second.`,
      { headers: { 'retry-after': '1' } },
    )
  }
}
