import { Transform, type TransformCallback } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import { isPlainObject } from './isPlainObject.js'

/** What {@link checkJsonRpc} found wrong: the answer, and whether JSON-RPC lets it be sent. */
export type JsonRpcVerdict = {
  /** The JSON-RPC error answer (its id `null` when the message had no id that can be echoed). */
  refusal: JsonRpcRefusal
  /**
   * A notification (no id) or a response: JSON-RPC answers neither, so over stdio the message is
   * dropped unanswered (and logged); over HTTP the refusal is the body of a 400.
   */
  silent: boolean
}

/** A JSON-RPC error answer to a message the server cannot take, as JSON-RPC 2.0 prescribes. */
export type JsonRpcRefusal = {
  jsonrpc: '2.0'
  id: string | number | null
  error: { code: -32700 | -32600 | -32602; message: string }
}

/**
 * Checks one inbound message the way JSON-RPC 2.0 and MCP's envelope do, before the MCP SDK sees it:
 * the SDK drops a message that does not fit its envelope without a word (so a client would wait for
 * an answer that never comes), and answers a `tools/call` without `params` with -32603 and a raw
 * validation dump. What it refuses:
 * - not JSON: -32700 (Parse error);
 * - a batch (an array: MCP since 2025-06-18 has none), a non-object, `jsonrpc` other than `"2.0"`,
 *   an `id` that is neither a string nor a safe integer (`null` included), a member other than
 *   `jsonrpc`, `id`, `method` and `params` (`result` or `error` for a response), a method that is not
 *   a string: -32600 (Invalid Request);
 * - `params` that are not an object, a `_meta` that is not an object or carries a `progressToken`
 *   that is neither a string nor a safe integer, a `tools/call` without a string `name`: -32602
 *   (Invalid params).
 *
 * @param text - One message, as received (a stdio line or an HTTP body).
 * @returns What is wrong (the refusal, and whether it may be sent), or `undefined` to pass the
 *   message on.
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

/** The members each kind of message may have, as the MCP SDK's envelope allows them. */
const requestKeys = ['jsonrpc', 'id', 'method', 'params']
const resultKeys = ['jsonrpc', 'id', 'result']
const errorKeys = ['jsonrpc', 'id', 'error']
/** `_meta` keys whose value the MCP SDK checks in every request's envelope. */
const relatedTaskKey = 'io.modelcontextprotocol/related-task'

const toolsCallParams =
  'Invalid params: tools/call needs params { name, arguments }, with the tool name as a string.'

/**
 * {@link checkJsonRpc} for a message already parsed. It holds a message to the envelope the MCP SDK
 * parses every message with (a test keeps the two in step), so that whatever the SDK would drop
 * unanswered gets JSON-RPC's own error here instead.
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
  const hasId = Object.hasOwn(message, 'id')
  const { id } = message
  // An id that can be echoed is, so that the client can tell which request was refused (even 1.5);
  // any other (null, an object) is answered with null, as JSON-RPC prescribes.
  const answerId =
    typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null
  const isResponse =
    !Object.hasOwn(message, 'method') &&
    (Object.hasOwn(message, 'result') || Object.hasOwn(message, 'error'))
  const bad = (code: JsonRpcRefusal['error']['code'], text: string) =>
    verdict(answerId, code, text, isResponse || !hasId)
  if (message.jsonrpc !== '2.0') return bad(-32600, 'Invalid Request: "jsonrpc" must be "2.0".')
  // A result must name its request; an error may not be able to.
  const idRequired = isResponse && Object.hasOwn(message, 'result')
  if ((hasId || idRequired) && !isRequestId(id)) {
    return bad(-32600, 'Invalid Request: "id" must be a string or an integer, not null.')
  }
  const allowed = isResponse ? (idRequired ? resultKeys : errorKeys) : requestKeys
  const unknown = Object.keys(message).filter((key) => !allowed.includes(key))
  if (unknown.length > 0) {
    const kind = isResponse ? 'response' : 'message'
    return bad(
      -32600,
      `Invalid Request: unknown member ${quoteKeys(unknown)}; a ${kind} has only ${allowed.join(', ')}.`,
    )
  }
  if (isResponse) {
    const problem = responseProblem(message)
    return problem === undefined ? undefined : bad(-32600, `Invalid Request: ${problem}`)
  }
  if (typeof message.method !== 'string') {
    return bad(-32600, 'Invalid Request: "method" must be a string.')
  }
  const { params } = message
  if (params !== undefined) {
    if (!isPlainObject(params)) {
      return bad(-32602, 'Invalid params: "params" must be a JSON object.')
    }
    const problem = metaProblem(params._meta)
    if (problem !== undefined) return bad(-32602, `Invalid params: ${problem}`)
  }
  if (
    message.method === 'tools/call' &&
    !(isPlainObject(params) && typeof params.name === 'string')
  ) {
    return bad(-32602, toolsCallParams)
  }
  return undefined
}

/** What the MCP SDK's envelope refuses in a request's `params._meta`, or `undefined`. */
function metaProblem(meta: unknown): string | undefined {
  if (meta === undefined) return undefined
  if (!isPlainObject(meta)) return '"params._meta" must be a JSON object.'
  if (meta.progressToken !== undefined && !isRequestId(meta.progressToken)) {
    return '"params._meta.progressToken" must be a string or an integer.'
  }
  const task = meta[relatedTaskKey]
  if (task !== undefined && !(isPlainObject(task) && typeof task.taskId === 'string')) {
    return `"params._meta['${relatedTaskKey}']" must be { taskId } with a string taskId.`
  }
  return undefined
}

/** What the MCP SDK's envelope refuses in a response (a result or an error), or `undefined`. */
function responseProblem(message: Record<string, unknown>): string | undefined {
  if (Object.hasOwn(message, 'result')) {
    const { result } = message
    if (!isPlainObject(result)) return '"result" must be a JSON object.'
    if (result._meta !== undefined && !isPlainObject(result._meta)) {
      return '"result._meta" must be a JSON object.'
    }
    return undefined
  }
  const { error } = message
  if (
    !isPlainObject(error) ||
    !Number.isSafeInteger(error.code) ||
    typeof error.message !== 'string'
  ) {
    return '"error" must be { code, message } with an integer code and a string message.'
  }
  return undefined
}

/** The unknown members' names, quoted and joined, cut so that a huge name makes no huge answer. */
function quoteKeys(keys: readonly string[]): string {
  const text = keys.map((key) => JSON.stringify(key.slice(0, 64))).join(', ')
  return text.length > 200 ? `${text.slice(0, 199)}… (${keys.length} in all)` : text
}

/**
 * A request id as MCP takes it: a string, or a safe integer (the MCP SDK refuses any other number).
 *
 * @param value - The message's `id`.
 * @returns Whether it is one.
 * @example
 * isRequestId(1) // true; isRequestId(1.5) // false
 */
export function isRequestId(value: unknown): value is string | number {
  return typeof value === 'string' || Number.isSafeInteger(value)
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
  silent: boolean,
): JsonRpcVerdict {
  return { refusal: { jsonrpc: '2.0', id, error: { code, message } }, silent }
}

/**
 * A stdio line filter: passes every valid message line on unchanged, and for each line
 * {@link checkJsonRpc} refuses, calls `refuse` with the verdict (the caller answers it, or logs a
 * silent one) and drops the line.
 *
 * @param refuse - Answers a refusal to the client, or logs one that JSON-RPC lets nobody answer.
 * @returns A transform to pipe the client's lines through.
 * @example
 * process.stdin.pipe(jsonRpcLineFilter(({ refusal }) => process.stdout.write(`${JSON.stringify(refusal)}\n`)))
 */
export function jsonRpcLineFilter(refuse: (verdict: JsonRpcVerdict) => void): Transform {
  const decoder = new StringDecoder('utf8')
  let partial = ''
  const pass = (line: string, push: (text: string) => void) => {
    const text = line.replace(/\r$/, '')
    if (text.trim() === '') return push(`${line}\n`)
    const found = checkJsonRpc(text)
    if (found === undefined) return push(`${line}\n`)
    refuse(found)
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
