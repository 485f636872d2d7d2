// `x402-vault/mcp`: the MCP server, to run as it is (`createServer`, `runStdioServer`,
// `runHttpServer`), to mount in your own HTTP app (`createMcpHttpHandler`) or to put its tools on your
// own MCP server (`registerVaultTools`). The API report `api/x402-vault.mcp.api.md`
// records this list.
export {
  loadMcpConfig,
  type McpConfig,
  McpConfigError,
  type McpEnv,
  type McpLogLevel,
} from './config.js'
export { type McpErrorCode, type McpOnlyErrorCode, McpToolError } from './errors.js'
export {
  createMcpHttpHandler,
  type McpHttpHandler,
  type McpHttpHandlerOptions,
  type McpHttpRequestInfo,
  type McpOAuthOptions,
  type ResourceMetadata,
} from './http.js'
export { loadMcpHttpConfig, type McpHttpConfig } from './httpConfig.js'
export { type HttpServerFlags, runHttpServer } from './httpServer.js'
export { createLogger, type McpLogger } from './logger.js'
export {
  type RegisterVaultToolsOptions,
  registerVaultTools,
  type VaultToolsHandle,
} from './registerVaultTools.js'
export { type CreateServerOptions, createServer } from './server.js'
export { runStdioServer } from './stdio.js'
export type { AnyVaultTool, VaultTool, VaultToolContext } from './tool.js'
export { vaultTools } from './tools/index.js'
