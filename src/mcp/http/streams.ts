/**
 * Whether an answer is an event stream (the MCP SDK's form for a 2026-07-28 answer it streams).
 *
 * @param response - The answer.
 * @returns `true` for `text/event-stream`.
 * @example
 * if (!isEventStream(response)) response.end(await answer.arrayBuffer())
 */
export function isEventStream(response: Response): boolean {
  return response.headers.get('content-type')?.startsWith('text/event-stream') ?? false
}

/**
 * For an event stream, resolves once its first event with data (the result, for this server) has
 * come, with a response that replays what was read; a JSON response as it is.
 *
 * @param response - The MCP SDK's answer.
 * @param signal - Aborted on a timeout or a client that hung up: the stream is cancelled.
 * @returns The response, its headers held until the first event.
 * @example
 * const answer = await untilFirstEvent(await modern.fetch(request), signal)
 */
export async function untilFirstEvent(response: Response, signal: AbortSignal): Promise<Response> {
  if (!response.body || !isEventStream(response)) return response
  const reader = response.body.getReader()
  const read: Uint8Array[] = []
  const decoder = new TextDecoder()
  let text = ''
  signal.addEventListener('abort', () => reader.cancel().catch(() => {}), { once: true })
  // A stream the SDK stopped (the request aborted) reads as ended.
  const next = () =>
    reader
      .read()
      .catch((): ReadableStreamReadResult<Uint8Array> => ({ done: true, value: undefined }))
  for (;;) {
    const { done, value } = await next()
    if (done || signal.aborted) break
    read.push(value)
    text += decoder.decode(value, { stream: true })
    if (/(^|\n)data:[^\n]*\n(.*\n)*?\r?\n/.test(text)) break
  }
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of read) controller.enqueue(chunk)
    },
    async pull(controller) {
      const { done, value } = await next()
      if (done) controller.close()
      else controller.enqueue(value)
    },
    cancel(reason) {
      return reader.cancel(reason)
    },
  })
  return new Response(body, { status: response.status, headers: response.headers })
}

/**
 * Calls `onEnd` once the response's body has been read to its end or cancelled.
 *
 * @param response - A streamed answer.
 * @param onEnd - Runs once.
 * @returns The same answer, its body watched.
 * @example
 * return trackBody(response, finished)
 */
export function trackBody(response: Response, onEnd: () => void): Response {
  let ended = false
  const end = () => {
    if (ended) return
    ended = true
    onEnd()
  }
  if (!response.body) {
    end()
    return response
  }
  const reader = response.body.getReader()
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read()
        if (done) {
          controller.close()
          end()
        } else controller.enqueue(value)
      } catch (error) {
        end()
        controller.error(error)
      }
    },
    cancel(reason) {
      end()
      return reader.cancel(reason)
    },
  })
  return new Response(body, { status: response.status, headers: response.headers })
}
