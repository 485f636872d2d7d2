import { expect, it } from 'vitest'
import { parseJsonBody } from '../../../src/mcp/http/parseJsonBody.js'
import { errorBody, sent } from '../../support/httpCheck.js'

it('parses JSON, whatever its shape (the envelope is judged after)', () => {
  expect(parseJsonBody('{"jsonrpc":"2.0","id":1,"method":"ping"}')).toEqual({
    message: { jsonrpc: '2.0', id: 1, method: 'ping' },
  })
  expect(parseJsonBody('[1,2]')).toEqual({ message: [1, 2] })
  expect(parseJsonBody('null')).toEqual({ message: null })
})

it('refuses what is not JSON: 400 PARSE_ERROR with -32700 and id null', async () => {
  for (const body of ['{"jsonrpc": "2.0", "id": 1, "method": ', '', 'x=1']) {
    expect(await sent(parseJsonBody(body).refusal), body).toEqual({
      status: 400,
      headers: { 'content-type': 'application/json' },
      body: errorBody('Parse error: the body is not valid JSON.', 'PARSE_ERROR', { code: -32700 }),
    })
  }
})
