import { expect, it } from 'vitest'
import { requestStopped } from '../../../src/mcp/http/requestStopped.js'
import { errorBody, sent } from '../../support/httpCheck.js'

it('past its time: 504 TIMEOUT under the request’s id (null without one)', async () => {
  for (const id of [7, 'abc', null, undefined]) {
    expect(await sent(requestStopped(false, 1_500, id)), String(id)).toEqual({
      status: 504,
      headers: { 'content-type': 'application/json' },
      body: errorBody('The request took longer than 1.5 s and was stopped; try again.', 'TIMEOUT', {
        id: id ?? null,
      }),
    })
  }
})

it('its client gone: 499 CLIENT_CLOSED with no body', async () => {
  const refusal = requestStopped(true, 30_000, 7)
  expect(refusal.reason).toBe('CLIENT_CLOSED')
  expect(await sent(refusal)).toEqual({ status: 499, headers: {}, body: '' })
})
