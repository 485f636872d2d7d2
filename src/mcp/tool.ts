import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import {
  CallToolRequestSchema,
  isJSONRPCRequest,
  type ToolAnnotations,
} from '@modelcontextprotocol/sdk/types.js'
import type { z } from 'zod'
import type { VaultContext } from '../index.js'
import type { McpConfig } from './config.js'
import type { VaultConnection } from './connection.js'
import { toolErrorText } from './errors.js'
import type { McpLogger } from './logger.js'
import { unknownArgumentsText } from './schemas.js'

/** What a tool handler gets besides its input. */
export type VaultToolContext = {
  /**
   * The verified vault: waits for verification (or retries it after RPC trouble). The call's
   * answer is refused unless the RPC still serves the configured chain.
   */
  vault: () => Promise<VaultContext>
  config: McpConfig
  logger: McpLogger
}

/**
 * One MCP tool: its listing (name, title, description, schemas, annotations) and its handler.
 * `vaultTools` holds the six; `registerVaultTools` puts them on an MCP server.
 */
export type VaultTool<
  input extends z.ZodRawShape = z.ZodRawShape,
  output extends z.ZodRawShape = z.ZodRawShape,
> = {
  name: string
  title: string
  description: string
  inputSchema: z.ZodObject<input, 'strict'>
  outputSchema: z.ZodObject<output>
  annotations: ToolAnnotations
  /**
   * Checks the input's values first (no network), then reads the chain. Returns the structured
   * answer; throws an `McpToolError` or SDK error, which becomes the `isError` answer.
   */
  handler: (
    input: z.output<z.ZodObject<input, 'strict'>>,
    context: VaultToolContext,
  ) => Promise<z.input<z.ZodObject<output>>>
}

/** Any tool, its types erased for the list of tools (the MCP SDK parses the input first). */
export type AnyVaultTool = Omit<VaultTool, 'inputSchema' | 'outputSchema' | 'handler'> & {
  inputSchema: z.AnyZodObject
  outputSchema: z.AnyZodObject
  handler: (input: never, context: VaultToolContext) => Promise<unknown>
}

/**
 * Declares a tool with its input and output types tied to its schemas.
 *
 * @param tool - The tool.
 * @returns The same tool.
 * @example
 * export const vaultStatus = defineTool({ name: 'vault_status', … })
 */
export function defineTool<input extends z.ZodRawShape, output extends z.ZodRawShape>(
  tool: VaultTool<input, output>,
): VaultTool<input, output> {
  return tool
}

/**
 * Registers the tools on the server and answers `tools/call` itself (see `registerVaultTools` for the
 * public form, which also creates the vault connection).
 *
 * The MCP SDK lists each tool from its schemas, but its own argument check would wrap a refusal in
 * its prefix (`MCP error -32602: Input validation error: …`). Answering `tools/call` here keeps every
 * refusal in one form: `isError: true`, text starting with the stable code. Arguments are checked
 * against the same schema `tools/list` shows. An answer is the structured content plus the same JSON
 * as text.
 *
 * @param server - The MCP server.
 * @param tools - The tools, in listing order.
 * @param dependencies - The vault connection, the configuration and the logger.
 * @example
 * registerTools(server, vaultTools, { connection, config, logger })
 */
export function registerTools(
  server: McpServer,
  tools: readonly AnyVaultTool[],
  dependencies: { connection: VaultConnection; config: McpConfig; logger: McpLogger },
): void {
  const byName = new Map(tools.map((tool) => [tool.name, tool]))
  for (const tool of tools) {
    const listing = {
      title: tool.title,
      description: tool.description,
      inputSchema: tool.inputSchema,
      outputSchema: tool.outputSchema,
      annotations: tool.annotations,
    }
    server.registerTool(tool.name, listing, (input: unknown) => run(tool, input, dependencies))
  }
  server.server.removeRequestHandler('tools/call')
  server.server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = byName.get(request.params.name)
    if (!tool) {
      return refusal(
        `INVALID_ARGUMENT: There is no tool ${JSON.stringify(request.params.name.slice(0, 64))}; this server has ${[...byName.keys()].join(', ')}.`,
      )
    }
    const parsed = tool.inputSchema.safeParse(request.params.arguments ?? {})
    if (!parsed.success) return refusal(inputErrorText(parsed.error))
    return run(tool, parsed.data, dependencies)
  })
}

/**
 * Runs one tool call. Every answer read from the chain is checked to come from the configured
 * chain: the first `vault()` of a call also asks the RPC for its chain id (in the same JSON-RPC
 * batch as the call's first read), and an answer is refused unless that check passed.
 */
async function run(
  tool: AnyVaultTool,
  input: unknown,
  dependencies: { connection: VaultConnection; config: McpConfig; logger: McpLogger },
) {
  const { connection, config, logger } = dependencies
  const started = performance.now()
  const took = () => `${Math.round(performance.now() - started)} ms`
  // Settles to the check's error, or undefined: never a rejection nobody awaits yet.
  let chainCheck: Promise<unknown> | undefined
  const context: VaultToolContext = {
    config,
    logger,
    vault: async () => {
      const vault = await connection.ready()
      chainCheck ??= connection.checkChain().then(
        () => undefined,
        (error: unknown) => error,
      )
      return vault
    },
  }
  try {
    const output = (await tool.handler(input as never, context)) as Record<string, unknown>
    const chainError = await chainCheck
    if (chainError) throw chainError
    logger.debug(`${tool.name} answered in ${took()}.`)
    return {
      content: [{ type: 'text' as const, text: JSON.stringify(output, null, 2) }],
      structuredContent: output,
    }
  } catch (error) {
    // Whatever another chain answered (a revert, no contract) would mislead: its chain comes first.
    const text = toolErrorText((await chainCheck) ?? error, logger)
    logger.debug(`${tool.name} refused in ${took()}: ${text}`)
    return refusal(text)
  }
}

function refusal(text: string) {
  return { isError: true, content: [{ type: 'text' as const, text }] }
}

/**
 * Keys that the MCP SDK's own parsing of `tools/call` mishandles before any handler runs: it turns an
 * object under `__proto__` into the arguments' prototype (its keys then read as arguments), and a
 * `constructor` that is not a function makes it fail with an internal error (-32603) whose message is
 * a zod dump or a JavaScript TypeError.
 */
const unsafeArgumentKeys = ['__proto__', 'constructor']

/**
 * Answers on the transport itself the `tools/call` requests whose arguments the MCP SDK cannot parse
 * safely: arguments that are not a JSON object, or that carry `__proto__` or `constructor`. They get
 * the same refusal as any other bad input (`isError`, text starting with `INVALID_ARGUMENT`), never an
 * internal error; every other message goes on to the server. Call it once the server is connected.
 *
 * @param transport - The server's connected transport.
 * @param tools - For the message: which arguments the tool takes.
 * @example
 * await server.connect(transport)
 * guardToolArguments(transport, vaultTools)
 */
export function guardToolArguments(transport: Transport, tools: readonly AnyVaultTool[]): void {
  const deliver = transport.onmessage
  transport.onmessage = (message, extra) => {
    if (isJSONRPCRequest(message) && message.method === 'tools/call') {
      const text = unsafeArgumentsText(message.params ?? {}, tools)
      if (text !== undefined) {
        transport
          .send({ jsonrpc: '2.0', id: message.id, result: refusal(text) })
          .catch((error: Error) => transport.onerror?.(error))
        return
      }
    }
    deliver?.(message, extra)
  }
}

function unsafeArgumentsText(
  params: Record<string, unknown>,
  tools: readonly AnyVaultTool[],
): string | undefined {
  const args = params.arguments
  if (args === undefined) return undefined
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    const given = Array.isArray(args) ? 'an array' : args === null ? 'null' : `a ${typeof args}`
    return `INVALID_ARGUMENT: arguments must be a JSON object of the tool's inputs, not ${given}.`
  }
  const unsafe = unsafeArgumentKeys.filter((key) => Object.hasOwn(args, key))
  if (unsafe.length === 0) return undefined
  const tool = tools.find((candidate) => candidate.name === params.name)
  return unknownArgumentsText(
    unsafe,
    String(params.name).slice(0, 64),
    tool && Object.keys(tool.inputSchema.shape),
  )
}

/** The first problem with the arguments, code first (the schemas' messages carry their code). */
function inputErrorText(error: z.ZodError): string {
  const issue = error.issues[0]
  if (!issue) return 'INVALID_ARGUMENT: The arguments are not valid.'
  if (/^[A-Z][A-Z_]+: /.test(issue.message)) return issue.message
  const where = issue.path.length ? `${issue.path.join('.')}: ` : ''
  return `INVALID_ARGUMENT: ${where}${issue.message}.`
}
