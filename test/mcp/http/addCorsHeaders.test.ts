import { expect, it } from 'vitest'
import { addCorsHeaders } from '../../../src/mcp/http/addCorsHeaders.js'

const allowed = new Set(['https://app.example.com'])
const headersOf = (response: Response) => {
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    headers[name] = value
  })
  return headers
}
const answer = () =>
  new Response('{}', {
    status: 429,
    headers: { 'content-type': 'application/json', 'retry-after': '3' },
  })

it('lets an allowed origin read any answer (a refusal too) and the headers a client reads; Vary: Origin', async () => {
  const response = addCorsHeaders(answer(), 'https://app.example.com', allowed)
  expect(headersOf(response)).toEqual({
    'content-type': 'application/json',
    'retry-after': '3',
    'access-control-allow-origin': 'https://app.example.com',
    'access-control-expose-headers': 'mcp-session-id, retry-after, www-authenticate',
    vary: 'Origin',
  })
  expect([response.status, await response.text()]).toEqual([429, '{}'])
})

it('another origin and a non-browser client get no CORS headers, only Vary: Origin; with no origin allowed, nothing changes', () => {
  for (const origin of ['https://evil.example', null]) {
    expect(headersOf(addCorsHeaders(answer(), origin, allowed)), String(origin)).toEqual({
      'content-type': 'application/json',
      'retry-after': '3',
      vary: 'Origin',
    })
  }
  const untouched = answer()
  expect(addCorsHeaders(untouched, 'https://app.example.com', new Set())).toBe(untouched)
  expect(headersOf(untouched)).toEqual({ 'content-type': 'application/json', 'retry-after': '3' })
})

it('keeps a Vary already there, once; copies a response whose headers cannot change', async () => {
  const varied = new Response(null, { headers: { vary: 'Accept, origin' } })
  expect(addCorsHeaders(varied, null, allowed).headers.get('vary')).toBe('Accept, origin')
  const fetched = Response.redirect('https://example.com/', 302)
  const copy = addCorsHeaders(fetched, 'https://app.example.com', allowed)
  expect(copy.status).toBe(302)
  expect(copy.headers.get('access-control-allow-origin')).toBe('https://app.example.com')
})
