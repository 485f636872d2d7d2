/**
 * A Web request's body as text, read no further than `limit` bytes.
 *
 * @param request - The request; a `Content-Length` past the limit is refused before reading.
 * @param limit - The most bytes to read.
 * @returns The text, or `undefined` once it passes `limit` bytes.
 * @example
 * const body = await readBody(request, 64 * 1024)
 */
export async function readBody(request: Request, limit: number): Promise<string | undefined> {
  const length = Number(request.headers.get('content-length') ?? 0)
  if (length > limit) return undefined
  if (!request.body) return ''
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = request.body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      return undefined
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}
