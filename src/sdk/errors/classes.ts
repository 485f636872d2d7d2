import type { VaultAddresses } from '../chains.js'
import { summarizeCause } from './cause.js'
import type { VaultErrorCategory, VaultErrorCode, VaultErrorDetails } from './codes.js'

/**
 * What every error's constructor takes besides its message: a stable `code`, and optionally `details`,
 * the `cause` and whether retrying can succeed.
 */
export type VaultErrorOptions = {
  /** The stable code, such as `BELOW_MIN_DEPOSIT`. */
  code: VaultErrorCode
  /** Extra facts; amounts are bigints in base units. */
  details?: VaultErrorDetails | undefined
  /** The underlying error. Only a redacted summary of it is kept (a `VaultError` is kept as it is). */
  cause?: unknown
  /** Whether retrying the same call later, unchanged, can succeed. `false` when left out. */
  retryable?: boolean | undefined
}

/**
 * The base of every error this package throws, from the SDK, the seller plugins, the MCP server and the
 * devnet: a short message, a stable `code`, a `category`, whether retrying the same call later can
 * succeed (`retryable`), `details` (always an object) and a `cause`.
 *
 * The message never contains an RPC URL's credentials/path/query or a private key. `cause` is a
 * redacted summary of the underlying error (its name and message), or the `VaultError` it came from.
 * The original error is not kept anywhere on the object, hidden properties included: RPC libraries put
 * full URLs, keys and all, in their messages and fields.
 *
 * @example
 * try { await vault.depositAndWait({ amount: 1n }) }
 * catch (error) { if (error instanceof VaultError) console.log(error.code, error.retryable) }
 */
export class VaultError extends Error {
  override name = 'VaultError'
  readonly code: VaultErrorCode
  readonly category: VaultErrorCategory
  readonly retryable: boolean
  readonly details: VaultErrorDetails

  /**
   * @param message - What happened (and, where it helps, what to do), in one or two sentences.
   * @param options - The code, the category, and optionally details, cause and `retryable`.
   */
  constructor(message: string, options: VaultErrorOptions & { category: VaultErrorCategory }) {
    super(
      message,
      options.cause === undefined
        ? undefined
        : {
            cause:
              options.cause instanceof VaultError ? options.cause : summarizeCause(options.cause),
          },
    )
    this.code = options.code
    this.category = options.category
    this.retryable = options.retryable ?? false
    this.details = options.details ?? {}
  }

  /** A JSON-safe view (bigints become decimal strings). */
  toJSON(): {
    name: string
    code: VaultErrorCode
    category: VaultErrorCategory
    retryable: boolean
    message: string
    details: Record<string, unknown>
  } {
    return {
      name: this.name,
      code: this.code,
      category: this.category,
      retryable: this.retryable,
      message: this.message,
      details: toJsonSafe(this.details) as Record<string, unknown>,
    }
  }
}

/**
 * Bad input: an amount, address, slippage or option the SDK cannot accept.
 *
 * @example
 * new VaultValidationError('Amount must be positive.', { code: 'INVALID_AMOUNT', details: { amount } })
 */
export class VaultValidationError extends VaultError {
  override name = 'VaultValidationError'
  constructor(message: string, options: VaultErrorOptions) {
    super(message, { ...options, category: 'validation' })
  }
}

/**
 * The client's configuration does not match the chain: wrong chain, wrong or missing contracts.
 *
 * @example
 * new VaultConfigError('No wallet client.', { code: 'WALLET_CLIENT_REQUIRED' })
 */
export class VaultConfigError extends VaultError {
  override name = 'VaultConfigError'
  constructor(message: string, options: VaultErrorOptions) {
    super(message, { ...options, category: 'config' })
  }
}

/**
 * A configured address or a chain value differs from what the chain says. Names the field. Its message
 * is made from the field and the two values, so it takes no message.
 *
 * @example
 * new AddressMismatchError({ field: 'router.USDC()', expected: a.usdc, actual: usdc })
 */
export class AddressMismatchError extends VaultConfigError {
  override name = 'AddressMismatchError'
  /** The field that differs, such as `router.ORACLE()` or `shareToken.VAULT_ROUTER()`. */
  readonly field: string
  readonly expected: string
  readonly actual: string
  /**
   * @param options - The field, the expected and the actual value, and the code
   *   (`ADDRESS_MISMATCH` when left out).
   */
  constructor(options: {
    field: string
    expected: string
    actual: string
    code?: VaultErrorCode | undefined
  }) {
    const { field, expected, actual } = options
    super(`Address check failed for ${field}: expected ${expected}, got ${actual}.`, {
      code: options.code ?? 'ADDRESS_MISMATCH',
      details: { field, expected, actual },
    })
    this.field = field
    this.expected = expected
    this.actual = actual
  }
}

/**
 * On-chain state blocks the action (paused, below minimum, no allowance, …); nothing was sent.
 *
 * @example
 * new VaultPreconditionError('Deposits are paused.', { code: 'DEPOSITS_PAUSED' })
 */
export class VaultPreconditionError extends VaultError {
  override name = 'VaultPreconditionError'
  constructor(message: string, options: VaultErrorOptions) {
    super(message, { ...options, category: 'precondition' })
  }
}

/** Which vault contract an error came from, when known. */
export type VaultContractRole = keyof VaultAddresses | 'multicall3'

/**
 * A contract reverted. Known errors are decoded into `errorName` and `args`.
 *
 * @example
 * new VaultContractError('The yield oracle is stale.', { code: 'STALE_ORACLE', errorName: 'StaleOracle' })
 */
export class VaultContractError extends VaultError {
  override name = 'VaultContractError'
  /** The Solidity error name, such as `TVLCapExceeded`; `Error` for a reason string, `Panic` for a panic. */
  readonly errorName: string | undefined
  /** The decoded error arguments, in order. */
  readonly args: readonly unknown[]
  /** The contract that was called, when known. */
  readonly contract: VaultContractRole | undefined
  /**
   * @param options - Besides the common options: the decoded `errorName` and `args`, and the
   *   `contract` called. All three are also put in `details`.
   */
  constructor(
    message: string,
    options: VaultErrorOptions & {
      errorName?: string | undefined
      args?: readonly unknown[] | undefined
      contract?: VaultContractRole | undefined
    },
  ) {
    const { errorName, args, contract, ...common } = options
    super(message, {
      ...common,
      category: 'contract',
      details: {
        ...(contract ? { contract } : {}),
        ...(errorName ? { errorName } : {}),
        ...(args?.length ? { args } : {}),
        ...options.details,
      },
    })
    this.errorName = errorName
    this.args = args ?? []
    this.contract = contract
  }
}

/**
 * A transaction was sent but failed, its log was missing, the wallet refused to sign or pay gas, or the
 * node refused it because another sender took its nonce (`NONCE_CONFLICT`, retryable).
 *
 * @example
 * new VaultTransactionError('The wallet refused the request.', { code: 'USER_REJECTED', cause })
 */
export class VaultTransactionError extends VaultError {
  override name = 'VaultTransactionError'
  constructor(message: string, options: VaultErrorOptions) {
    super(message, { ...options, category: 'transaction' })
  }
}

/**
 * The RPC failed. Rate limits, 5xx, timeouts, network failures and malformed answers are retryable.
 *
 * @example
 * new VaultRpcError('The RPC request timed out.', { code: 'RPC_TIMEOUT', retryable: true })
 */
export class VaultRpcError extends VaultError {
  override name = 'VaultRpcError'
  /** The HTTP status, when there was one. */
  readonly status: number | undefined
  /** How long the server asked to wait (`Retry-After`), in ms, when it said so. */
  readonly retryAfterMs: number | undefined
  /**
   * @param options - Besides the common options (`retryable` is required here): the HTTP `status`
   *   and the `retryAfterMs` the server asked for. Both are also put in `details`.
   */
  constructor(
    message: string,
    options: VaultErrorOptions & {
      retryable: boolean
      status?: number | undefined
      retryAfterMs?: number | undefined
    },
  ) {
    const { status, retryAfterMs, ...common } = options
    super(message, {
      ...common,
      category: 'rpc',
      details: {
        ...(status === undefined ? {} : { status }),
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        ...options.details,
      },
    })
    this.status = status
    this.retryAfterMs = retryAfterMs
  }
}

/**
 * Thrown by `unwrapField` when a read field is unavailable. Its message is made from the field and the
 * reason, so it takes no message.
 *
 * @example
 * new UnavailableFieldError({ field: 'optimal', reason: 'the oracle considers no venue safe' })
 */
export class UnavailableFieldError extends VaultError {
  override name = 'UnavailableFieldError'
  /** @param options - The field, why it is unavailable, and extra details. */
  constructor(options: {
    field: string
    reason: string
    details?: VaultErrorDetails | undefined
  }) {
    super(`${options.field} is unavailable: ${options.reason}`, {
      code: 'FIELD_UNAVAILABLE',
      category: 'unavailable',
      details: { field: options.field, ...options.details },
    })
  }
}

/** Converts bigints (recursively) to decimal strings so a value can go through JSON.stringify. */
export function toJsonSafe(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString()
  if (Array.isArray(value)) return value.map(toJsonSafe)
  if (value instanceof Error) return value.message
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toJsonSafe(v)]))
  }
  return value
}
