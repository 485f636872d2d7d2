/**
 * The tool listing a client can afford: `tools/list` within 25 KB; schemas that every common
 * validator compiles (a default, draft-07 Ajv too: no `$schema`, no `$ref`); input schemas that
 * OpenAI's strict mode takes as they are, converted by a maintained converter (the OpenAI Agents SDK's
 * MCP tool conversion) without a change; output schemas that still hold the tools' answers (the devnet
 * tests check real answers against both the listed schema and the full zod schema).
 */
import { mcpToFunctionTool } from '@openai/agents-core'
import { Ajv } from 'ajv'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { beforeAll, describe, expect, it } from 'vitest'
import { mcpToolNames } from '../../harness/mcpToolNames.js'
import type { HandshakeRecording } from '../../src/mcp/handshakeRecording.js'
import { recordHandshake } from '../../src/mcp/recordHandshake.js'
import { vaultTools } from '../../src/mcp/tools/index.js'

type JsonSchema = Record<string, unknown>
type ListedTool = { name: string; inputSchema: JsonSchema; outputSchema: JsonSchema }

let recording: HandshakeRecording
let tools: ListedTool[]
beforeAll(async () => {
  // The server's own answer, recorded through the MCP SDK as the build records it.
  recording = await recordHandshake()
  tools = recording.toolsList.tools as ListedTool[]
})

/** Every subschema of a JSON Schema, with its path. */
function* subschemas(schema: unknown, path = ''): Generator<[string, JsonSchema]> {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return
  const node = schema as JsonSchema
  yield [path || '(root)', node]
  for (const [key, value] of Object.entries(node.properties ?? {})) {
    yield* subschemas(value, `${path}.${key}`)
  }
  for (const [index, branch] of ((node.anyOf as unknown[]) ?? []).entries()) {
    yield* subschemas(branch, `${path}.anyOf[${index}]`)
  }
  if (node.items) yield* subschemas(node.items, `${path}[]`)
}

describe('tools/list', () => {
  it('is at most 25 KB on the wire, for every tool', () => {
    const answer = JSON.stringify({ jsonrpc: '2.0', id: 1, result: recording.toolsList })
    expect(tools.map((tool) => tool.name)).toEqual([...mcpToolNames])
    expect(Buffer.byteLength(answer)).toBeLessThanOrEqual(25_000)
  })

  it('every schema compiles in a default (draft-07, strict) Ajv and in a 2020-12 one: no $schema, no $ref', () => {
    const draft07 = new Ajv()
    const draft2020 = new Ajv2020()
    for (const tool of tools) {
      for (const [kind, schema] of [
        ['input', tool.inputSchema],
        ['output', tool.outputSchema],
      ] as const) {
        const where = `${tool.name} ${kind}`
        expect(schema.$schema, where).toBeUndefined()
        expect(JSON.stringify(schema), where).not.toContain('$ref')
        expect(() => draft07.compile(schema), where).not.toThrow()
        expect(() => draft2020.compile(schema), where).not.toThrow()
      }
    }
  })

  it('output schemas list every field of the answer, and say once what each field would repeat', () => {
    for (const tool of tools) {
      const zodShape = vaultTools.find((candidate) => candidate.name === tool.name)?.outputSchema
        .shape as Record<string, unknown>
      const properties = tool.outputSchema.properties as Record<string, JsonSchema>
      expect(Object.keys(properties), tool.name).toEqual(Object.keys(zodShape))
      const description = tool.outputSchema.description as string
      expect(description, tool.name).toMatch(/^Every field below is always present\./)
      expect(description, tool.name).toMatch(/\{ (usdc, atomic|apy, ray) \}/)
      // No per-field rule that a client compiles for every field of every answer.
      for (const [path, node] of subschemas(tool.outputSchema)) {
        expect(node.required, `${tool.name} ${path}`).toBeUndefined()
      }
    }
  })

  it('an object inside the answer is typed as an object that names its fields, each with its meaning', () => {
    // Only the answer itself declares properties: no typed field inside its fields to compile.
    for (const tool of tools) {
      for (const [path, node] of subschemas(tool.outputSchema)) {
        if (path !== '(root)') expect(node.properties, `${tool.name} ${path}`).toBeUndefined()
      }
    }
    const described = (tool: string, field: string) => {
      const listed = tools.find((candidate) => candidate.name === tool)?.outputSchema ?? {}
      const node = (listed.properties as Record<string, JsonSchema>)[field] as JsonSchema
      return { type: node.type, description: node.description as string }
    }
    expect(described('vault_status', 'oracle')).toEqual({
      type: 'object',
      description:
        'The yield oracle that picks the venue for new deposits. Fields: fresh (Deposits need a fresh oracle), lastObservationTime (Unix time of the last rate observation), ageSeconds (Seconds since the last observation), maxStalenessSeconds (The oracle is fresh up to this age).',
    })
    for (const tool of ['vault_plan_approve_usdc', 'vault_plan_deposit', 'vault_plan_withdraw']) {
      const { type, description } = described(tool, 'transaction')
      expect(type, tool).toBe('object')
      expect(description, tool).toContain(
        'Fields: chain, chainId, to, data, value, functionName, args (The arguments in order, numbers in base units).',
      )
    }
  })
})

describe('input schemas in OpenAI strict mode', () => {
  it('follow the rules: every object closed, every property required, the optional ones nullable', () => {
    for (const tool of tools) {
      for (const [path, node] of subschemas(tool.inputSchema)) {
        const where = `${tool.name} ${path}`
        if (node.type !== 'object') continue
        expect(node.additionalProperties, where).toBe(false)
        expect(node.required, where).toEqual(Object.keys((node.properties as JsonSchema) ?? {}))
      }
    }
    const nullable = (tool: string, field: string) => {
      const input = tools.find((candidate) => candidate.name === tool)?.inputSchema
      const property = (input?.properties as Record<string, JsonSchema> | undefined)?.[field]
      return (property?.anyOf as JsonSchema[] | undefined)?.some((branch) => branch.type === 'null')
    }
    for (const [tool, field] of [
      ['vault_plan_deposit', 'slippageBps'],
      ['vault_plan_withdraw', 'amountUsdc'],
      ['vault_plan_withdraw', 'shares'],
      ['vault_plan_withdraw', 'slippageBps'],
    ] as const) {
      expect(nullable(tool, field), `${tool}.${field}`).toBe(true)
    }
    expect(nullable('vault_plan_deposit', 'amountUsdc')).toBeFalsy()
  })

  it('the OpenAI Agents SDK converts each to a strict function tool without changing it', () => {
    const server = { name: 'x402-vault' } as Parameters<typeof mcpToFunctionTool>[1]
    for (const tool of tools) {
      const converted = mcpToFunctionTool(tool as never, server, true) as {
        strict: boolean
        parameters: JsonSchema
      }
      expect(converted.strict, tool.name).toBe(true)
      expect(converted.parameters, tool.name).toEqual(tool.inputSchema)
    }
  })
})
