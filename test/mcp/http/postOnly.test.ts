import { expect, it } from 'vitest'
import { postOnly } from '../../../src/mcp/http/postOnly.js'
import { errorBody, requestFacts, sent } from '../../support/httpCheck.js'

it('passes POST; refuses GET, DELETE and the rest with 405 and Allow: POST', async () => {
  expect(postOnly(requestFacts())).toBeUndefined()
  for (const method of ['GET', 'DELETE', 'PUT', 'OPTIONS']) {
    expect(await sent(postOnly(requestFacts({}, { method }))), method).toEqual({
      status: 405,
      headers: { 'content-type': 'application/json', allow: 'POST' },
      body: errorBody(
        `Method ${method} is not served: this stateless server answers POST only (no SSE stream to GET, no session to DELETE).`,
        'METHOD_NOT_ALLOWED',
      ),
    })
  }
})
