import { clientClosed, type HttpRefusal, refuse } from './check.js'

/**
 * Judges the body as read: 413 `BODY_TOO_LARGE` when the reader stopped at the limit, 499 when the
 * client hung up while it was read.
 *
 * @param body - What the reader returned: the text, or `undefined` past the limit or cut short.
 * @param clientGone - Whether the request was aborted (the client closed the connection).
 * @param maxBodyBytes - The limit, for the message.
 * @returns `{ body }`, the whole body within the limit, or `{ refusal }`.
 * @example
 * const read = bodyWithinLimit(await readBody(request, limit), request.signal.aborted, limit)
 */
export function bodyWithinLimit(
  body: string | undefined,
  clientGone: boolean,
  maxBodyBytes: number,
): { body: string; refusal?: undefined } | { refusal: HttpRefusal } {
  if (clientGone) return { refusal: clientClosed }
  if (body !== undefined) return { body }
  return {
    refusal: refuse(
      413,
      'BODY_TOO_LARGE',
      `The request body is larger than ${maxBodyBytes} bytes, the most this server reads.`,
    ),
  }
}
