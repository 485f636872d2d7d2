import type { IncomingMessage, ServerResponse } from 'node:http'
import { isEventStream } from './streams.js'

/**
 * The Web form of a Node request, without its body: {@link readNodeBody} reads that.
 *
 * @param request - The Node request.
 * @param signal - Aborted when the client hangs up.
 * @returns The request's method, URL and headers.
 * @example
 * const webRequest = toWebRequest(request, controller.signal)
 */
export function toWebRequest(request: IncomingMessage, signal: AbortSignal): Request {
  const headers = new Headers()
  for (const [name, value] of Object.entries(request.headers)) {
    if (Array.isArray(value)) for (const one of value) headers.append(name, one)
    else if (value !== undefined) headers.set(name, value)
  }
  const url = `http://${request.headers.host ?? 'localhost'}${request.url ?? '/'}`
  return new Request(url, { method: request.method ?? 'GET', headers, signal })
}

/**
 * A Node request's body as text, read straight from its stream (or as a body parser such as
 * `express.json()` left it).
 *
 * @param request - The Node request.
 * @param limit - The most bytes to read.
 * @returns The text, or `undefined` once it passes `limit` bytes (the rest is discarded) or the
 *   client hangs up mid-body.
 * @example
 * const body = await readNodeBody(request, 64 * 1024)
 */
export function readNodeBody(request: IncomingMessage, limit: number): Promise<string | undefined> {
  // A body parser that ran before (express.json()) has read the stream: use what it parsed.
  const parsed = (request as { body?: unknown }).body
  if (request.readableEnded && parsed !== undefined) {
    const text = JSON.stringify(parsed)
    return Promise.resolve(Buffer.byteLength(text) > limit ? undefined : text)
  }
  if (Number(request.headers['content-length'] ?? 0) > limit) return Promise.resolve(undefined)
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let size = 0
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength
      if (size <= limit) chunks.push(chunk)
      else {
        request.off('data', onData)
        request.resume()
        resolve(undefined)
      }
    }
    request.on('data', onData)
    request.once('end', () =>
      resolve(size > limit ? undefined : Buffer.concat(chunks).toString('utf8')),
    )
    // A client that hangs up mid-body: the caller sees its request aborted.
    request.once('close', () => resolve(undefined))
    request.once('error', () => resolve(undefined))
  })
}

/**
 * Writes a Web response to a Node one: a JSON answer in one write, an event stream as it comes.
 *
 * @param answer - The handler's answer.
 * @param response - The Node response.
 * @example
 * await writeResponse(await handle(request), response)
 */
export async function writeResponse(answer: Response, response: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {}
  answer.headers.forEach((value, name) => {
    headers[name] = value
  })
  response.writeHead(answer.status, headers)
  if (!answer.body) {
    response.end()
    return
  }
  if (!isEventStream(answer)) {
    // A JSON answer is whole: one write.
    response.end(Buffer.from(await answer.arrayBuffer()))
    return
  }
  const reader = answer.body.getReader()
  response.once('close', () => {
    reader.cancel().catch(() => {})
  })
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      response.write(value)
    }
  } catch {
    // The client went away or the stream was stopped: nothing more to write.
  }
  response.end()
}
