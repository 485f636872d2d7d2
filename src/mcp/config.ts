import { isAbsolute } from 'node:path'
import {
  formatUsdc,
  loadVaultAddresses,
  parseUsdc,
  type VaultAddresses,
  type VaultChainName,
  VaultError,
  type VaultErrorOptions,
  vaultChains,
} from '../index.js'
import { defaultChainName, isVaultChainName, publicRpcUrlOf, redactUrl } from '../sdk/shared.js'

/** How much the server writes to stderr: `error` is quiet, `debug` logs every tool call. */
export type McpLogLevel = 'debug' | 'info' | 'warn' | 'error'

/** Everything the MCP server needs, read from the environment by {@link loadMcpConfig}. */
export type McpConfig = {
  /** The only chain of this beta. */
  chain: 'base-sepolia'
  /** The JSON-RPC URL. It may carry an API key: never log or show more than its origin. */
  rpcUrl: string
  /** The largest USDC amount one plan may move, in base units (6 decimals). */
  maxPlanUsdc: bigint
  /** A deployment override (a devnet, a private deployment); the public one when absent. */
  addresses?: VaultAddresses | undefined
  logLevel: McpLogLevel
}

/** The environment variables the server reads, and nothing else: no variable takes a key. */
export type McpEnv = {
  BASE_SEPOLIA_RPC_URL?: string | undefined
  VAULT_CHAIN?: string | undefined
  VAULT_MCP_MAX_PLAN_USDC?: string | undefined
  VAULT_ADDRESSES?: string | undefined
  MCP_LOG_LEVEL?: string | undefined
  /** Streamable HTTP only (`x402-vault mcp --http`): the port, default 8402. */
  VAULT_MCP_PORT?: string | undefined
  /** Streamable HTTP only: the bearer token clients must send; required off loopback. */
  VAULT_MCP_HTTP_TOKEN?: string | undefined
  /** Streamable HTTP only: `1` serves anyone without authentication (a public endpoint). */
  VAULT_MCP_PUBLIC?: string | undefined
  /** Streamable HTTP only: the OAuth authorization server's issuer URL; OAuth instead of the token. */
  VAULT_MCP_OAUTH_ISSUER?: string | undefined
  /** Streamable HTTP only, with OAuth: this server's public URL, the audience its tokens must name. */
  VAULT_MCP_OAUTH_RESOURCE?: string | undefined
  /** Streamable HTTP only, with OAuth: the scopes every token must hold, separated by spaces. */
  VAULT_MCP_OAUTH_SCOPES?: string | undefined
  /** Streamable HTTP only: comma-separated origins (`https://app.example.com`) allowed to call. */
  VAULT_MCP_ALLOWED_ORIGINS?: string | undefined
  /** Streamable HTTP only: comma-separated host names the server answers for; required when public. */
  VAULT_MCP_ALLOWED_HOSTS?: string | undefined
  /** Streamable HTTP only: the header the proxy in front writes the client's address in. */
  VAULT_MCP_TRUST_PROXY?: string | undefined
  /** Streamable HTTP only: requests per minute per client, default 600. */
  VAULT_MCP_RATE_LIMIT?: string | undefined
  /** Streamable HTTP only: requests per minute from all clients together, default 6000. */
  VAULT_MCP_SERVER_RATE_LIMIT?: string | undefined
  /** Streamable HTTP only: requests served at once, default 128. */
  VAULT_MCP_MAX_CONCURRENT?: string | undefined
  /** Streamable HTTP only: seconds a request may take, default 30. */
  VAULT_MCP_REQUEST_TIMEOUT?: string | undefined
}

/** The one chain this beta serves: the default chain, Base Sepolia. */
const servedChain = defaultChainName
/** The public Base Sepolia RPC, used when `BASE_SEPOLIA_RPC_URL` is unset. */
export const defaultRpcUrl = publicRpcUrlOf(servedChain)
/** The per-plan cap when `VAULT_MCP_MAX_PLAN_USDC` is unset: 100 USDC. */
export const defaultMaxPlanUsdc = parseUsdc('100')

const logLevels: readonly McpLogLevel[] = ['debug', 'info', 'warn', 'error']

/**
 * The environment cannot start the server. The message is one line naming the variable; the code is
 * always `INVALID_CONFIG`.
 *
 * @example
 * new McpConfigError('MCP_LOG_LEVEL must be one of …', { variable: 'MCP_LOG_LEVEL' })
 */
export class McpConfigError extends VaultError {
  override name = 'McpConfigError'
  /** The variable at fault, such as `VAULT_CHAIN`. */
  readonly variable: keyof McpEnv
  /**
   * @param options - The `variable` at fault (also put in `details`), and optionally details and the
   *   cause.
   */
  constructor(
    message: string,
    options: Omit<VaultErrorOptions, 'code' | 'retryable'> & { variable: keyof McpEnv },
  ) {
    const { variable, ...common } = options
    super(message, {
      ...common,
      code: 'INVALID_CONFIG',
      category: 'config',
      details: { variable, ...options.details },
    })
    this.variable = variable
  }
}

/**
 * Reads the MCP server's configuration from the environment and checks every value.
 *
 * An empty variable counts as unset (client configs often carry blank placeholders). There is no
 * private-key variable: the server never signs.
 *
 * @param env - The environment, usually `process.env`.
 * @returns The checked configuration.
 * @throws {McpConfigError} naming the variable: `VAULT_CHAIN` other than `base-sepolia`, a
 *   `BASE_SEPOLIA_RPC_URL` that is not http(s), a `VAULT_MCP_MAX_PLAN_USDC` that is not a positive
 *   decimal, a `VAULT_ADDRESSES` file that cannot be used (the reason names the file and the key), an
 *   unknown `MCP_LOG_LEVEL`.
 * @example
 * const config = await loadMcpConfig(process.env)
 * const server = createServer(config)
 */
export async function loadMcpConfig(env: McpEnv): Promise<McpConfig> {
  const given = env.VAULT_CHAIN?.trim() || servedChain
  // Chain names are case-insensitive: BASE-SEPOLIA is base-sepolia.
  const chain = given.toLowerCase()
  if (chain !== servedChain) {
    const why = isVaultChainName(chain)
      ? `the MCP server does not serve ${describeChain(chain)} yet`
      : 'it is not a chain this server knows'
    throw new McpConfigError(
      `VAULT_CHAIN must be ${servedChain} in this beta, not ${JSON.stringify(given.slice(0, 40))}: ${why}.`,
      { variable: 'VAULT_CHAIN' },
    )
  }
  const rpcUrl = env.BASE_SEPOLIA_RPC_URL || defaultRpcUrl
  if (!isHttpUrl(rpcUrl)) {
    throw new McpConfigError(
      `BASE_SEPOLIA_RPC_URL must be an http(s) URL, not ${redactUrl(rpcUrl)}.`,
      { variable: 'BASE_SEPOLIA_RPC_URL' },
    )
  }
  const logLevel = env.MCP_LOG_LEVEL || 'info'
  if (!(logLevels as readonly string[]).includes(logLevel)) {
    throw new McpConfigError(
      `MCP_LOG_LEVEL must be one of ${logLevels.join(', ')}, not ${JSON.stringify(logLevel.slice(0, 40))}.`,
      { variable: 'MCP_LOG_LEVEL' },
    )
  }
  return {
    chain: servedChain,
    rpcUrl,
    maxPlanUsdc: parseMaxPlanUsdc(env.VAULT_MCP_MAX_PLAN_USDC),
    addresses: env.VAULT_ADDRESSES ? await loadAddresses(env.VAULT_ADDRESSES) : undefined,
    logLevel: logLevel as McpLogLevel,
  }
}

/** A chain as people name it: `Base mainnet`, `Base Sepolia`. */
function describeChain(chain: VaultChainName): string {
  const { viemChain } = vaultChains[chain]
  return viemChain.testnet ? viemChain.name : `${viemChain.name} mainnet`
}

function parseMaxPlanUsdc(text: string | undefined): bigint {
  if (!text) return defaultMaxPlanUsdc
  let cap: bigint
  try {
    cap = parseUsdc(text)
  } catch (error) {
    throw new McpConfigError(
      `VAULT_MCP_MAX_PLAN_USDC must be a positive decimal USDC amount such as "100": ${(error as Error).message}`,
      { variable: 'VAULT_MCP_MAX_PLAN_USDC', cause: error },
    )
  }
  if (cap === 0n) {
    throw new McpConfigError(
      `VAULT_MCP_MAX_PLAN_USDC must be greater than 0 USDC (it is ${formatUsdc(cap)}).`,
      { variable: 'VAULT_MCP_MAX_PLAN_USDC' },
    )
  }
  return cap
}

async function loadAddresses(path: string): Promise<VaultAddresses> {
  try {
    return await loadVaultAddresses(path, { chain: servedChain })
  } catch (error) {
    // The loader's message already names the file and the key at fault. A relative path is resolved
    // against the working directory the MCP client started the server in, which the user did not
    // choose and rarely knows: name it.
    const relative = isAbsolute(path)
      ? ''
      : ` The path is relative, so it was resolved against the server's working directory, ${process.cwd()}, which the MCP client chose: give an absolute path.`
    throw new McpConfigError(`VAULT_ADDRESSES: ${(error as Error).message}${relative}`, {
      variable: 'VAULT_ADDRESSES',
      details: { file: path, ...(relative ? { workingDirectory: process.cwd() } : {}) },
    })
  }
}

function isHttpUrl(text: string): boolean {
  try {
    const { protocol } = new URL(text)
    return protocol === 'http:' || protocol === 'https:'
  } catch {
    return false
  }
}
