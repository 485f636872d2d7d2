import { Transform, type TransformCallback } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import { isPlainObject } from './isPlainObject.js'

/** What {@link checkJsonRpc} found wrong: the answer, and whether the message was a notification. */
export type JsonRpcVerdict = {
  /** The JSON-RPC error answer (its id `null` when the message had no usable id). */
  refusal: JsonRpcRefusal
  /** A notification (no id): JSON-RPC answers none, so over stdio it is dropped unanswered. */
  notification: boolean
}

/** A JSON-RPC error answer to a message the server cannot take, as JSON-RPC 2.0 prescribes. */
export type JsonRpcRefusal = {
  jsonrpc: '2.0'
  id: string | number | null
  error: { code: -32700 | -32600 | -32602; message: string }
}

/**
 * Checks one inbound message the way JSON-RPC 2.0 does, before the MCP SDK sees it: the SDK drops a
 * line that is not a valid message without a word, and answers a `tools/call` without `params`
 * with -32603 and a raw validation dump. What it refuses:
 * - not JSON: -32700 (Parse error);
 * - a batch (an array: MCP since 2025-06-18 has none), a non-object, `jsonrpc` other than `"2.0"`,
 *   a method that is not a string, an id that is neither a string nor a number: -32600 (Invalid
 *   Request);
 * - a `tools/call` whose `params` is not an object with a string `name`: -32602 (Invalid params).
 *
 * A notification (no id) gets no answer over stdio, as JSON-RPC says; it is dropped.
 *
 * @param text - One message, as received (a stdio line or an HTTP body), or its parsed value.
 * @returns What is wrong (the refusal, and whether it was a notification), or `undefined` to pass
 *   the message on.
 * @example
 * checkJsonRpc('{"jsonrpc":"1.0","id":1,"method":"tools/list"}')?.refusal.error.code // -32600
 */
export function checkJsonRpc(text: string): JsonRpcVerdict | undefined {
  let message: unknown
  try {
    message = JSON.parse(text)
  } catch {
    return verdict(null, -32700, 'Parse error: the message is not valid JSON.', false)
  }
  return checkJsonRpcMessage(message)
}

/**
 * {@link checkJsonRpc} for a message already parsed.
 *
 * @param message - The parsed JSON.
 * @returns What is wrong, or `undefined`.
 * @example
 * checkJsonRpcMessage([{ jsonrpc: '2.0', id: 1, method: 'tools/list' }]) // -32600: no batches
 */
export function checkJsonRpcMessage(message: unknown): JsonRpcVerdict | undefined {
  if (Array.isArray(message)) {
    return verdict(
      null,
      -32600,
      'Invalid Request: batches (JSON arrays) are not supported; send one message at a time.',
      false,
    )
  }
  if (!isPlainObject(message)) {
    return verdict(null, -32600, 'Invalid Request: a message is a JSON object.', false)
  }
  const hasId = 'id' in message
  const { id, method, params } = message
  const validId = typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id))
  const answerId = validId ? id : null
  if (hasId && !validId && id !== null) {
    return verdict(null, -32600, 'Invalid Request: "id" must be a string or a number.', false)
  }
  const bad = (code: JsonRpcRefusal['error']['code'], text: string) =>
    verdict(answerId, code, text, !hasId)
  if (message.jsonrpc !== '2.0') {
    return bad(-32600, 'Invalid Request: "jsonrpc" must be "2.0".')
  }
  const isResponse = !('method' in message) && ('result' in message || 'error' in message)
  if (isResponse) return undefined
  if (typeof method !== 'string') {
    return bad(-32600, 'Invalid Request: "method" must be a string.')
  }
  if (method === 'tools/call' && !(isPlainObject(params) && typeof params.name === 'string')) {
    return bad(
      -32602,
      'Invalid params: tools/call needs params { name, arguments }, with the tool name as a string.',
    )
  }
  return undefined
}

/**
 * A request id this server echoes as it came: a string, or an integer.
 *
 * @param value - The message's `id`.
 * @returns Whether it is one.
 * @example
 * isRequestId(1) // true; isRequestId(1.5) // false
 */
export function isRequestId(value: unknown): value is string | number {
  return typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value))
}

/**
 * Params that ask for nothing: absent, or `{}` (no cursor, no `_meta`).
 *
 * @param params - The message's `params`.
 * @returns Whether they are empty.
 * @example
 * isEmptyParams({ cursor: 'x' }) // false
 */
export function isEmptyParams(params: unknown): boolean {
  return params === undefined || (isPlainObject(params) && Object.keys(params).length === 0)
}

function verdict(
  id: string | number | null,
  code: JsonRpcRefusal['error']['code'],
  message: string,
  notification: boolean,
): JsonRpcVerdict {
  return { refusal: { jsonrpc: '2.0', id, error: { code, message } }, notification }
}

/**
 * A stdio line filter: passes every valid message line on unchanged, and for each line
 * {@link checkJsonRpc} refuses, calls `answer` with the refusal (none for a bad notification) and
 * drops the line.
 *
 * @param answer - Writes a refusal to the client.
 * @returns A transform to pipe the client's lines through.
 * @example
 * process.stdin.pipe(jsonRpcLineFilter((refusal) => process.stdout.write(`${JSON.stringify(refusal)}\n`)))
 */
export function jsonRpcLineFilter(answer: (refusal: JsonRpcRefusal) => void): Transform {
  const decoder = new StringDecoder('utf8')
  let partial = ''
  const pass = (line: string, push: (text: string) => void) => {
    const text = line.replace(/\r$/, '')
    if (text.trim() === '') return push(`${line}\n`)
    const found = checkJsonRpc(text)
    if (found === undefined) return push(`${line}\n`)
    if (!found.notification) answer(found.refusal)
  }
  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      const lines = (partial + decoder.write(chunk)).split('\n')
      partial = lines.pop() ?? ''
      for (const line of lines) pass(line, (text) => this.push(text))
      done()
    },
    flush(done: TransformCallback) {
      const rest = partial + decoder.end()
      if (rest !== '') pass(rest, (text) => this.push(text))
      done()
    },
  })
}
