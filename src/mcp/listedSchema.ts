import { z } from 'zod'

/** Any part of a JSON Schema, as this module walks it. */
type JsonSchema = Record<string, unknown>

/**
 * A tool's input schema as `tools/list` shows it: every property in `required`, the optional ones
 * nullable (`null` means "left out"), no unknown property (`additionalProperties: false`), one
 * `type` per field. That is what OpenAI's strict mode asks of a tool, so a client converts it
 * as it is, without changing what a call means; every other client reads it as before.
 *
 * @param schema - The tool's zod input object, whose optional fields are also nullable.
 * @returns The JSON Schema.
 * @example
 * listedInputSchema(vaultPlanDeposit.inputSchema).required // ['wallet', 'amountUsdc', 'slippageBps']
 */
export function listedInputSchema(schema: z.ZodObject): JsonSchema {
  const { $schema: _, ...json } = oneTypePerField(
    z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input' }),
  ) as JsonSchema
  return { ...json, required: Object.keys((json.properties as JsonSchema | undefined) ?? {}) }
}

/**
 * A tool's output schema as `tools/list` shows it: every field of the answer, with its type and
 * description, in a form a client compiles cheaply. MCP clients compile every output schema on each
 * `tools/list` (the official TypeScript client with Ajv, whose cost grows with every keyword it
 * compiles), so the listing says once what would otherwise repeat in every field:
 * - every field of the answer is always there, as the description says, rather than in `required`
 *   lists (a compiled check per field);
 * - an object inside the answer (`oracle`, a plan's `transaction`) is typed as an object, and its
 *   description names its fields with what each one means: typing them too took the v1 client's
 *   `listTools` from about 90 ms of CPU to about 180 ms;
 * - a USDC amount (`{ usdc, atomic }`), a rate (`{ apy, ray }`) or an EIP-5792 request (`calls`) is
 *   an object whose shape the schema's description gives;
 * - an object that comes again (a deposit's three transactions) is spelled out where it first
 *   comes, and named there by its path wherever else it comes;
 * - a value that could not be read (`{ unavailable: true, code, reason }`, said in the description
 *   too) is allowed beside the value's own type, as an object;
 * - no `$schema`: MCP's default dialect (JSON Schema 2020-12) applies, and every keyword used
 *   means the same in draft-07, for clients that compile with a draft-07 validator.
 * The answers are checked against the full zod schema in the tests, and against this one.
 *
 * @param schema - The tool's zod output object.
 * @returns The JSON Schema.
 * @example
 * listedOutputSchema(vaultStatus.outputSchema).description // 'Every USDC amount is …'
 */
export function listedOutputSchema(schema: z.ZodObject): JsonSchema {
  const found = new Set<Convention>()
  const json = oneTypePerField(z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'output' }))
  const { $schema: _, ...root } = lean(json, {
    isRoot: true,
    path: '',
    found,
    spelled: new Map(),
  }) as JsonSchema
  const said = conventions.filter(({ name }) => found.has(name)).map(({ text }) => text)
  return { description: [allFields, ...said].join(' '), ...root }
}

type Convention = 'usdc' | 'rate' | 'calls' | 'unavailable'

/** What every output schema says first: the fields are not `required` one by one. */
const allFields = 'Every field below is always present.'

/** What the listing says once instead of in every field, in the order it says it. */
const conventions: { name: Convention; text: string }[] = [
  {
    name: 'usdc',
    text: 'Every USDC amount is { usdc, atomic }: decimal USDC ("12.5") and base units ("12500000"), as strings.',
  },
  {
    name: 'rate',
    text: 'Every rate is { apy, ray }: annual percentage ("4.50%") and ray (1e27 = 100 %).',
  },
  {
    name: 'calls',
    text: 'calls is an EIP-5792 wallet_sendCalls request to send as it is: { version, chainId, from, atomicRequired, calls: [{ to, data, value }] }.',
  },
  {
    name: 'unavailable',
    text: 'A value that could not be read is { unavailable: true, code, reason }; the rest stands.',
  },
]

/** The JSON Schema of a value that could not be read (see `field` in schemas.ts). */
function isUnavailable(schema: unknown): boolean {
  const properties = (schema as JsonSchema | undefined)?.properties as JsonSchema | undefined
  return (properties?.unavailable as JsonSchema | undefined)?.const === true
}

/** The object shapes the description names instead of their properties, by their sorted keys. */
const shapes: Record<string, Convention> = {
  'atomic,usdc': 'usdc',
  'apy,ray': 'rate',
  'atomicRequired,calls,chainId,from,version': 'calls',
}

/** The object shape the description names instead of the properties. */
function conventionOf(schema: JsonSchema): Convention | undefined {
  const keys = Object.keys((schema.properties as JsonSchema | undefined) ?? {})
    .sort()
    .join()
  return shapes[keys]
}

function acceptsObject(schema: JsonSchema): boolean {
  return (
    schema.type === 'object' ||
    ((schema.anyOf as JsonSchema[] | undefined) ?? []).some(acceptsObject)
  )
}

/** zod's bounds of a safe integer, which every `int()` carries and no answer comes near. */
const safeIntegerBound = Number.MAX_SAFE_INTEGER

/** Where {@link lean} is in the schema, and what it has said so far. */
type LeanState = {
  isRoot: boolean
  /** The answer's field this part describes, such as `steps[].transaction`. */
  path: string
  found: Set<Convention>
  /** The objects spelled out so far, by their shape (their JSON without descriptions): their path. */
  spelled: Map<string, string>
}

function lean(schema: unknown, state: LeanState): unknown {
  const inner = { ...state, isRoot: false }
  if (Array.isArray(schema)) return schema.map((item) => lean(item, inner))
  if (typeof schema !== 'object' || schema === null) return schema
  const source = schema as JsonSchema
  const convention = conventionOf(source)
  if (convention) {
    state.found.add(convention)
    return described({ type: 'object' }, source.description)
  }
  if (!state.isRoot && source.type === 'object' && source.properties) {
    const shape = JSON.stringify(source, (key, value) =>
      key === 'description' ? undefined : value,
    )
    const first = state.spelled.get(shape)
    if (first !== undefined) {
      const named = `Shaped as ${first}.`
      return {
        type: 'object',
        description: source.description ? `${source.description} ${named}` : named,
      }
    }
    state.spelled.set(shape, state.path)
  }
  const copy: JsonSchema = {}
  for (const [key, value] of Object.entries(source)) {
    if (key === 'required' || key === 'additionalProperties') continue
    if (
      (key === 'minimum' || key === 'maximum') &&
      Math.abs(value as number) === safeIntegerBound
    ) {
      continue
    }
    if (key === 'properties') {
      copy[key] = Object.fromEntries(
        Object.entries(value as JsonSchema).map(([name, property]) => [
          name,
          lean(property, { ...inner, path: state.path ? `${state.path}.${name}` : name }),
        ]),
      )
    } else if (key === 'items') {
      copy[key] = lean(value, { ...inner, path: `${state.path}[]` })
    } else copy[key] = lean(value, inner)
  }
  if (!state.isRoot && copy.properties) return namedFields(copy)
  const branches = copy.anyOf as JsonSchema[] | undefined
  if (!branches) return copy
  const { anyOf: _, description, ...rest } = copy
  let kept = (source.anyOf as unknown[]).some(isUnavailable)
    ? branches.filter((_branch, index) => !isUnavailable((source.anyOf as unknown[])[index]))
    : branches
  if (kept.length < branches.length) {
    state.found.add('unavailable')
    if (!kept.some(acceptsObject)) kept = [...kept, { type: 'object' }]
  }
  // A nested union's branches join this one, and the field's description is said once, here: its
  // own, or else the one its branches carry.
  const joined = kept.flatMap((branch) =>
    branch.anyOf && Object.keys(branch).every((key) => key === 'anyOf' || key === 'description')
      ? [
          ...(branch.anyOf as JsonSchema[]).map((inner, index) =>
            index === 0 && branch.description !== undefined
              ? { description: branch.description, ...inner }
              : inner,
          ),
        ]
      : [branch],
  )
  const said = description ?? joined.find((branch) => branch.description !== undefined)?.description
  const flat = joined.map(({ description: _own, ...branch }) => branch)
  const [only] = flat
  if (flat.length === 1 && only) return described({ ...only, ...rest }, said)
  return described({ ...rest, anyOf: flat }, said)
}

/**
 * An object inside the answer as the listing shows it: `type: 'object'`, its fields named in its
 * description, each with what its own description says: `Fields: to, data, args (The arguments in
 * order).` Each typed field is code a client compiles on every `tools/list`; the answer's own fields
 * stay typed.
 */
function namedFields(schema: JsonSchema): JsonSchema {
  const { properties, description, ...rest } = schema
  const fields = Object.entries(properties as JsonSchema).map(([name, field]) => {
    const said = (field as JsonSchema).description
    return typeof said === 'string' ? `${name} (${aside(said)})` : name
  })
  const own = typeof description === 'string' ? `${description.replace(/\.?$/, '.')} ` : ''
  return { ...rest, description: `${own}Fields: ${fields.join(', ')}.` }
}

/** A description as an aside in parentheses: without its final period. */
function aside(text: string): string {
  return text.replace(/\.$/, '')
}

function described(schema: JsonSchema, description: unknown): JsonSchema {
  return description === undefined ? schema : { description, ...schema }
}

/**
 * Rewrites every `type: [a, b]` of a JSON Schema as `anyOf: [{ type: a }, { type: b }]`: the same
 * values, in a form that clients which map tool schemas to a one-type-per-field dialect (Gemini's
 * function declarations, the MCP Inspector's `--strict` check) accept. zod writes a nullable string
 * as `type: ['string', 'null']`.
 *
 * @param schema - A JSON Schema (or any part of one).
 * @returns A copy without type arrays.
 * @example
 * oneTypePerField({ type: ['string', 'null'] }) // { anyOf: [{ type: 'string' }, { type: 'null' }] }
 */
export function oneTypePerField(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(oneTypePerField)
  if (typeof schema !== 'object' || schema === null) return schema
  const copy: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(schema)) copy[key] = oneTypePerField(value)
  const types = copy.type
  if (!Array.isArray(types)) return copy
  const { type: _, description, title, ...constraints } = copy
  return {
    ...(title === undefined ? {} : { title }),
    ...(description === undefined ? {} : { description }),
    anyOf: types.map((type) => (type === 'null' ? { type } : { type, ...constraints })),
  }
}
