import { expect, it } from 'vitest'
import { withinServerRateLimit } from '../../../src/mcp/http/withinServerRateLimit.js'
import { errorBody, requestFacts, sent } from '../../support/httpCheck.js'

it('counts every client together: past a minute’s worth, any client gets 429 with Retry-After until a token refills', async () => {
  let now = 5_000
  const check = withinServerRateLimit(6, () => now)
  for (let request = 0; request < 6; request++) {
    expect(check(requestFacts({}, { client: `client-${request}` }))).toBeUndefined()
  }
  // A client never seen before is refused all the same: the limit is the server's.
  expect(await sent(check(requestFacts({}, { client: 'newcomer' })))).toEqual({
    status: 429,
    headers: { 'content-type': 'application/json', 'retry-after': '10' },
    body: errorBody(
      'This server takes 6 requests a minute from all its clients together, and is past it: try again in 10 s.',
      'SERVER_RATE_LIMITED',
    ),
  })
  // A refused request costs nothing; the wait rounds up to whole seconds.
  now += 9_001
  expect((await sent(check(requestFacts()))).headers['retry-after']).toBe('1')
  now += 999
  expect(check(requestFacts())).toBeUndefined()
  expect(check(requestFacts())?.reason).toBe('SERVER_RATE_LIMITED')
})
