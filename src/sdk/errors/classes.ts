import type { VaultAddresses } from '../chains.js'
import { summarizeCause } from './cause.js'
import type { VaultErrorCategory, VaultErrorCode, VaultErrorDetails } from './codes.js'

export type VaultErrorOptions = {
  code: VaultErrorCode
  category: VaultErrorCategory
  retryable?: boolean
  details?: VaultErrorDetails
  cause?: unknown
}

/**
 * The base of every error this package throws: a short message, a stable `code`, a `category`,
 * whether retrying the same call later can succeed (`retryable`), and `details`.
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

  constructor(message: string, options: VaultErrorOptions) {
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

/** Bad input: an amount, address, slippage or option the SDK cannot accept. */
export class VaultValidationError extends VaultError {
  override name = 'VaultValidationError'
  constructor(code: VaultErrorCode, message: string, details?: VaultErrorDetails) {
    super(message, { code, category: 'validation', ...(details ? { details } : {}) })
  }
}

/** The client's configuration does not match the chain: wrong chain, wrong or missing contracts. */
export class VaultConfigError extends VaultError {
  override name = 'VaultConfigError'
  constructor(code: VaultErrorCode, message: string, details?: VaultErrorDetails, cause?: unknown) {
    super(message, { code, category: 'config', ...(details ? { details } : {}), cause })
  }
}

/** A configured address or a chain value differs from what the chain says. Names the field. */
export class AddressMismatchError extends VaultConfigError {
  override name = 'AddressMismatchError'
  /** The field that differs, such as `router.ORACLE()` or `shareToken.VAULT_ROUTER()`. */
  readonly field: string
  readonly expected: string
  readonly actual: string
  constructor(
    field: string,
    expected: string,
    actual: string,
    code: VaultErrorCode = 'ADDRESS_MISMATCH',
  ) {
    super(code, `Address check failed for ${field}: expected ${expected}, got ${actual}.`, {
      field,
      expected,
      actual,
    })
    this.field = field
    this.expected = expected
    this.actual = actual
  }
}

/** On-chain state blocks the action (paused, below minimum, no allowance, …); nothing was sent. */
export class VaultPreconditionError extends VaultError {
  override name = 'VaultPreconditionError'
  constructor(code: VaultErrorCode, message: string, details?: VaultErrorDetails) {
    super(message, { code, category: 'precondition', ...(details ? { details } : {}) })
  }
}

/** Which vault contract an error came from, when known. */
export type VaultContractRole = keyof VaultAddresses | 'multicall3'

/** A contract reverted. Known errors are decoded into `errorName` and `args`. */
export class VaultContractError extends VaultError {
  override name = 'VaultContractError'
  /** The Solidity error name, such as `TVLCapExceeded`; `Error` for a reason string, `Panic` for a panic. */
  readonly errorName: string | undefined
  /** The decoded error arguments, in order. */
  readonly args: readonly unknown[]
  /** The contract that was called, when known. */
  readonly contract: VaultContractRole | undefined
  constructor(
    code: VaultErrorCode,
    message: string,
    options: {
      errorName?: string | undefined
      args?: readonly unknown[]
      contract?: VaultContractRole | undefined
      details?: VaultErrorDetails
      cause?: unknown
      retryable?: boolean
    },
  ) {
    super(message, {
      code,
      category: 'contract',
      retryable: options.retryable ?? false,
      details: {
        ...(options.contract ? { contract: options.contract } : {}),
        ...(options.errorName ? { errorName: options.errorName } : {}),
        ...(options.args?.length ? { args: options.args } : {}),
        ...options.details,
      },
      cause: options.cause,
    })
    this.errorName = options.errorName
    this.args = options.args ?? []
    this.contract = options.contract
  }
}

/**
 * A transaction was sent but failed, its log was missing, the wallet refused to sign or pay gas, or the
 * node refused it because another sender took its nonce (`NONCE_CONFLICT`, retryable).
 */
export class VaultTransactionError extends VaultError {
  override name = 'VaultTransactionError'
  constructor(
    code: VaultErrorCode,
    message: string,
    details?: VaultErrorDetails,
    cause?: unknown,
    options: { retryable?: boolean } = {},
  ) {
    super(message, {
      code,
      category: 'transaction',
      retryable: options.retryable ?? false,
      ...(details ? { details } : {}),
      cause,
    })
  }
}

/** The RPC failed. Rate limits, 5xx, timeouts, network failures and malformed answers are retryable. */
export class VaultRpcError extends VaultError {
  override name = 'VaultRpcError'
  /** The HTTP status, when there was one. */
  readonly status: number | undefined
  /** How long the server asked to wait (`Retry-After`), in ms, when it said so. */
  readonly retryAfterMs: number | undefined
  constructor(
    code: VaultErrorCode,
    message: string,
    options: {
      retryable: boolean
      status?: number | undefined
      retryAfterMs?: number | undefined
      details?: VaultErrorDetails
      cause?: unknown
    },
  ) {
    super(message, {
      code,
      category: 'rpc',
      retryable: options.retryable,
      details: {
        ...(options.status === undefined ? {} : { status: options.status }),
        ...(options.retryAfterMs === undefined ? {} : { retryAfterMs: options.retryAfterMs }),
        ...options.details,
      },
      cause: options.cause,
    })
    this.status = options.status
    this.retryAfterMs = options.retryAfterMs
  }
}

/** Thrown by `unwrapField` when a read field is unavailable. */
export class UnavailableFieldError extends VaultError {
  override name = 'UnavailableFieldError'
  constructor(field: string, reason: string, details?: VaultErrorDetails) {
    super(`${field} is unavailable: ${reason}`, {
      code: 'FIELD_UNAVAILABLE',
      category: 'unavailable',
      details: { field, ...details },
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
