import { expect, it } from 'vitest'
import { hostAllowed } from '../../../src/mcp/http/hostAllowed.js'
import { errorBody, requestFacts, sent } from '../../support/httpCheck.js'

const check = hostAllowed(['localhost', '127.0.0.1:8402', '[::1]', 'not a host/'])
const refusalFor = (host: string) =>
  errorBody(
    `Host ${JSON.stringify(host)} is not an address this server answers for (a guard against DNS rebinding). Call it by a name it answers for, or add the host name you serve it under to VAULT_MCP_ALLOWED_HOSTS.`,
    'HOST_NOT_ALLOWED',
  )

it('passes a host on the list: by name on any port, by host:port on that port only', () => {
  for (const host of [
    'localhost',
    'localhost:3000',
    'LOCALHOST:8402',
    '127.0.0.1:8402',
    '[::1]:9',
  ]) {
    expect(check(requestFacts({ host })), host).toBeUndefined()
  }
})

it('refuses another host, another port, no host and a host with a user or a path: 403 HOST_NOT_ALLOWED', async () => {
  for (const host of [
    'evil.example',
    '127.0.0.1:8403',
    '127.0.0.1',
    'user@localhost',
    'localhost/x',
  ]) {
    expect(await sent(check(requestFacts({ host }))), host).toEqual({
      status: 403,
      headers: { 'content-type': 'application/json' },
      body: refusalFor(host),
    })
  }
  expect((await sent(check(requestFacts()))).body).toBe(refusalFor(''))
})

it('quotes at most 100 characters of the host it refuses', async () => {
  const host = `${'a'.repeat(150)}.example`
  expect((await sent(check(requestFacts({ host })))).body).toBe(refusalFor('a'.repeat(100)))
})
