import { expect, it } from 'vitest'
import {
  describeMessage,
  type RequestLog,
  requestLogLine,
} from '../../../src/mcp/http/requestLog.js'

it('notes the method, the tool and the id, each cut to 64 characters; of a batch, its first', () => {
  const entry: RequestLog = { method: undefined, tool: undefined }
  describeMessage(
    [{ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'x'.repeat(100) } }, {}],
    entry,
  )
  expect(entry).toEqual({ method: 'tools/call', tool: 'x'.repeat(64), id: 9 })
  const other: RequestLog = { method: undefined, tool: undefined }
  describeMessage({ method: 'tools/list', id: null, params: { name: 'not a call' } }, other)
  expect(other).toEqual({ method: 'tools/list', tool: undefined })
  describeMessage('not an object', other)
  expect(other).toEqual({ method: 'tools/list', tool: undefined })
})

it('writes one JSON line: no refusal member unless refused', () => {
  const started = performance.now()
  const served = JSON.parse(
    requestLogLine(
      { http: 'POST', client: '127.0.0.1', started },
      { method: 'ping', tool: undefined },
      200,
    ),
  )
  expect(Object.keys(served)).toEqual([
    'time',
    'http',
    'method',
    'tool',
    'status',
    'durationMs',
    'client',
  ])
  expect(served).toMatchObject({
    http: 'POST',
    method: 'ping',
    tool: null,
    status: 200,
    client: '127.0.0.1',
  })
  const line = requestLogLine(
    { http: 'GET', client: 'unknown', started },
    { method: undefined, tool: undefined, refusal: 'METHOD_NOT_ALLOWED' },
    405,
  )
  expect(line.endsWith('}\n')).toBe(true)
  expect(JSON.parse(line)).toMatchObject({
    method: null,
    status: 405,
    refusal: 'METHOD_NOT_ALLOWED',
  })
})
