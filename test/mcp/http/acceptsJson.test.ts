import { expect, it } from 'vitest'
import { acceptsJson } from '../../../src/mcp/http/acceptsJson.js'
import { errorBody, requestFacts, sent } from '../../support/httpCheck.js'

it('passes no Accept, an empty one, and any that allows JSON', () => {
  expect(acceptsJson(requestFacts())).toBeUndefined()
  for (const accept of [
    '',
    'application/json',
    'application/json, text/event-stream',
    'text/event-stream, application/*',
    'text/html, */*;q=0.1',
    'APPLICATION/JSON;q=1',
  ]) {
    expect(acceptsJson(requestFacts({ accept })), accept).toBeUndefined()
  }
})

it('refuses an Accept without JSON or that rules it out with q=0: 406 NOT_ACCEPTABLE', async () => {
  for (const accept of ['text/html', 'text/event-stream', 'application/json;q=0', '*/*; q=0.000']) {
    expect(await sent(acceptsJson(requestFacts({ accept }))), accept).toEqual({
      status: 406,
      headers: { 'content-type': 'application/json' },
      body: errorBody(
        'This server answers with JSON: Accept must allow application/json (as application/json, application/* or */*), or be left out.',
        'NOT_ACCEPTABLE',
      ),
    })
  }
})
