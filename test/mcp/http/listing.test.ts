import { expect, it } from 'vitest'
import { isPlainToolsList, listingAnswer } from '../../../src/mcp/http/listing.js'

it('takes only a plain tools/list for the kept listing: no cursor, no _meta, no other member', () => {
  for (const message of [
    { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    { jsonrpc: '2.0', id: 'a', method: 'tools/list', params: {} },
  ]) {
    expect(isPlainToolsList(message), JSON.stringify(message)).toBe(true)
  }
  for (const message of [
    { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { cursor: 'x' } },
    { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: {} } },
    { jsonrpc: '2.0', id: 1, method: 'tools/list', extra: 1 },
    { jsonrpc: '2.0', id: 1.5, method: 'tools/list' },
    { jsonrpc: '2.0', method: 'tools/list' },
    { jsonrpc: '2.0', id: 1, method: 'tools/call' },
    [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }],
  ]) {
    expect(isPlainToolsList(message), JSON.stringify(message)).toBe(false)
  }
})

it('answers with the listing under the request’s id, as one JSON body', async () => {
  const answer = listingAnswer('a"b', Buffer.from('{"tools":[]}'))
  expect(answer.status).toBe(200)
  expect(answer.headers.get('content-type')).toBe('application/json')
  expect(await answer.text()).toBe('{"jsonrpc":"2.0","id":"a\\"b","result":{"tools":[]}}')
})
