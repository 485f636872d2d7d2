import { expect, it } from 'vitest'
import { withinCapacity } from '../../../src/mcp/http/withinCapacity.js'
import { errorBody, requestFacts, sent } from '../../support/httpCheck.js'

it('passes below the cap; at it, 503 TOO_MANY_REQUESTS_IN_FLIGHT with Retry-After: 1', async () => {
  const load = { inFlight: 0, closed: false }
  const check = withinCapacity(2, () => load)
  expect(check(requestFacts())).toBeUndefined()
  load.inFlight = 1
  expect(check(requestFacts())).toBeUndefined()
  load.inFlight = 2
  expect(await sent(check(requestFacts()))).toEqual({
    status: 503,
    headers: { 'content-type': 'application/json', 'retry-after': '1' },
    body: errorBody(
      'The server is serving 2 requests already: try again in a second.',
      'TOO_MANY_REQUESTS_IN_FLIGHT',
    ),
  })
})

it('once draining or closed, 503 SHUTTING_DOWN even when idle', async () => {
  const check = withinCapacity(2, () => ({ inFlight: 0, closed: true }))
  expect(await sent(check(requestFacts()))).toEqual({
    status: 503,
    headers: { 'content-type': 'application/json', 'retry-after': '1' },
    body: errorBody(
      'The server is shutting down: try another replica or try again shortly.',
      'SHUTTING_DOWN',
    ),
  })
})
