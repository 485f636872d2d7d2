import { expect, it } from 'vitest'
import { withinRateLimit } from '../../../src/mcp/http/withinRateLimit.js'
import { errorBody, requestFacts, sent } from '../../support/httpCheck.js'

it('passes a minute’s worth at once, then refuses with 429 and Retry-After until a token refills', async () => {
  let now = 1_000
  const check = withinRateLimit(6, () => now)
  const alice = requestFacts({}, { client: 'alice' })
  for (let request = 0; request < 6; request++) expect(check(alice)).toBeUndefined()
  // One token a 10 s: the next is 10 s away.
  expect(await sent(check(alice))).toEqual({
    status: 429,
    headers: { 'content-type': 'application/json', 'retry-after': '10' },
    body: errorBody('Too many requests from this client: try again in 10 s.', 'RATE_LIMITED'),
  })
  // A refused request costs nothing; part of a token rounds the wait up to whole seconds.
  now += 500
  expect((await sent(check(alice))).headers['retry-after']).toBe('10')
  now += 8_600
  expect((await sent(check(alice))).headers['retry-after']).toBe('1')
  now += 1_000
  expect(check(alice)).toBeUndefined()
  expect(check(alice)).toBeDefined()
})

it('counts each client on its own', () => {
  const check = withinRateLimit(1, () => 0)
  expect(check(requestFacts({}, { client: 'alice' }))).toBeUndefined()
  expect(check(requestFacts({}, { client: 'alice' }))?.reason).toBe('RATE_LIMITED')
  expect(check(requestFacts({}, { client: 'bob' }))).toBeUndefined()
})

it('past 10,000 clients it forgets only buckets that have refilled: a client still short stays limited', () => {
  let now = 0
  const check = withinRateLimit(1, () => now)
  for (let client = 0; client < 10_000; client++) {
    expect(check(requestFacts({}, { client: `c${client}` }))).toBeUndefined()
  }
  now = 30_000
  // A new client makes it look for refilled buckets: after half a minute, none has.
  expect(check(requestFacts({}, { client: 'new' }))).toBeUndefined()
  expect(check(requestFacts({}, { client: 'c0' }))?.reason).toBe('RATE_LIMITED')
})
