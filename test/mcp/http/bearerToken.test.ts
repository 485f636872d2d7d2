import { expect, it } from 'vitest'
import { bearerToken } from '../../../src/mcp/http/bearerToken.js'
import { errorBody, requestFacts, sent } from '../../support/httpCheck.js'

const token = 'unit-token-0123456789abcdef'
const check = bearerToken(token)

it('passes the token after Bearer, whatever the scheme’s case and the spaces around it', () => {
  for (const authorization of [`Bearer ${token}`, `bearer ${token}`, `BEARER   ${token}  `]) {
    expect(check(requestFacts({ authorization })), authorization).toBeUndefined()
  }
})

it('refuses no header, a wrong, longer or shorter token, the bare token and another scheme: 401 with WWW-Authenticate, never echoing the token', async () => {
  for (const headers of <Record<string, string>[]>[
    {},
    { authorization: 'Bearer wrong' },
    { authorization: `Bearer ${token}x` },
    { authorization: `Bearer ${token.slice(0, -1)}` },
    { authorization: token },
    { authorization: `Basic ${token}` },
    { authorization: `Bearer ${token} extra` },
  ]) {
    const answer = await sent(check(requestFacts(headers)))
    expect(answer, JSON.stringify(headers)).toEqual({
      status: 401,
      headers: {
        'content-type': 'application/json',
        'www-authenticate': 'Bearer realm="x402-vault"',
      },
      body: errorBody(
        'This server needs the header "Authorization: Bearer <token>" with the token it was started with (VAULT_MCP_HTTP_TOKEN).',
        'UNAUTHORIZED',
      ),
    })
    expect(answer.body).not.toContain(token.slice(0, 8))
  }
})

it('without a token, passes every request', () => {
  expect(bearerToken(undefined)(requestFacts())).toBeUndefined()
  expect(bearerToken(undefined)(requestFacts({ authorization: 'Bearer anything' }))).toBeUndefined()
})
