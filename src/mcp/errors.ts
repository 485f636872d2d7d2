import {
  VaultContractError,
  VaultError,
  type VaultErrorCategory,
  type VaultErrorCode,
  type VaultErrorOptions,
} from '../index.js'
import type { McpLogger } from './logger.js'

/** Codes only the MCP layer raises: their own section of `vaultErrorCodes`. */
export type McpOnlyErrorCode = Extract<
  VaultErrorCode,
  'PLAN_CAP_EXCEEDED' | 'INVALID_CONFIG' | 'INTERNAL_ERROR'
>

/**
 * A stable error code an MCP client can act on. It is `VaultErrorCode`, one family: a tool answers
 * with the SDK's codes and the MCP layer's own (`McpOnlyErrorCode`).
 */
export type McpErrorCode = VaultErrorCode

/**
 * A tool call the server refuses, with a message that says what is wrong and what to do. It never
 * reaches the client as a thrown error: the tool answers `isError: true` with its text.
 *
 * @example
 * new McpToolError('Give amountUsdc or shares.', { code: 'INVALID_ARGUMENT' })
 */
export class McpToolError extends VaultError {
  override name = 'McpToolError'
  /**
   * @param message - What is wrong and what to do; the client reads it as it is.
   * @param options - The common options, and the `category` (`validation`, for bad tool input, when
   *   left out; a refusal made from an SDK error passes that error's).
   */
  constructor(
    message: string,
    options: VaultErrorOptions & { category?: VaultErrorCategory | undefined },
  ) {
    super(message, { ...options, category: options.category ?? 'validation' })
  }
}

/** What to do next, for the SDK errors whose message says only what happened. */
const advice: Partial<Record<McpErrorCode, string>> = {
  BELOW_MIN_DEPOSIT: 'Plan a deposit of at least the minimum.',
  TVL_CAP_EXCEEDED: 'Plan a smaller deposit that fits the room left (vault_status shows it).',
  INSUFFICIENT_USDC: 'Fund the wallet with more USDC, or plan a smaller deposit.',
  WALLET_NOT_REGISTERED: 'The wallet has no position: deposit first (vault_plan_deposit).',
  INSUFFICIENT_SHARES:
    'Check the position with vault_get_position, then withdraw at most its withdrawableUsdc or its shares.',
  UNSERVICEABLE_AMOUNT:
    'Withdraw at most the withdrawableUsdc that vault_get_position reports, or withdraw by shares.',
  NO_POSITION: 'The wallet holds no shares: there is nothing to withdraw.',
  SLIPPAGE_EXCEEDED: 'Plan again, or allow more slippage with slippageBps.',
  STALE_ORACLE: 'Anyone can refresh it with the oracle’s recordObservation(); then plan again.',
  NO_SAFE_ROUTE: 'Try again later or with a smaller amount.',
  NO_SAFE_VAULT: 'Try again later.',
  INSUFFICIENT_VAULT_LIQUIDITY: 'Try again later or withdraw less.',
  MORPHO_UNREACHABLE: 'Try again later.',
  RPC_UNAUTHORIZED:
    'Calling again will not help: fix the URL or the key in BASE_SEPOLIA_RPC_URL, then restart the server.',
}

const rpcAdvice =
  'The RPC (BASE_SEPOLIA_RPC_URL) is having trouble: call the tool again in a moment.'

/**
 * Turns anything a tool handler threw into the text of the tool's `isError` answer. The text starts
 * with the stable code (and `(retryable)` for RPC trouble), then says what is wrong and what to do.
 * An {@link McpToolError}'s message is used as it is; an SDK error keeps its code and its (already
 * redacted) message, followed by advice. Anything unexpected is logged and answered as
 * `INTERNAL_ERROR` without its message, so no stack or path can leak.
 *
 * @param error - What the handler threw.
 * @param logger - Where unexpected errors are logged.
 * @returns Such as `INVALID_ARGUMENT: Give either amountUsdc or shares.`
 * @example
 * toolErrorText(new McpToolError('Give either amountUsdc or shares.', { code: 'INVALID_ARGUMENT' }), logger)
 */
export function toolErrorText(error: unknown, logger: McpLogger): string {
  const { code, retryable, message } = describeToolError(error, logger)
  return `${code}${retryable ? ' (retryable)' : ''}: ${message}`
}

function describeToolError(
  error: unknown,
  logger: McpLogger,
): { code: McpErrorCode; retryable: boolean; message: string } {
  if (error instanceof McpToolError) return error
  if (error instanceof VaultError && error.category !== 'internal') {
    return { code: error.code, retryable: error.retryable, message: withAdvice(error) }
  }
  logger.error(`Unexpected error in a tool call: ${error instanceof Error ? error.message : error}`)
  return {
    code: 'INTERNAL_ERROR',
    retryable: false,
    message:
      'The server hit an unexpected error, so nothing was read or planned. Calling again with the same input will most likely fail the same way; the server log has the details.',
  }
}

/**
 * An SDK error's message, the name of the contract error it decodes (if any), and what to do.
 *
 * @param error - An SDK error.
 * @returns Such as `The wallet holds 0 USDC, less than the 25 USDC to deposit. Fund the wallet…`.
 * @example
 * withAdvice(error)
 */
export function withAdvice(error: VaultError): string {
  const parts = [error.message]
  // The Solidity error's name lets a reader look the revert up in the protocol's documentation.
  if (
    error instanceof VaultContractError &&
    error.errorName &&
    !/^(Error|Panic)$/.test(error.errorName)
  ) {
    parts.push(`(The contract reverted with ${error.errorName}.)`)
  }
  const hint = error.category === 'rpc' && error.retryable ? rpcAdvice : advice[error.code]
  // Some SDK messages end with the same advice ("Try again later."): say it once.
  if (hint && !error.message.includes(hint)) parts.push(hint)
  return parts.join(' ')
}
