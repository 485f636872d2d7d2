import { expect, it } from 'vitest'
import { jsonContentType } from '../../../src/mcp/http/jsonContentType.js'
import { errorBody, requestFacts, sent } from '../../support/httpCheck.js'

it('passes application/json in any case, with parameters', () => {
  for (const type of [
    'application/json',
    'Application/JSON; charset=utf-8',
    ' application/json ;x=1',
  ]) {
    expect(jsonContentType(requestFacts({ 'content-type': type })), type).toBeUndefined()
  }
})

it('refuses another type or none: 415 UNSUPPORTED_MEDIA_TYPE', async () => {
  for (const headers of <Record<string, string>[]>[
    {},
    { 'content-type': 'application/x-www-form-urlencoded' },
    { 'content-type': 'text/plain' },
    { 'content-type': 'application/json-seq' },
  ]) {
    expect(await sent(jsonContentType(requestFacts(headers))), JSON.stringify(headers)).toEqual({
      status: 415,
      headers: { 'content-type': 'application/json' },
      body: errorBody(
        'Content-Type must be application/json: the body is one JSON-RPC message.',
        'UNSUPPORTED_MEDIA_TYPE',
      ),
    })
  }
})
