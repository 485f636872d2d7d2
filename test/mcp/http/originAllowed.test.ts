import { expect, it } from 'vitest'
import { originAllowed } from '../../../src/mcp/http/originAllowed.js'
import { errorBody, requestFacts, sent } from '../../support/httpCheck.js'

const check = originAllowed(new Set(['https://app.example.com']))

it('passes a request without Origin (a non-browser client) and one from an allowed origin', () => {
  expect(check(requestFacts())).toBeUndefined()
  expect(check(requestFacts({ origin: 'https://app.example.com' }))).toBeUndefined()
})

it('refuses any other origin, even a near one: 403 ORIGIN_NOT_ALLOWED, at most 100 characters quoted', async () => {
  for (const origin of ['https://evil.example', 'http://app.example.com', 'null']) {
    expect(await sent(check(requestFacts({ origin }))), origin).toEqual({
      status: 403,
      headers: { 'content-type': 'application/json' },
      body: errorBody(
        `Origin ${JSON.stringify(origin)} may not call this server (a guard against DNS rebinding). To let a web app call it, add its origin to VAULT_MCP_ALLOWED_ORIGINS.`,
        'ORIGIN_NOT_ALLOWED',
      ),
    })
  }
  const long = `https://${'a'.repeat(200)}.example`
  const { body } = await sent(check(requestFacts({ origin: long })))
  expect(JSON.parse(body).error.message).toContain(JSON.stringify(long.slice(0, 100)))
})
