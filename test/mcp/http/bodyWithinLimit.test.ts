import { expect, it } from 'vitest'
import { bodyWithinLimit } from '../../../src/mcp/http/bodyWithinLimit.js'
import { readBody } from '../../../src/mcp/http/readBody.js'
import { errorBody, sent } from '../../support/httpCheck.js'

const post = (body: string, headers: Record<string, string> = {}) =>
  new Request('http://localhost/mcp', { method: 'POST', body, headers })

it('reads a body up to the limit, byte for byte, and stops one byte past it', async () => {
  expect(await readBody(post('é'.repeat(8)), 16)).toBe('é'.repeat(8))
  expect(await readBody(post(`${'é'.repeat(8)}x`), 16)).toBeUndefined()
  expect(await readBody(new Request('http://localhost/mcp', { method: 'POST' }), 16)).toBe('')
  // A Content-Length past the limit is refused before reading.
  expect(await readBody(post('{}', { 'content-length': '17' }), 16)).toBeUndefined()
})

it('passes a whole body on; 413 BODY_TOO_LARGE past the limit', async () => {
  expect(bodyWithinLimit('{}', false, 16)).toEqual({ body: '{}' })
  expect(bodyWithinLimit('', false, 16)).toEqual({ body: '' })
  expect(await sent(bodyWithinLimit(undefined, false, 65_536).refusal)).toEqual({
    status: 413,
    headers: { 'content-type': 'application/json' },
    body: errorBody(
      'The request body is larger than 65536 bytes, the most this server reads.',
      'BODY_TOO_LARGE',
    ),
  })
})

it('a client that hung up while its body was read: 499 with no body, whatever was read', async () => {
  for (const body of [undefined, '{}']) {
    const { refusal } = bodyWithinLimit(body, true, 16)
    expect(refusal?.reason).toBe('CLIENT_CLOSED')
    expect(await sent(refusal)).toEqual({ status: 499, headers: {}, body: '' })
  }
})
