import { expect, it } from 'vitest'
import { validJsonRpc } from '../../../src/mcp/http/validJsonRpc.js'
import { sent } from '../../support/httpCheck.js'

it('passes a request, a notification and a response', () => {
  expect(validJsonRpc({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).toBeUndefined()
  expect(validJsonRpc({ jsonrpc: '2.0', method: 'notifications/initialized' })).toBeUndefined()
  expect(validJsonRpc({ jsonrpc: '2.0', id: 1, result: {} })).toBeUndefined()
})

it('refuses an invalid message with 400 and JSON-RPC’s own error as the body, even a notification', async () => {
  for (const [message, body] of [
    [
      { jsonrpc: '1.0', id: 3, method: 'tools/list' },
      '{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid Request: \\"jsonrpc\\" must be \\"2.0\\"."}}',
    ],
    [
      [{ jsonrpc: '2.0', id: 4, method: 'tools/list' }],
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: batches (JSON arrays) are not supported; send one message at a time."}}',
    ],
    [
      { jsonrpc: '2.0', id: 5, method: 'tools/call' },
      '{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Invalid params: tools/call needs params { name, arguments }, with the tool name as a string."}}',
    ],
    [
      { jsonrpc: '2.0', method: 'notifications/x', params: [] },
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"Invalid params: \\"params\\" must be a JSON object."}}',
    ],
  ] as const) {
    const refusal = validJsonRpc(message)
    expect(refusal?.reason).toBe('INVALID_MESSAGE')
    expect(await sent(refusal)).toEqual({
      status: 400,
      headers: { 'content-type': 'application/json' },
      body,
    })
  }
})
