import { PassThrough, type Readable, type Writable } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import type { HandshakeAnswers } from './handshakeRecording.js'
import { isPlainObject } from './isPlainObject.js'
import { checkJsonRpcMessage, isEmptyParams, isRequestId } from './jsonRpcCheck.js'

/** A JSON-RPC request id. */
type RequestId = string | number

/** What {@link answerHandshakeEarly} leaves for the whole server. */
export type EarlyHandshake = {
  /** stdin as the whole server must read it: every byte read so far, then the rest of stdin. */
  input: Readable
  /**
   * The results already written (their JSON text), by request id. The whole server reads those
   * requests again (its state must follow the handshake), and its own answers to them are dropped,
   * not sent twice.
   */
  answered: Map<RequestId, string>
  /** stdin ended before anything needed the whole server: there is nothing left to serve. */
  closed: boolean
}

/**
 * How long after `initialize` the whole server starts loading when no `tools/list` comes: soon enough
 * that a first tool call rarely waits for it, late enough that a prompt `tools/list` never does.
 */
const loadAfterInitializeMs = 1000

/**
 * Answers the opening of an MCP session over stdio from the recorded handshake, before the MCP SDK
 * and the vault's code are loaded: a client sees `initialize` and `tools/list` answered in about the
 * time Node takes to start. Only the exact 2025-era opening is answered here (`initialize` for a
 * supported version, `notifications/initialized`, `tools/list` without a cursor); the first message
 * of any other kind, the answered `tools/list`, or a second of quiet after `initialize` hands the
 * session over, and the whole server then reads everything from the first byte.
 *
 * @param stdin - The client's messages, one JSON-RPC message per line.
 * @param stdout - Where the answers go.
 * @param recording - What the server answers, as JSON text (see `serializeHandshake`).
 * @param gone - Aborted when the client has closed its end of stdout: the session is over.
 * @returns When the whole server is needed (or stdin has ended): what it must read, and the ids
 *   already answered.
 * @example
 * const early = await answerHandshakeEarly(process.stdin, process.stdout, recording)
 */
export function answerHandshakeEarly(
  stdin: Readable,
  stdout: Writable,
  recording: HandshakeAnswers,
  gone?: AbortSignal,
): Promise<EarlyHandshake> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    const decoder = new StringDecoder('utf8')
    const answered = new Map<RequestId, string>()
    let text = ''
    let negotiated: string | undefined
    let done = false
    let quiet: NodeJS.Timeout | undefined

    const finish = (closed: boolean) => {
      done = true
      clearTimeout(quiet)
      stdin.off('data', onData)
      stdin.off('end', onEnd)
      gone?.removeEventListener('abort', onEnd)
      if (closed) return resolve({ input: stdin, answered, closed })
      stdin.pause()
      const input = new PassThrough()
      for (const chunk of chunks) input.write(chunk)
      stdin.pipe(input)
      resolve({ input, answered, closed })
    }
    const handOver = () => {
      if (!done) finish(false)
    }
    const answer = (id: RequestId, result: string) => {
      answered.set(id, result)
      stdout.write(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${result}}\n`)
    }
    /** Answers one line; false when the whole server must. */
    const onLine = (line: string): boolean => {
      const message = parseObject(line.replace(/\r$/, ''))
      // Anything the whole server would refuse is left to it, so that it is answered once.
      if (message === undefined || checkJsonRpcMessage(message) !== undefined) return false
      const { id, method, params } = message
      if ('id' in message && (!isRequestId(id) || answered.has(id))) return false
      if (method === 'initialize' && negotiated === undefined && isRequestId(id)) {
        if (!isHandshakeParams(params)) return false
        const result = recording.initialize[params.protocolVersion]
        if (result === undefined) return false
        answer(id, result)
        // The server answers each supported version with itself (the recording's test checks it).
        negotiated = params.protocolVersion
        quiet = setTimeout(handOver, loadAfterInitializeMs)
        return true
      }
      if (method === 'notifications/initialized' && negotiated !== undefined)
        return !('id' in message)
      if (method === 'tools/list' && negotiated !== undefined && isRequestId(id)) {
        if (!isEmptyParams(params)) return false
        answer(id, recording.toolsList)
        // The listing is what a client waits for at start: load the rest once it has gone out.
        setImmediate(handOver)
        return true
      }
      return false
    }
    const onData = (chunk: Buffer | string) => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
      chunks.push(bytes)
      text += decoder.write(bytes)
      for (let end = text.indexOf('\n'); end >= 0 && !done; end = text.indexOf('\n')) {
        const line = text.slice(0, end)
        text = text.slice(end + 1)
        if (!onLine(line)) return handOver()
      }
    }
    const onEnd = () => {
      if (!done) finish(true)
    }
    stdin.on('data', onData)
    stdin.on('end', onEnd)
    // The client closed its end of stdout: there is nobody to answer.
    if (gone?.aborted) onEnd()
    else gone?.addEventListener('abort', onEnd, { once: true })
  })
}

function parseObject(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line)
    return isPlainObject(value) ? value : undefined
  } catch {
    return undefined
  }
}

/** `initialize` params as every 2025-era client sends them, with no 2026 envelope (`_meta`). */
function isHandshakeParams(params: unknown): params is { protocolVersion: string } {
  if (!isPlainObject(params) || '_meta' in params) return false
  const { protocolVersion, capabilities, clientInfo } = params
  return (
    typeof protocolVersion === 'string' &&
    isPlainObject(capabilities) &&
    isPlainObject(clientInfo) &&
    typeof clientInfo.name === 'string' &&
    typeof clientInfo.version === 'string'
  )
}
