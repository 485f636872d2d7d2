/**
 * The stable error codes and categories every `VaultError` carries: the SDK's, the MCP server's and
 * the devnet's, in one list.
 */

/** What kind of problem an error is. */
export type VaultErrorCategory =
  /** Bad input from the caller (amount, address, slippage, options). */
  | 'validation'
  /** The client is misconfigured: chain, addresses, missing wallet client or account. */
  | 'config'
  /** On-chain state blocks the action; found before anything was sent. */
  | 'precondition'
  /** A contract reverted (in a simulation or a read), decoded when the error is known. */
  | 'contract'
  /** A sent transaction failed, or the wallet refused to sign. */
  | 'transaction'
  /** The RPC failed: network, HTTP status, rate limit, timeout, malformed answer. */
  | 'rpc'
  /** A read field could not be read (see `Unavailable`). */
  | 'unavailable'
  /** The local devnet could not start or act: anvil missing or failing, a failed deployment. */
  | 'devnet'
  /** Anything else. */
  | 'internal'

/** Every stable error code. Codes never change meaning; new ones may be added. */
export const vaultErrorCodes = [
  // validation
  'INVALID_AMOUNT',
  'INVALID_ADDRESS',
  'INVALID_SLIPPAGE',
  'INVALID_ARGUMENT',
  // config
  'UNKNOWN_CHAIN',
  'CHAIN_MISMATCH',
  'ADDRESS_MISMATCH',
  'NO_CONTRACT_CODE',
  'ADDRESSES_FILE_INVALID',
  'WALLET_CLIENT_REQUIRED',
  'ACCOUNT_REQUIRED',
  'PEER_DEPENDENCY_MISSING',
  'PEER_DEPENDENCY_MISMATCH',
  // preconditions and their contract-revert twins
  'DEPOSITS_PAUSED',
  'BELOW_MIN_DEPOSIT',
  'TVL_CAP_EXCEEDED',
  'INSUFFICIENT_USDC',
  'INSUFFICIENT_ALLOWANCE',
  'INSUFFICIENT_SHARES',
  'WALLET_NOT_REGISTERED',
  'WALLET_ALREADY_REGISTERED',
  'NOT_AUTHORISED',
  'ZERO_AMOUNT',
  'ZERO_ADDRESS',
  'SLIPPAGE_EXCEEDED',
  'NO_POSITION',
  'POSITION_ROUNDS_TO_ZERO',
  'PREVIEW_MATH_DEGENERATE',
  'UNSERVICEABLE_AMOUNT',
  'NO_SAFE_ROUTE',
  'NO_SAFE_VAULT',
  'INSUFFICIENT_VAULT_LIQUIDITY',
  'STALE_ORACLE',
  'MORPHO_UNREACHABLE',
  'PERMIT_EXPIRED',
  'INVALID_SIGNATURE',
  'NOT_EMERGENCY_MULTISIG',
  'ONLY_VAULT_ROUTER',
  'NON_TRANSFERABLE',
  'TOKEN_OPERATION_FAILED',
  'REENTRANT_CALL',
  'CONTRACT_REVERT',
  'CONTRACT_PANIC',
  'CONTRACT_NO_DATA',
  // transactions
  'TRANSACTION_REVERTED',
  'EVENT_NOT_FOUND',
  'RECEIPT_TIMEOUT',
  'USER_REJECTED',
  'INSUFFICIENT_FUNDS_FOR_GAS',
  'NONCE_CONFLICT',
  'SEND_OUTCOME_UNKNOWN',
  'TRANSACTION_ALREADY_KNOWN',
  // x402 facilitator (seller plugins)
  'FACILITATOR_UNREACHABLE',
  'FACILITATOR_UNSUPPORTED',
  'FACILITATOR_TIMEOUT',
  'FACILITATOR_CONNECTION_LOST',
  'FACILITATOR_HTTP_ERROR',
  'FACILITATOR_BAD_RESPONSE',
  // a payment's settlement, checked on chain (seller plugins)
  'SETTLEMENT_PENDING',
  'SETTLEMENT_CLAIM_MISMATCH',
  'LATE_SETTLEMENT',
  'PERMIT2_ALLOWANCE_REQUIRED',
  // batch-settlement routes (seller plugins)
  'BATCH_SETTLEMENT_FAILED',
  'BATCH_CLOSE_INCOMPLETE',
  'CHANNEL_STORAGE_UNAVAILABLE',
  // the buyer side (vault.attachToClient)
  'PAYMENT_OVER_CAP',
  'BUYER_FUNDS_SHORT',
  'VAULT_CANNOT_DELIVER',
  'RECALL_FAILED',
  'PAYMENT_ALREADY_SETTLED',
  'PAYMENT_OUTCOME_UNKNOWN',
  // the watch sweeper (x402-vault sweep --watch --lock)
  'SWEEP_LOCK_LOST',
  'SWEEP_LOCK_UNAVAILABLE',
  // rpc
  'RPC_RATE_LIMITED',
  'RPC_TIMEOUT',
  'RPC_HTTP_ERROR',
  'RPC_UNREACHABLE',
  'RPC_BAD_RESPONSE',
  'RPC_UNAUTHORIZED',
  'RPC_ERROR',
  'RECEIPT_NOT_FOUND',
  'TRANSACTION_NOT_FOUND',
  'BLOCK_NOT_FOUND',
  // reads
  'FIELD_UNAVAILABLE',
  'UNKNOWN',
  // MCP server (x402-vault/mcp)
  'PLAN_CAP_EXCEEDED',
  'INVALID_CONFIG',
  'INTERNAL_ERROR',
  // devnet (x402-vault/devnet)
  'INVALID_OPTIONS',
  'ANVIL_NOT_FOUND',
  'ANVIL_START_FAILED',
  'DEPLOY_FAILED',
  'FACILITATOR_START_FAILED',
] as const

/** A stable error code, such as `BELOW_MIN_DEPOSIT`, `RPC_RATE_LIMITED` or `ANVIL_NOT_FOUND`. */
export type VaultErrorCode = (typeof vaultErrorCodes)[number]

/** Extra facts about an error. Values may be bigints (amounts in base units). */
export type VaultErrorDetails = Record<string, unknown>
