import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { loadMcpConfig, type McpConfig, McpConfigError } from './config.js'
import { redactLogText } from './logger.js'
import { createServer } from './server.js'
import { guardToolArguments } from './tool.js'
import { vaultTools } from './tools/index.js'

/**
 * Runs the MCP server over stdio until the client closes stdin: what `x402-vault mcp` and
 * `x402-vault-mcp` do. A configuration error is one line on stderr and exit code 1; stdout carries
 * nothing but JSON-RPC.
 *
 * @param env - The environment, usually `process.env`.
 * @returns The process exit code once the client has gone (0), or 1 when the server cannot start.
 * @example
 * process.exitCode = await runStdioServer(process.env)
 */
export async function runStdioServer(env: NodeJS.ProcessEnv): Promise<number> {
  let config: McpConfig
  try {
    config = await loadMcpConfig(env)
  } catch (error) {
    const message = error instanceof McpConfigError ? error.message : String(error)
    process.stderr.write(`x402-vault-mcp: ${redactLogText(message).replace(/\s*\n\s*/g, ' ')}\n`)
    return 1
  }
  const server = createServer(config)
  const closed = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve)
    process.stdin.once('close', resolve)
  })
  const transport = new StdioServerTransport()
  await server.connect(transport)
  guardToolArguments(transport, vaultTools)
  await closed
  await server.close()
  return 0
}
