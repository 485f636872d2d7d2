import type { RequestId } from '@modelcontextprotocol/server'

/** What the request log and the refusals learn of a request as it is served. */
export type RequestLog = {
  method: string | undefined
  tool: string | undefined
  id?: RequestId | null | undefined
  refusal?: string | undefined
  /** It holds a slot under the concurrency cap, to give back when its answer ends. */
  counted?: boolean | undefined
  /** Stops its timer once its answer ends. */
  cleanup?: (() => void) | undefined
}

/**
 * Notes the JSON-RPC method, the tool called and the request id, for the log and error bodies.
 *
 * @param message - The parsed body (of a batch, its first message).
 * @param entry - Where they go; each cut to 64 characters.
 * @example
 * describeMessage(message, entry) // entry.method === 'tools/call', entry.tool === 'vault_status'
 */
export function describeMessage(message: unknown, entry: RequestLog): void {
  const first = Array.isArray(message) ? message[0] : message
  if (typeof first !== 'object' || first === null) return
  const { method, id, params } = first as { method?: unknown; id?: unknown; params?: unknown }
  if (typeof method === 'string') entry.method = method.slice(0, 64)
  if (typeof id === 'string' || typeof id === 'number') entry.id = id
  const name = (params as { name?: unknown } | undefined)?.name
  if (entry.method === 'tools/call' && typeof name === 'string') entry.tool = name.slice(0, 64)
}

/**
 * The request's log line: one JSON object with the time, the HTTP method, the JSON-RPC method, the
 * tool, the status, the duration, the client and any refusal; never a header or the body.
 *
 * @param facts - The request's HTTP method, its client and when it started (`performance.now()`).
 * @param entry - What was learnt while serving it.
 * @param status - The answer's status.
 * @returns The line, newline included.
 * @example
 * logRequest(requestLogLine({ http: 'POST', client, started }, entry, 200))
 */
export function requestLogLine(
  facts: { http: string; client: string; started: number },
  entry: RequestLog,
  status: number,
): string {
  return `${JSON.stringify({
    time: new Date().toISOString(),
    http: facts.http,
    method: entry.method ?? null,
    tool: entry.tool ?? null,
    status,
    durationMs: Math.round((performance.now() - facts.started) * 10) / 10,
    client: facts.client,
    ...(entry.refusal ? { refusal: entry.refusal } : {}),
  })}\n`
}
