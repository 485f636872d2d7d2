import fc from 'fast-check'
import { mcpToolNames } from '../../harness/mcpToolNames.js'
import { json } from './arbitraries.js'

/**
 * Generated JSON-RPC envelopes, well-formed or not, as careless clients send them: extra and missing
 * members (`__proto__` too), every JSON type for `id`, `method`, `params` and `_meta`, responses and
 * notifications. Tool arguments stay simple: the tools' own property tests cover those.
 */

/** The members a message may have, with a value of any kind; `undefined` leaves a member out. */
const idValue = fc.oneof(
  { arbitrary: fc.integer({ min: 0, max: 1_000_000 }), weight: 4 },
  { arbitrary: fc.string({ maxLength: 12 }), weight: 2 },
  fc.constantFrom(null, true, false, 1.5, -0, 2 ** 53, 1e21, -(2 ** 53) - 2),
  fc.constant({}),
  fc.constant([1]),
)

const method = fc.oneof(
  { arbitrary: fc.constantFrom('tools/list', 'tools/call', 'ping'), weight: 8 },
  fc.constantFrom(
    'notifications/initialized',
    'notifications/cancelled',
    'resources/list',
    'prompts/list',
    'logging/setLevel',
    'completion/complete',
    'no/such/method',
  ),
  fc.string({ maxLength: 16 }),
  json.filter((value) => typeof value !== 'string'),
)

const progressToken = fc.oneof(
  fc.integer(),
  fc.string({ maxLength: 8 }),
  fc.constantFrom(1.5, null, true, 2 ** 60),
  fc.constant({}),
  fc.constant([]),
)

const meta = fc.oneof(
  { arbitrary: fc.record({ progressToken }, { requiredKeys: [] }), weight: 3 },
  fc.record(
    {
      progressToken,
      'io.modelcontextprotocol/related-task': fc.oneof(
        fc.record({ taskId: fc.oneof(fc.string({ maxLength: 6 }), fc.integer()) }),
        json,
      ),
      other: json,
    },
    { requiredKeys: [] },
  ),
  json,
)

const toolCallParams = fc.record(
  {
    name: fc.oneof(
      { arbitrary: fc.constantFrom('vault_status', 'vault_check_yield'), weight: 4 },
      fc.constantFrom(...mcpToolNames),
      fc.string({ maxLength: 12 }),
      json,
    ),
    arguments: fc.oneof(fc.constant({}), json),
    _meta: meta,
  },
  { requiredKeys: [] },
)

const params = fc.oneof(
  { arbitrary: toolCallParams, weight: 4 },
  fc.record({ _meta: meta, cursor: fc.oneof(fc.string(), json) }, { requiredKeys: [] }),
  fc.constant({}),
  json,
)

/** Members no JSON-RPC message has: plain names, prototype names, near misses. */
const extraKey = fc.oneof(
  fc.constantFrom('extra', '__proto__', 'constructor', 'toString', 'Method', 'ID', 'params '),
  fc.string({ minLength: 1, maxLength: 10 }),
)

/** What a result or an error of a response holds. */
const response = fc.oneof(
  fc.record({ result: fc.oneof(fc.constant({}), json) }),
  fc.record({
    error: fc.oneof(
      fc.record({ code: fc.oneof(fc.integer(), json), message: fc.oneof(fc.string(), json) }),
      json,
    ),
  }),
)

/**
 * One JSON-RPC message as it goes on the wire (a JSON text, so that a `__proto__` member is an
 * own member of what the server parses), mostly near the valid shape of a request.
 */
export const envelopeText = fc
  .tuple(
    fc.record(
      {
        jsonrpc: fc.oneof(
          { arbitrary: fc.constant('2.0'), weight: 12 },
          fc.constantFrom('1.0', '2', 2, null),
        ),
        id: idValue,
        method,
        params,
      },
      { requiredKeys: [] },
    ),
    fc.oneof({ arbitrary: fc.constant(undefined), weight: 3 }, response),
    fc.oneof(
      { arbitrary: fc.constant([] as [string, unknown][]), weight: 3 },
      fc.array(fc.tuple(extraKey, json), { minLength: 1, maxLength: 2 }),
    ),
    fc.boolean(),
  )
  .map(([message, asResponse, extras, dropMethod]) => {
    const members: [string, unknown][] = Object.entries(message)
    const shaped =
      asResponse === undefined
        ? members
        : [
            ...members.filter(([key]) => !dropMethod || key !== 'method'),
            ...Object.entries(asResponse),
          ]
    // Written by hand: JSON.stringify would leave out a `__proto__` key set by assignment.
    const all = [...shaped, ...extras]
    return `{${all.map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value) ?? 'null'}`).join(',')}}`
  })

/** What a server owes a message: an answer, and under which id, or none (JSON-RPC answers none). */
export type Owed = { answer: false } | { answer: true; id: string | number | null }

/**
 * What JSON-RPC owes the sender of `text`: a request (it has an `id` member, or is no notification
 * and no response) gets one answer, under its id when that is a string or a number, else `null`; a
 * notification or a response gets none.
 */
export function owedAnswer(text: string): Owed {
  const message = JSON.parse(text) as Record<string, unknown>
  const hasId = Object.hasOwn(message, 'id')
  const isResponse =
    !Object.hasOwn(message, 'method') &&
    (Object.hasOwn(message, 'result') || Object.hasOwn(message, 'error'))
  if (isResponse || !hasId) return { answer: false }
  const { id } = message
  return {
    answer: true,
    id: typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null,
  }
}
