import type {
  CallToolResult,
  JSONRPCMessage,
  RequestId,
  Tool,
  ToolAnnotations,
} from '@modelcontextprotocol/server'
import type { z } from 'zod'
import type { VaultContext } from '../index.js'
import type { McpConfig } from './config.js'
import type { VaultConnection } from './connection.js'
import { toolErrorText } from './errors.js'
import { isPlainObject } from './isPlainObject.js'
import { listedInputSchema, listedOutputSchema } from './listedSchema.js'
import type { McpLogger } from './logger.js'
import { callStopped, withCallSignal } from './rpcSignal.js'
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
 * `vaultTools` is the registry of them; `registerVaultTools` puts them on an MCP server.
 */
export type VaultTool<
  input extends z.ZodRawShape = z.ZodRawShape,
  output extends z.ZodRawShape = z.ZodRawShape,
> = {
  /**
   * `read`: answers from the chain's state, so identical calls in flight share one answer (read at
   * most one round trip before the later call). `plan`: each call plans on its own.
   */
  kind: 'read' | 'plan'
  name: string
  title: string
  description: string
  inputSchema: z.ZodObject<input, z.core.$strict>
  outputSchema: z.ZodObject<output>
  annotations: ToolAnnotations
  /**
   * Checks the input's values first (no network), then reads the chain. Returns the structured
   * answer; throws an `McpToolError` or SDK error, which becomes the `isError` answer.
   */
  handler: (
    input: z.output<z.ZodObject<input, z.core.$strict>>,
    context: VaultToolContext,
  ) => Promise<z.input<z.ZodObject<output>>>
}

/** Any tool, its types erased for the list of tools (each tool parses its own input). */
export type AnyVaultTool = Omit<VaultTool, 'inputSchema' | 'outputSchema' | 'handler'> & {
  inputSchema: z.ZodObject
  outputSchema: z.ZodObject
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

/** What every tool call needs: the vault connection, the configuration and the logger. */
export type ToolDependencies = { connection: VaultConnection; config: McpConfig; logger: McpLogger }

/** The tools' listing and their calls, built once per process and shared by every MCP server instance. */
export type ToolRunner = {
  /** What `tools/list` answers, in listing order: computed once, JSON Schemas included. */
  listing: Tool[]
  /**
   * Answers one `tools/call`: a refusal (`isError`, text starting with its code) or the result.
   * `signal` (the call's, aborted when the client cancels it or goes away) stops its RPC requests.
   */
  call: (name: string, args: unknown, signal?: AbortSignal) => Promise<CallToolResult>
}

const listings = new WeakMap<AnyVaultTool, Tool>()

/**
 * A tool as `tools/list` shows it: its JSON Schemas are converted from zod once per process (the
 * conversion is the costliest part of a listing): the input schema as strict-mode clients take it
 * ({@link listedInputSchema}), the output schema in the form a client compiles cheaply
 * ({@link listedOutputSchema}).
 *
 * @param tool - The tool.
 * @returns `{ name, title, description, inputSchema, outputSchema, annotations }`.
 * @example
 * toolListing(vaultStatus).outputSchema
 */
export function toolListing(tool: AnyVaultTool): Tool {
  let listing = listings.get(tool)
  if (!listing) {
    listing = {
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: listedInputSchema(tool.inputSchema) as Tool['inputSchema'],
      outputSchema: listedOutputSchema(tool.outputSchema) as Tool['outputSchema'],
      annotations: tool.annotations,
    }
    listings.set(tool, listing)
  }
  return listing
}

/**
 * Builds the tools' listing and their calls. Every call answers itself, so that a refusal always
 * has one form, whatever rejected it: `isError: true`, text starting with the stable code. Arguments
 * are checked against the same schema `tools/list` shows. An answer is the structured content plus
 * the same JSON as text.
 *
 * @param tools - The tools, in listing order.
 * @param dependencies - The vault connection, the configuration and the logger.
 * @returns `{ listing, call }`.
 * @example
 * const runner = createToolRunner(vaultTools, { connection, config, logger })
 * await runner.call('vault_status', {})
 */
export function createToolRunner(
  tools: readonly AnyVaultTool[],
  dependencies: ToolDependencies,
): ToolRunner {
  const byName = new Map(tools.map((tool) => [tool.name, tool]))
  /** The reads in flight, by tool and input: many clients asking the same at once cost one read. */
  const readsInFlight = new Map<string, SharedRead>()
  return {
    listing: tools.map(toolListing),
    async call(name, args, signal) {
      const tool = byName.get(name)
      if (!tool) {
        return refusal(
          `INVALID_ARGUMENT: There is no tool ${JSON.stringify(name.slice(0, 64))}; this server has ${[...byName.keys()].join(', ')}.`,
        )
      }
      const unsafe = unsafeArgumentsText(name, args, tools)
      if (unsafe !== undefined) return refusal(unsafe)
      const parsed = tool.inputSchema.safeParse(args ?? {})
      if (!parsed.success) return refusal(inputErrorText(parsed.error))
      if (tool.kind !== 'read') {
        return withCallSignal(signal, () => run(tool, parsed.data, dependencies))
      }
      const key = `${tool.name} ${JSON.stringify(parsed.data)}`
      let read = readsInFlight.get(key)
      if (!read) {
        // A shared read stops only once every call waiting for it is cancelled.
        const controller = new AbortController()
        const answer = withCallSignal(controller.signal, () =>
          run(tool, parsed.data, dependencies),
        ).finally(() => readsInFlight.delete(key))
        read = { answer, controller, waiting: 0 }
        readsInFlight.set(key, read)
      }
      const shared = read
      shared.waiting++
      signal?.addEventListener(
        'abort',
        () => {
          if (--shared.waiting === 0) shared.controller.abort()
        },
        { once: true },
      )
      return shared.answer
    },
  }
}

/** A read in flight and the calls waiting for it. */
type SharedRead = { answer: Promise<CallToolResult>; controller: AbortController; waiting: number }

/**
 * Runs one tool call. Every answer read from the chain is checked to come from the configured
 * chain: the first `vault()` of a call also asks the RPC for its chain id (in the same JSON-RPC
 * batch as the call's first read), and an answer is refused unless that check passed.
 */
async function run(
  tool: AnyVaultTool,
  input: unknown,
  dependencies: ToolDependencies,
): Promise<CallToolResult> {
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
      content: [{ type: 'text', text: JSON.stringify(output, null, 2) }],
      structuredContent: output,
    }
  } catch (error) {
    if (callStopped()) {
      // Nobody reads this answer: the client cancelled the call or has gone.
      logger.debug(`${tool.name} stopped after ${took()}: the client cancelled it or went away.`)
      return refusal('CANCELLED: The client cancelled the call before it was answered.')
    }
    // Whatever another chain answered (a revert, no contract) would mislead: its chain comes first.
    const text = toolErrorText((await chainCheck) ?? error, logger)
    logger.debug(`${tool.name} refused in ${took()}: ${text}`)
    return refusal(text)
  }
}

function refusal(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] }
}

/**
 * Keys that the MCP SDK's own parsing of `tools/call` mishandles before any handler runs: it drops a
 * `__proto__` key without a word (so the call would be answered as if it were not there), and other
 * SDKs turn an object under it into the arguments' prototype.
 */
const unsafeArgumentKeys = ['__proto__', 'constructor']

/**
 * Arguments that the MCP SDK cannot parse faithfully, and their refusal: arguments that are not a
 * JSON object (the SDK would answer a JSON-RPC error holding a raw validation dump), or that carry
 * `__proto__` or `constructor`. Such a call gets the same refusal as any other bad input.
 */
function unsafeArgumentsText(
  name: unknown,
  args: unknown,
  tools: readonly AnyVaultTool[],
): string | undefined {
  if (args === undefined) return undefined
  if (!isPlainObject(args)) {
    const given = Array.isArray(args) ? 'an array' : args === null ? 'null' : `a ${typeof args}`
    return `INVALID_ARGUMENT: arguments must be a JSON object of the tool's inputs, not ${given}.`
  }
  const unsafe = unsafeArgumentKeys.filter((key) => Object.hasOwn(args, key))
  if (unsafe.length === 0) return undefined
  const tool = tools.find((candidate) => candidate.name === name)
  return unknownArgumentsText(
    unsafe,
    String(name).slice(0, 64),
    tool && Object.keys(tool.inputSchema.shape),
  )
}

/**
 * Where the MCP SDK would mishandle a `tools/call` (see {@link unsafeArgumentsText}), takes its
 * arguments out before the SDK parses the message, and keeps the call's refusal under its request
 * id for the `tools/call` handler ({@link refusedCall}). Every other message is left as it is.
 *
 * @param message - One inbound JSON-RPC message, before the MCP SDK sees it.
 * @param tools - For the refusal's text: which arguments the tool takes.
 * @param refused - The refusals of one connection (stdio) or one HTTP request.
 * @example
 * guardToolCall(message, vaultTools, refused)
 */
export function guardToolCall(
  message: JSONRPCMessage,
  tools: readonly AnyVaultTool[],
  refused: Map<RequestId, string>,
): void {
  if (!('method' in message) || message.method !== 'tools/call' || !('id' in message)) return
  const params: unknown = message.params
  if (!isPlainObject(params)) return
  const text = unsafeArgumentsText(params.name, params.arguments, tools)
  if (text === undefined) return
  refused.set(message.id, text)
  params.arguments = {}
}

/**
 * The refusal {@link guardToolCall} kept for this request, taken out of the map.
 *
 * @param refused - The map `guardToolCall` filled.
 * @param id - The request id.
 * @returns The refusal to answer with, or `undefined` to run the call.
 * @example
 * const answer = refusedCall(refused, ctx.mcpReq.id)
 */
export function refusedCall(
  refused: Map<RequestId, string> | undefined,
  id: RequestId,
): CallToolResult | undefined {
  const text = refused?.get(id)
  if (text === undefined) return undefined
  refused?.delete(id)
  return refusal(text)
}

/** The first problem with the arguments, code first (the schemas' messages carry their code). */
function inputErrorText(error: z.ZodError): string {
  const issue = error.issues[0]
  if (!issue) return 'INVALID_ARGUMENT: The arguments are not valid.'
  if (/^[A-Z][A-Z_]+: /.test(issue.message)) return issue.message
  const where = issue.path.length ? `${issue.path.join('.')}: ` : ''
  return `INVALID_ARGUMENT: ${where}${issue.message}.`
}
