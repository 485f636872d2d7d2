import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js'
import type { z } from 'zod'
import type { VaultContext } from '../sdk/index.js'
import type { McpConfig } from './config.js'
import type { VaultConnection } from './connection.js'
import { toolErrorText } from './errors.js'
import type { McpLogger } from './logger.js'

/** What a tool handler gets besides its input. */
export type ToolContext = {
  /** The verified vault: waits for verification (or retries it after RPC trouble). */
  vault: () => Promise<VaultContext>
  config: McpConfig
  logger: McpLogger
}

/** One MCP tool: its listing (name, title, description, schemas, annotations) and its handler. */
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
    context: ToolContext,
  ) => Promise<z.input<z.ZodObject<output>>>
}

/** Any tool, its types erased for the list of tools (the MCP SDK parses the input first). */
export type AnyVaultTool = Omit<VaultTool, 'inputSchema' | 'outputSchema' | 'handler'> & {
  inputSchema: z.AnyZodObject
  outputSchema: z.AnyZodObject
  handler: (input: never, context: ToolContext) => Promise<unknown>
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
 * Registers a tool on the server. Its answer is the structured content plus the same JSON as text;
 * any failure becomes an `isError` answer with a stable code (see `toolErrorText`).
 *
 * @param server - The MCP server.
 * @param tool - The tool.
 * @param dependencies - The vault connection, the configuration and the logger.
 * @example
 * registerVaultTool(server, vaultStatus, { connection, config, logger })
 */
export function registerVaultTool(
  server: McpServer,
  tool: AnyVaultTool,
  dependencies: { connection: VaultConnection; config: McpConfig; logger: McpLogger },
): void {
  const { connection, config, logger } = dependencies
  const context: ToolContext = { vault: connection.ready, config, logger }
  const listing = {
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema,
    outputSchema: tool.outputSchema,
    annotations: tool.annotations,
  }
  server.registerTool(tool.name, listing, async (input: unknown) => {
    const started = performance.now()
    const took = () => `${Math.round(performance.now() - started)} ms`
    try {
      // The MCP SDK has parsed `input` with the tool's input schema.
      const output = (await tool.handler(input as never, context)) as Record<string, unknown>
      logger.debug(`${tool.name} answered in ${took()}.`)
      return {
        content: [{ type: 'text' as const, text: JSON.stringify(output, null, 2) }],
        structuredContent: output,
      }
    } catch (error) {
      const text = toolErrorText(error, logger)
      logger.debug(`${tool.name} refused in ${took()}: ${text}`)
      return { isError: true, content: [{ type: 'text' as const, text }] }
    }
  })
}
