export {
  defaultMaxPlanUsdc,
  defaultRpcUrl,
  loadMcpConfig,
  type McpConfig,
  McpConfigError,
  type McpEnv,
  type McpLogLevel,
} from './config.js'
export { type McpErrorCode, McpToolError } from './errors.js'
export { planWarning } from './json.js'
export { createLogger, type McpLogger, redactLogText } from './logger.js'
export { type CreateServerOptions, createServer } from './server.js'
export { runStdioServer } from './stdio.js'
export { vaultTools } from './tools/index.js'
