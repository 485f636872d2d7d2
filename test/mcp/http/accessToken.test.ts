import { expect, it } from 'vitest'
import { accessToken } from '../../../src/mcp/http/accessToken.js'
import { errorBody, requestFacts, sent } from '../../support/httpCheck.js'

// Nothing listens on port 9: the issuer cannot be read. The refusals of a token, checked against a real
// issuer's keys, are in test/mcp/oauth.test.ts.
const oauth = {
  issuer: 'http://127.0.0.1:9',
  resource: 'https://mcp.example.com/mcp',
  scopes: ['vault:read', 'vault:plan'],
}
const metadata = 'https://mcp.example.com/.well-known/oauth-protected-resource/mcp'
const challenge = `Bearer resource_metadata="${metadata}", scope="vault:read vault:plan"`

it('without a token: 401 naming the metadata and the scopes, before reading the issuer', async () => {
  const answer = await sent(await accessToken(oauth)(requestFacts()))
  expect(answer).toEqual({
    status: 401,
    headers: { 'content-type': 'application/json', 'www-authenticate': challenge },
    body: errorBody(
      `This server needs an OAuth access token from http://127.0.0.1:9 for https://mcp.example.com/mcp, sent as "Authorization: Bearer <token>"; its protected-resource metadata is at ${metadata}.`,
      'UNAUTHORIZED',
    ),
  })
})

it('a token sent otherwise than as a bearer token: 401 invalid_token, never echoing it', async () => {
  for (const authorization of [
    'Basic dXNlcjpwYXNz',
    'Bearer two words',
    'Bearer "quoted"',
    'eyJhbGciOiJSUzI1NiJ9.e30.c2ln',
  ]) {
    const answer = await sent(await accessToken(oauth)(requestFacts({ authorization })))
    expect(answer.status, authorization).toBe(401)
    expect(answer.headers['www-authenticate']).toBe(
      `${challenge}, error="invalid_token", error_description="send it in the header Authorization: Bearer <token>"`,
    )
    expect(answer.body).not.toContain(authorization.slice(-6))
  }
})

it('an issuer that cannot be reached: 503 with Retry-After, said to the operator without the token; tried again only after the cooldown', async () => {
  const told: string[] = []
  const check = accessToken({ ...oauth, keysRefetchCooldownMs: 60_000 }, (message) =>
    told.push(message),
  )
  const token = 'eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJ4In0.c2lnbmF0dXJl'
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const answer = await sent(await check(requestFacts({ authorization: `Bearer ${token}` })))
    expect(answer).toEqual({
      status: 503,
      headers: { 'content-type': 'application/json', 'retry-after': '30' },
      body: errorBody(
        'The access token cannot be checked now: the keys of http://127.0.0.1:9 could not be fetched. Try again shortly.',
        'AUTHORIZATION_SERVER_UNAVAILABLE',
      ),
    })
  }
  expect(told[0]).toMatch(
    /^The metadata of the authorization server http:\/\/127\.0\.0\.1:9 could not be read/,
  )
  expect(told[1]).toBe('The authorization server http://127.0.0.1:9 could not be read.')
  expect(told.join('\n')).not.toContain(token.slice(0, 20))
})
