import { expect, it } from 'vitest'
import {
  firstRefusal,
  type HttpCheck,
  refusalResponse,
  refuse,
} from '../../../src/mcp/http/check.js'
import { errorBody, requestFacts, sent } from '../../support/httpCheck.js'

it('runs the checks in order and stops at the first refusal; all passing is undefined', () => {
  const ran: string[] = []
  const passes =
    (name: string): HttpCheck =>
    () => {
      ran.push(name)
      return undefined
    }
  const refuses =
    (name: string): HttpCheck =>
    () => {
      ran.push(name)
      return refuse(403, name, `${name} refused`)
    }
  expect(firstRefusal([passes('a'), refuses('b'), refuses('c')], requestFacts())?.reason).toBe('b')
  expect(ran).toEqual(['a', 'b'])
  expect(firstRefusal([passes('d')], requestFacts())).toBeUndefined()
  expect(firstRefusal([], requestFacts())).toBeUndefined()
})

it('sends a refusal as a JSON-RPC error: the id, the code and extra headers as given', async () => {
  expect(await sent(refuse(500, 'INTERNAL_ERROR', 'The server hit an unexpected error.'))).toEqual({
    status: 500,
    headers: { 'content-type': 'application/json' },
    body: errorBody('The server hit an unexpected error.', 'INTERNAL_ERROR'),
  })
  const answer = refusalResponse(
    refuse(418, 'TEAPOT', 'No.', { id: 'x', code: -32001, headers: { 'retry-after': '3' } }),
  )
  expect(answer.headers.get('retry-after')).toBe('3')
  expect(await answer.text()).toBe(errorBody('No.', 'TEAPOT', { id: 'x', code: -32001 }))
})
