import { expect, it } from 'vitest'
import { corsPreflight } from '../../../src/mcp/http/corsPreflight.js'
import { requestFacts, sent } from '../../support/httpCheck.js'

const allowed = 'https://app.example.com'
const check = corsPreflight(new Set([allowed]))
const preflight = (origin: string, extra: Record<string, string> = {}) =>
  requestFacts({ origin, 'access-control-request-method': 'POST', ...extra }, { method: 'OPTIONS' })

it('answers an allowed origin’s preflight: 204, POST, the headers the MCP SDK sends, two hours, no body', async () => {
  expect(
    await sent(check(preflight(allowed, { 'access-control-request-headers': 'content-type' }))),
  ).toEqual({
    status: 204,
    headers: {
      'access-control-allow-origin': allowed,
      'access-control-allow-methods': 'POST',
      'access-control-allow-headers':
        'content-type, accept, authorization, mcp-protocol-version, mcp-session-id, mcp-method, mcp-name, last-event-id',
      'access-control-max-age': '7200',
      vary: 'Origin',
    },
    body: '',
  })
  expect(check(preflight(allowed))?.reason).toBe('CORS_PREFLIGHT')
})

it('lets anything else through to the checks after it: another origin, no Origin, an OPTIONS that is no preflight, a POST', () => {
  expect(check(preflight('https://evil.example'))).toBeUndefined()
  expect(
    check(requestFacts({ 'access-control-request-method': 'POST' }, { method: 'OPTIONS' })),
  ).toBeUndefined()
  expect(check(requestFacts({ origin: allowed }, { method: 'OPTIONS' }))).toBeUndefined()
  expect(
    check(requestFacts({ origin: allowed, 'access-control-request-method': 'POST' })),
  ).toBeUndefined()
  expect(corsPreflight(new Set())(preflight(allowed))).toBeUndefined()
})
