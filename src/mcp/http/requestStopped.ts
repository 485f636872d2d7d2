import type { RequestId } from '@modelcontextprotocol/server'
import { clientClosed, type HttpRefusal, refuse } from './check.js'

/**
 * The answer to a request stopped before its answer came: 499 when its client hung up, else 504
 * `TIMEOUT` under the request's id.
 *
 * @param clientGone - Whether the client closed the connection.
 * @param timeoutMs - The time a request may take, for the message.
 * @param id - The request's id, echoed in the 504.
 * @returns The refusal.
 * @example
 * requestStopped(false, 30_000, 7).status // 504
 */
export function requestStopped(
  clientGone: boolean,
  timeoutMs: number,
  id: RequestId | null | undefined,
): HttpRefusal {
  if (clientGone) return clientClosed
  return refuse(
    504,
    'TIMEOUT',
    `The request took longer than ${timeoutMs / 1000} s and was stopped; try again.`,
    { id },
  )
}
