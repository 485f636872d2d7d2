import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import {
  CallToolResultSchema,
  JSONRPCMessageSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeAddressesFile } from '../../harness/addressesFile.js'
import { type McpToolName, mcpToolNames } from '../../harness/mcpToolNames.js'
import { type Devnet, startDevnet } from '../../src/devnet/startDevnet.js'
import {
  decimal,
  hugeNumberText,
  json,
  jsonNumber,
  longText,
  oddNumberText,
  tinyNumberText,
  whitespace,
} from '../support/arbitraries.js'
import { giveMerchantPositionAndAllowance } from '../support/devnet.js'
import {
  expectMatchesOutputSchema,
  expectNoInternals,
  mcpBin,
  RecordingStdioTransport,
} from '../support/mcp.js'

// Generated inputs through ONE real stdio server on a devnet. Every call must get a tool result or a
// JSON-RPC error, with no stack trace or file path; every refusal starts with its code; stdout
// carries nothing but JSON-RPC; the server is alive at the end.

const runsPerTool = 180
const otherRuns = 100

let devnet: Devnet
let transport: RecordingStdioTransport
let client: Client
let tools: Tool[]
let merchant: `0x${string}`
const callsByTool = new Map<string, number>()

beforeAll(async () => {
  devnet = await startDevnet({ chain: 'base-sepolia' })
  merchant = devnet.accounts.merchant.address
  await giveMerchantPositionAndAllowance(devnet)
  transport = new RecordingStdioTransport([mcpBin], {
    BASE_SEPOLIA_RPC_URL: devnet.rpcUrl,
    VAULT_ADDRESSES: await writeAddressesFile(devnet),
    MCP_LOG_LEVEL: 'warn',
  })
  client = new Client({ name: 'x402-vault-fuzz', version: '1.0.0' })
  await client.connect(transport)
  tools = (await client.listTools()).tools
})
afterAll(async () => {
  await client?.close()
  await devnet?.stop()
})

// ---------------------------------------------------------------------------------------------
// Generators

/** Mostly what a careful client sends: within the cap and the merchant's means. */
const plausibleUsdc = fc
  .tuple(fc.integer({ min: 0, max: 150 }), fc.integer({ min: 0, max: 999_999 }))
  .map(([whole, micro]) => (micro ? `${whole}.${String(micro).padStart(6, '0')}` : `${whole}`))
const amountLike = fc.oneof(
  { arbitrary: plausibleUsdc, weight: 14 },
  { arbitrary: decimal, weight: 2 },
  hugeNumberText,
  tinyNumberText,
  { arbitrary: oddNumberText, weight: 3 },
  jsonNumber,
  longText,
  json,
  fc.string(),
)
const sharesLike = fc.oneof(
  { arbitrary: fc.bigInt({ min: 1n, max: 200_000_000n }).map(String), weight: 4 },
  fc.bigInt({ min: -(2n ** 300n), max: 2n ** 300n }).map(String),
  amountLike,
)
const slippageLike = fc.oneof(
  { arbitrary: fc.integer({ min: 0, max: 1000 }), weight: 8 },
  fc.integer({ min: -100, max: 3000 }),
  jsonNumber,
  amountLike,
)

const hexDigits = fc.constantFrom(...'0123456789abcdefABCDEF')
/** The merchant's checksummed address with the case of one letter flipped: a wrong checksum. */
const wrongChecksum = fc.nat().map((n) => {
  const letters = [...merchant.slice(2)].flatMap((char, index) =>
    /[a-fA-F]/.test(char) ? [index + 2] : [],
  )
  const at = letters[n % letters.length] as number
  const char = merchant[at] as string
  const flipped = char === char.toUpperCase() ? char.toLowerCase() : char.toUpperCase()
  return `${merchant.slice(0, at)}${flipped}${merchant.slice(at + 1)}`
})
const walletLike = fc.oneof(
  { arbitrary: fc.constant(null).map(() => merchant), weight: 14 },
  { arbitrary: fc.stringMatching(/^0x[0-9a-f]{40}$/), weight: 2 },
  fc.constant(null).map(() => merchant.toLowerCase()),
  fc
    .string({ unit: hexDigits, maxLength: 80 })
    .filter((hex) => hex.length !== 40)
    .map((hex) => `0x${hex}`),
  wrongChecksum,
  fc.string({ unit: hexDigits, minLength: 40, maxLength: 40 }),
  fc.string({ unit: hexDigits, minLength: 40, maxLength: 40 }).map((hex) => `0X${hex}`),
  fc.string({ unit: hexDigits, minLength: 64, maxLength: 64 }).map((hex) => `0x${hex}`),
  fc.tuple(whitespace, whitespace).map(([before, after]) => `${before}${merchant}${after}`),
  fc.constant('0x0000000000000000000000000000000000000000'),
  longText,
  json,
)

const prototypeKeys = fc.subarray([
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '__defineGetter__',
])

const valuesOf = {
  wallet: walletLike,
  amountUsdc: amountLike,
  shares: sharesLike,
  slippageBps: slippageLike,
}
type InputKey = keyof typeof valuesOf
/** The argument shapes a client would send to each tool. */
const typicalKeys: Record<McpToolName, InputKey[][]> = {
  vault_status: [[]],
  vault_check_yield: [[]],
  vault_get_position: [['wallet']],
  vault_plan_approve_usdc: [['wallet', 'amountUsdc']],
  vault_plan_deposit: [
    ['wallet', 'amountUsdc'],
    ['wallet', 'amountUsdc', 'slippageBps'],
  ],
  vault_plan_withdraw: [
    ['wallet', 'amountUsdc'],
    ['wallet', 'shares'],
    ['wallet', 'shares', 'slippageBps'],
  ],
}
/** Mostly nothing; sometimes `arbitrary`. */
const sometimes = <T>(arbitrary: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: fc.constant(undefined), weight: 4 }, { arbitrary, weight: 1 })

/**
 * Arguments for a tool: mostly a typical shape, else any subset of its own keys, with generated
 * values; sometimes another tool's keys, random extra keys, or prototype keys.
 */
function argumentsFor(name: McpToolName) {
  const typical = typicalKeys[name]
  const own = [...new Set(typical.flat())]
  const others = (Object.keys(valuesOf) as InputKey[]).filter((key) => !own.includes(key))
  const record = (keys: InputKey[], requiredKeys: InputKey[]) =>
    fc.record(Object.fromEntries(keys.map((key) => [key, valuesOf[key]])), { requiredKeys })
  const ownArguments = fc.oneof(
    { arbitrary: fc.constantFrom(...typical).chain((keys) => record(keys, keys)), weight: 3 },
    { arbitrary: record(own, []), weight: 1 },
  )
  return fc
    .tuple(
      ownArguments,
      sometimes(record(others, [])),
      sometimes(fc.dictionary(fc.string({ maxLength: 20 }), json, { maxKeys: 3 })),
      sometimes(prototypeKeys),
      json,
    )
    .map(([ownArgs, otherArgs, extra, protoKeys, value]) => {
      const args: Record<string, unknown> = { ...ownArgs, ...otherArgs, ...extra }
      // Own, enumerable keys, as JSON.parse makes them on the server.
      for (const key of protoKeys ?? []) {
        Object.defineProperty(args, key, { value, enumerable: true, writable: true })
      }
      return args
    })
}

// ---------------------------------------------------------------------------------------------
// Checks

/**
 * Calls a tool over the wire (without the client's own output check, so that the server's answer is
 * judged here) and checks the answer: one text, a refusal that starts with its code, or structured
 * content that matches the listed output schema. A JSON-RPC error rejects, failing the property: every
 * call, however malformed its arguments, gets a tool result.
 */
async function callAndCheck(name: string, args: unknown): Promise<void> {
  callsByTool.set(name, (callsByTool.get(name) ?? 0) + 1)
  const result = await client.request(
    { method: 'tools/call', params: { name, arguments: args as Record<string, unknown> } },
    CallToolResultSchema,
  )
  expect(result.content).toHaveLength(1)
  const { type, text } = result.content[0] as { type: string; text: string }
  expect(type).toBe('text')
  expectNoInternals(text)
  if (result.isError) {
    expect(text).toMatch(/^[A-Z][A-Z0-9_]*(?: \(retryable\))?: \S/)
    // Every input problem has its own code: INTERNAL_ERROR would be a bug the input found.
    expect(text).not.toMatch(/^INTERNAL_ERROR/)
    return
  }
  expect(result.structuredContent).toEqual(JSON.parse(text))
  const listed = tools.find((tool) => tool.name === name)
  expectMatchesOutputSchema(listed?.outputSchema, result.structuredContent)
}

describe('generated inputs through one stdio server', () => {
  it.each(mcpToolNames)(`%s: ${runsPerTool} generated inputs`, async (name) => {
    await fc.assert(
      fc.asyncProperty(argumentsFor(name), (args) => callAndCheck(name, args)),
      { numRuns: runsPerTool },
    )
  })

  it(`unknown tool names and arguments that are not an object: ${otherRuns} generated calls`, async () => {
    const name = fc.oneof(fc.constantFrom(...mcpToolNames), fc.string({ maxLength: 80 }))
    const notAnObject = fc.oneof(
      json.filter((value) => typeof value !== 'object' || value === null || Array.isArray(value)),
      fc.constant(undefined),
    )
    await fc.assert(
      fc.asyncProperty(name, notAnObject, (toolName, args) => callAndCheck(toolName, args)),
      { numRuns: otherRuns },
    )
  })

  it('refuses prototype keys and arguments that are not an object like any unknown argument', async () => {
    const cases: [string, unknown, string][] = [
      // The MCP SDK alone would make this object the arguments' prototype, and read its wallet.
      ['vault_get_position', JSON.parse(`{"__proto__":{"wallet":"${merchant}"}}`), '"__proto__"'],
      ['vault_status', JSON.parse('{"__proto__":null}'), '"__proto__"'],
      // The MCP SDK alone would answer -32603 "Cannot read properties of null (reading 'prototype')".
      ['vault_status', { constructor: null }, '"constructor"'],
      ['vault_get_position', { wallet: merchant, constructor: 'x' }, '"constructor"'],
      ['vault_status', [1, 2], 'not an array'],
      ['vault_status', 'wallet', 'not a string'],
      ['vault_status', null, 'not null'],
    ]
    for (const [name, args, reason] of cases) {
      const result = await client.request(
        { method: 'tools/call', params: { name, arguments: args as Record<string, unknown> } },
        CallToolResultSchema,
      )
      const text = (result.content[0] as { text: string }).text
      expect(result.isError, text).toBe(true)
      expect(text).toMatch(/^INVALID_ARGUMENT: /)
      expect(text).toContain(reason)
    }
  })

  it('the server is alive, stdout carried only JSON-RPC, and every tool got its share', async () => {
    expect((await client.listTools()).tools).toHaveLength(mcpToolNames.length)
    const calls = [...callsByTool.values()].reduce((sum, count) => sum + count, 0)
    expect(calls).toBeGreaterThanOrEqual(1_000)
    for (const name of mcpToolNames)
      expect(callsByTool.get(name)).toBeGreaterThanOrEqual(runsPerTool)
    const impure = transport.stdoutLines.filter(
      (line) => !JSONRPCMessageSchema.safeParse(safeJson(line)).success,
    )
    expect(impure).toEqual([])
    // One answer per call, plus the handshake, the two listings and the seven examples.
    expect(transport.stdoutLines.length).toBe(calls + 3 + 7)
    expect(transport.stderr).not.toMatch(/\n\s+at /)
  })
})

function safeJson(line: string): unknown {
  try {
    return JSON.parse(line)
  } catch {
    return undefined
  }
}
