/**
 * The JSON-RPC check in front of the MCP SDK holds every message to the SDK's own envelope: what the
 * SDK would drop unanswered, the check refuses with JSON-RPC's own error, and it lets through what
 * the SDK takes. Generated envelopes, compared with the SDK's parser itself (so that an SDK update
 * that changes the envelope fails here, not in a client waiting for an answer).
 */
import { parseJSONRPCMessage } from '@modelcontextprotocol/server'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { checkJsonRpc, checkJsonRpcMessage } from '../../src/mcp/jsonRpcCheck.js'
import { envelopeText, owedAnswer } from '../support/mcpEnvelopes.js'

const sdkTakes = (message: unknown) => {
  try {
    parseJSONRPCMessage(message)
    return true
  } catch {
    return false
  }
}

/** The one thing the check refuses that the SDK's envelope takes: it would answer a dump for it. */
const toolsCallWithoutName = /^Invalid params: tools\/call needs params/

describe('checkJsonRpcMessage', () => {
  it('refuses exactly what the MCP SDK drops, with a short JSON-RPC error under the owed id: 5,000 generated envelopes', () => {
    fc.assert(
      fc.property(envelopeText, (text) => {
        const message: unknown = JSON.parse(text)
        const verdict = checkJsonRpcMessage(message)
        if (verdict === undefined) {
          expect(sdkTakes(message), text).toBe(true)
          return
        }
        if (sdkTakes(message))
          expect(verdict.refusal.error.message, text).toMatch(toolsCallWithoutName)
        const owed = owedAnswer(text)
        expect(verdict.silent, text).toBe(!owed.answer)
        if (owed.answer) expect(verdict.refusal.id, text).toBe(owed.id)
        expect([-32600, -32602]).toContain(verdict.refusal.error.code)
        expect(verdict.refusal.error.message.length, text).toBeLessThan(400)
        expect(verdict.refusal.error.message).not.toMatch(/\n|invalid_type|"path"/)
      }),
      { numRuns: 5_000 },
    )
  })

  it('names what is wrong: an extra member, a null id, an odd progress token, params that are not an object', () => {
    const cases: [string, number, string | number | null, RegExp][] = [
      [
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"vault_status"},"extra":1}',
        -32600,
        1,
        /unknown member "extra"/,
      ],
      [
        '{"jsonrpc":"2.0","id":2,"method":"tools/list","__proto__":{"x":1}}',
        -32600,
        2,
        /unknown member "__proto__"/,
      ],
      ['{"jsonrpc":"2.0","id":null,"method":"tools/list"}', -32600, null, /"id" must be/],
      ['{"jsonrpc":"2.0","id":1.5,"method":"ping"}', -32600, 1.5, /"id" must be/],
      [
        '{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{"_meta":{"progressToken":{}}}}',
        -32602,
        'a',
        /progressToken/,
      ],
      ['{"jsonrpc":"2.0","id":4,"method":"tools/list","params":[]}', -32602, 4, /JSON object/],
      ['{"jsonrpc":"2.0","id":5,"method":"ping","params":null}', -32602, 5, /JSON object/],
    ]
    for (const [text, code, id, reason] of cases) {
      const verdict = checkJsonRpc(text)
      expect(sdkTakes(JSON.parse(text)), text).toBe(false)
      expect(verdict?.refusal, text).toMatchObject({ jsonrpc: '2.0', id, error: { code } })
      expect(verdict?.refusal.error.message, text).toMatch(reason)
      expect(verdict?.silent, text).toBe(false)
    }
  })

  it('a notification or a response that is not valid is refused silently: JSON-RPC answers neither', () => {
    for (const text of [
      '{"jsonrpc":"2.0","method":"notifications/initialized","extra":true}',
      '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"_meta":[]}}',
      '{"jsonrpc":"2.0","id":1,"result":[]}',
      '{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}}',
    ]) {
      expect(checkJsonRpc(text)?.silent, text).toBe(true)
    }
    expect(checkJsonRpc('{"jsonrpc":"2.0","error":{"code":-32700,"message":"x"}}')).toBeUndefined()
  })
})
