import {
  type Abi,
  AbiDecodingZeroDataError,
  type Address,
  BaseError,
  ChainMismatchError,
  ContractFunctionExecutionError,
  ContractFunctionRevertedError,
  ContractFunctionZeroDataError,
  decodeErrorResult,
  type Hex,
  HttpRequestError,
  InsufficientFundsError,
  isHex,
  RawContractError,
  RpcError,
  RpcRequestError,
  TimeoutError,
  UserRejectedRequestError,
} from 'viem'
import { vaultErrorsAbi } from './abis/index.js'
import type { VaultAddresses } from './chains.js'
import { redactSecrets, redactUrl } from './redact.js'

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
  // rpc
  'RPC_RATE_LIMITED',
  'RPC_TIMEOUT',
  'RPC_HTTP_ERROR',
  'RPC_UNREACHABLE',
  'RPC_BAD_RESPONSE',
  'RPC_UNAUTHORIZED',
  'RPC_ERROR',
  // reads
  'FIELD_UNAVAILABLE',
  'UNKNOWN',
] as const

/** A stable error code, such as `BELOW_MIN_DEPOSIT` or `RPC_RATE_LIMITED`. */
export type VaultErrorCode = (typeof vaultErrorCodes)[number]

/** Extra facts about an error. Values may be bigints (amounts in base units). */
export type VaultErrorDetails = Record<string, unknown>

type VaultErrorOptions = {
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
 * redacted summary of the underlying error; the original is kept, non-enumerable, on `rawCause`
 * (do not log it: RPC libraries put full URLs in their messages).
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
  declare readonly rawCause: unknown

  constructor(message: string, options: VaultErrorOptions) {
    super(
      message,
      options.cause === undefined ? undefined : { cause: summarizeCause(options.cause) },
    )
    this.code = options.code
    this.category = options.category
    this.retryable = options.retryable ?? false
    this.details = options.details ?? {}
    Object.defineProperty(this, 'rawCause', { value: options.cause, enumerable: false })
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

/** A transaction was sent but failed, its log was missing, or the wallet refused to sign or pay gas. */
export class VaultTransactionError extends VaultError {
  override name = 'VaultTransactionError'
  constructor(code: VaultErrorCode, message: string, details?: VaultErrorDetails, cause?: unknown) {
    super(message, { code, category: 'transaction', ...(details ? { details } : {}), cause })
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

// ---------------------------------------------------------------------------------------------
// Contract error table

type ErrorInfo = { code: VaultErrorCode; message: (args: readonly unknown[]) => string }

const usdc = (value: unknown) => (typeof value === 'bigint' ? `${fmt6(value)} USDC` : String(value))
const shares = (value: unknown) =>
  typeof value === 'bigint' ? `${fmt6(value)} shares` : String(value)

/**
 * Every named error of the router, oracle, fee collector and share token (plus the OpenZeppelin and
 * token errors they surface), with its stable code and a sentence that says what happened.
 */
const contractErrors: Record<string, ErrorInfo> = {
  NotAuthorised: {
    code: 'NOT_AUTHORISED',
    message: () =>
      'The router refused the caller: the wallet is not registered, or the sender is neither the wallet nor its operator.',
  },
  DepositsPausedError: {
    code: 'DEPOSITS_PAUSED',
    message: () => 'Deposits are paused on the vault. Withdrawals still work.',
  },
  ZeroAmount: {
    code: 'ZERO_AMOUNT',
    message: () => 'The amount is zero (or rounds to zero shares).',
  },
  ZeroAddress: {
    code: 'ZERO_ADDRESS',
    message: () => 'The zero address was given where an account is needed.',
  },
  TVLCapExceeded: {
    code: 'TVL_CAP_EXCEEDED',
    message: ([requested, cap]) =>
      `The deposit of ${usdc(requested)} would exceed the vault's TVL cap of ${usdc(cap)}.`,
  },
  InsufficientShares: {
    code: 'INSUFFICIENT_SHARES',
    message: ([requested, available]) =>
      `The wallet holds ${shares(available)}, fewer than the ${shares(requested)} requested.`,
  },
  NotEmergencyMultisig: {
    code: 'NOT_EMERGENCY_MULTISIG',
    message: () => 'Only the emergency multisig may do this.',
  },
  WalletAlreadyAuthorised: {
    code: 'WALLET_ALREADY_REGISTERED',
    message: () => 'The wallet is already registered with the router.',
  },
  PermitExpired: { code: 'PERMIT_EXPIRED', message: () => 'The permit signature has expired.' },
  InsufficientPermitAllowance: {
    code: 'INSUFFICIENT_ALLOWANCE',
    message: ([current, required]) =>
      `The router's USDC allowance is ${usdc(current)} after the permit, below the ${usdc(required)} required.`,
  },
  NoPositionToWithdraw: {
    code: 'NO_POSITION',
    message: () => 'The wallet has no position to withdraw.',
  },
  PositionRoundsToZero: {
    code: 'POSITION_ROUNDS_TO_ZERO',
    message: () => 'The position is too small: it rounds to zero.',
  },
  PreviewMathDegenerate: {
    code: 'PREVIEW_MATH_DEGENERATE',
    message: () => 'The withdrawal preview cannot be computed for this amount.',
  },
  UnserviceableNet: {
    code: 'UNSERVICEABLE_AMOUNT',
    message: ([desired, max]) =>
      `The wallet can receive at most ${usdc(max)} after fees, less than the ${usdc(desired)} requested.`,
  },
  InvalidAmount: {
    code: 'BELOW_MIN_DEPOSIT',
    message: () => "The deposit is below the router's minimum deposit (MIN_DEPOSIT).",
  },
  SlippageExceeded: {
    code: 'SLIPPAGE_EXCEEDED',
    message: ([received, minimum]) =>
      `Slippage exceeded: the call would give ${fmt(received)}, below the minimum of ${fmt(minimum)}.`,
  },
  InvalidSignature: { code: 'INVALID_SIGNATURE', message: () => 'The signature is invalid.' },
  NoSafeRoute: {
    code: 'NO_SAFE_ROUTE',
    message: ([amount]) =>
      `No venue is both safe and able to take a deposit of ${usdc(amount)} right now.`,
  },
  InsufficientVaultLiquidity: {
    code: 'INSUFFICIENT_VAULT_LIQUIDITY',
    message: ([requested, available]) =>
      `The venues can pay out ${usdc(available)} right now, less than the ${usdc(requested)} needed.`,
  },
  StaleOracle: {
    code: 'STALE_ORACLE',
    message: () => 'The yield oracle is stale; call recordObservation() on the oracle, then retry.',
  },
  MorphoUnreachable: {
    code: 'MORPHO_UNREACHABLE',
    message: () => 'The lending vault (Morpho) cannot be valued right now, so the router refuses.',
  },
  MorphoViewGasOutOfBounds: {
    code: 'CONTRACT_REVERT',
    message: ([provided, min, max]) =>
      `Morpho view gas ${fmt(provided)} is outside [${fmt(min)}, ${fmt(max)}].`,
  },
  NoSafeVault: {
    code: 'NO_SAFE_VAULT',
    message: () => 'The oracle considers no venue safe right now.',
  },
  NonTransferable: {
    code: 'NON_TRANSFERABLE',
    message: () => 'The share token cannot be transferred between wallets.',
  },
  OnlyVaultRouter: {
    code: 'ONLY_VAULT_ROUTER',
    message: ([caller]) => `Only the vault router may call this (caller ${String(caller)}).`,
  },
  SafeERC20FailedOperation: {
    code: 'TOKEN_OPERATION_FAILED',
    message: ([token]) => `A token transfer failed (token ${String(token)}).`,
  },
  ReentrancyGuardReentrantCall: {
    code: 'REENTRANT_CALL',
    message: () => 'Reentrant call refused.',
  },
  ERC20InsufficientBalance: {
    code: 'INSUFFICIENT_USDC',
    message: ([sender, balance, needed]) =>
      `Token balance too low: ${String(sender)} has ${fmt6Unknown(balance)}, needs ${fmt6Unknown(needed)}.`,
  },
  ERC20InsufficientAllowance: {
    code: 'INSUFFICIENT_ALLOWANCE',
    message: ([spender, allowance, needed]) =>
      `Token allowance too low: ${String(spender)} may spend ${fmt6Unknown(allowance)}, needs ${fmt6Unknown(needed)}.`,
  },
  ERC2612ExpiredSignature: {
    code: 'PERMIT_EXPIRED',
    message: () => 'The permit signature has expired.',
  },
  ERC2612InvalidSigner: {
    code: 'INVALID_SIGNATURE',
    message: () => 'The permit was not signed by the owner.',
  },
}

/**
 * Describes a decoded contract error: its stable code and a sentence.
 *
 * @param errorName - The Solidity error name.
 * @param args - The decoded arguments.
 * @returns `{ code, message }`; unknown names map to `CONTRACT_REVERT`.
 * @example
 * describeContractError('InvalidAmount', []).code // 'BELOW_MIN_DEPOSIT'
 */
export function describeContractError(
  errorName: string,
  args: readonly unknown[] = [],
): { code: VaultErrorCode; message: string } {
  const info = contractErrors[errorName]
  if (info) return { code: info.code, message: info.message(args) }
  const shown = args.length ? `(${args.map(fmt).join(', ')})` : '()'
  return { code: 'CONTRACT_REVERT', message: `The contract reverted with ${errorName}${shown}.` }
}

// ---------------------------------------------------------------------------------------------
// Normaliser

/** Context that makes normalised errors more precise. */
export type ToVaultErrorContext = {
  /** Maps a contract address to its role (`router`, `usdc`, …) in the details. */
  addresses?: VaultAddresses | undefined
  /** What the SDK was doing, prefixed to the message, such as `Deposit simulation`. */
  action?: string | undefined
}

/**
 * Turns anything thrown (viem errors, fetch failures, our own errors) into a `VaultError`.
 *
 * Contract reverts are decoded against every vault ABI; HTTP 429/5xx, timeouts, network failures and
 * malformed answers become retryable `VaultRpcError`s; secrets are stripped from every message.
 *
 * @param error - What was thrown.
 * @param context - Addresses (to name the contract) and the action being performed.
 * @returns A `VaultError` (the same object when it already is one).
 * @example
 * try { await publicClient.readContract(...) } catch (e) { throw toVaultError(e) }
 */
export function toVaultError(error: unknown, context: ToVaultErrorContext = {}): VaultError {
  if (error instanceof VaultError) return error
  const prefix = context.action ? `${context.action} failed: ` : ''

  if (error instanceof BaseError) {
    const contract = contractRoleOf(error, context.addresses)
    const functionName =
      error instanceof ContractFunctionExecutionError
        ? error.functionName
        : (
            error.walk(
              (e) => e instanceof ContractFunctionExecutionError,
            ) as ContractFunctionExecutionError | null
          )?.functionName

    const reverted = error.walk(
      (e) => e instanceof ContractFunctionRevertedError,
    ) as ContractFunctionRevertedError | null
    if (reverted) return fromRevert(reverted, { contract, functionName, prefix, cause: error })

    const raw = error.walk((e) => e instanceof RawContractError) as RawContractError | null
    if (raw) {
      const data = typeof raw.data === 'object' ? raw.data?.data : raw.data
      return fromRevertData(data, { contract, functionName, prefix, cause: error })
    }

    // A node's "execution reverted" (JSON-RPC code 3) carrying revert data, e.g. from a plain eth_call.
    const withData = error.walk((e) => revertDataOf(e) !== undefined)
    if (withData) {
      return fromRevertData(revertDataOf(withData), {
        contract,
        functionName,
        prefix,
        cause: error,
      })
    }

    if (
      error.walk(
        (e) => e instanceof ContractFunctionZeroDataError || e instanceof AbiDecodingZeroDataError,
      )
    ) {
      return new VaultContractError(
        'CONTRACT_NO_DATA',
        `${prefix}The call${functionName ? ` to ${functionName}()` : ''} returned no data: no contract at that address, or it lacks the function.`,
        { contract, details: functionName ? { functionName } : {}, cause: error },
      )
    }

    const receiptTimeout = error.walk(
      (e) => e instanceof Error && e.name === 'WaitForTransactionReceiptTimeoutError',
    )
    if (receiptTimeout) {
      return new VaultTransactionError(
        'RECEIPT_TIMEOUT',
        `${prefix}No receipt arrived in time; the transaction may still be mined. Check it before sending again.`,
        {},
        error,
      )
    }
    if (error.walk((e) => e instanceof UserRejectedRequestError)) {
      return new VaultTransactionError(
        'USER_REJECTED',
        `${prefix}The wallet refused the request.`,
        {},
        error,
      )
    }
    if (error.walk((e) => e instanceof InsufficientFundsError)) {
      return new VaultTransactionError(
        'INSUFFICIENT_FUNDS_FOR_GAS',
        `${prefix}The sending account does not have enough ETH to pay for gas.`,
        {},
        error,
      )
    }
    if (error.walk((e) => e instanceof ChainMismatchError)) {
      return new VaultConfigError(
        'CHAIN_MISMATCH',
        `${prefix}The wallet is connected to a different chain than the vault client.`,
        {},
        error,
      )
    }
    if (error.walk((e) => e instanceof Error && e.name === 'AccountNotFoundError')) {
      return new VaultConfigError(
        'ACCOUNT_REQUIRED',
        `${prefix}No account: give the wallet client an account, or pass \`account\`.`,
        {},
        error,
      )
    }

    const timeout = error.walk((e) => e instanceof TimeoutError) as TimeoutError | null
    if (timeout) {
      return new VaultRpcError(
        'RPC_TIMEOUT',
        `${prefix}The RPC request timed out (${redactUrl(timeout.url ?? '')}).`,
        {
          retryable: true,
          cause: error,
        },
      )
    }

    const http = error.walk((e) => e instanceof HttpRequestError || e instanceof RpcRequestError) as
      | HttpRequestError
      | RpcRequestError
      | null
    const rpc = error.walk(
      (e) => e instanceof RpcError && typeof e.code === 'number',
    ) as RpcError | null
    const rpcCode = rpc?.code ?? (http instanceof RpcRequestError ? http.code : undefined)
    if (http || rpc) return fromRpc(http, rpcCode, prefix, error)

    return new VaultError(
      `${prefix}${redactSecrets(error.shortMessage || error.message, { hideHex32: false })}`,
      {
        code: 'UNKNOWN',
        category: 'internal',
        cause: error,
      },
    )
  }

  if (error instanceof Error) {
    const aborted = error.name === 'AbortError' || error.name === 'TimeoutError'
    if (aborted) {
      return new VaultRpcError('RPC_TIMEOUT', `${prefix}The request was aborted or timed out.`, {
        retryable: true,
        cause: error,
      })
    }
    return new VaultError(`${prefix}${redactSecrets(error.message, { hideHex32: true })}`, {
      code: 'UNKNOWN',
      category: 'internal',
      cause: error,
    })
  }
  return new VaultError(
    `${prefix}Unknown error: ${redactSecrets(String(error), { hideHex32: true })}`,
    {
      code: 'UNKNOWN',
      category: 'internal',
      cause: error,
    },
  )
}

/**
 * Decodes raw revert data (`0x` + selector + arguments) against every vault ABI.
 *
 * @param data - The revert data.
 * @param abi - Extra ABI to try first.
 * @returns `{ errorName, args }`, or `undefined` when the selector is unknown.
 * @example
 * decodeVaultError('0x2c5211c6') // { errorName: 'InvalidAmount', args: [] }
 */
export function decodeVaultError(
  data: Hex,
  abi?: Abi,
): { errorName: string; args: readonly unknown[] } | undefined {
  for (const candidate of abi ? [abi, vaultErrorsAbi] : [vaultErrorsAbi]) {
    try {
      const decoded = decodeErrorResult({ abi: candidate as Abi, data })
      return { errorName: decoded.errorName, args: (decoded.args ?? []) as readonly unknown[] }
    } catch {
      // try the next ABI
    }
  }
  return undefined
}

type RevertContext = {
  contract: VaultContractRole | undefined
  functionName: string | undefined
  prefix: string
  cause: unknown
}

function fromRevert(
  reverted: ContractFunctionRevertedError,
  ctx: RevertContext,
): VaultContractError {
  const name = reverted.data?.errorName
  if (name && name !== 'Error' && name !== 'Panic') {
    return contractError(name, (reverted.data?.args ?? []) as readonly unknown[], ctx)
  }
  if (name === 'Panic') {
    const panicCode = reverted.data?.args?.[0]
    return new VaultContractError(
      'CONTRACT_PANIC',
      `${ctx.prefix}The contract panicked${reverted.reason ? `: ${reverted.reason}` : ''}.`,
      {
        errorName: 'Panic',
        args: panicCode === undefined ? [] : [panicCode],
        contract: ctx.contract,
        details: fnDetails(ctx),
        cause: ctx.cause,
      },
    )
  }
  if (reverted.reason !== undefined) {
    return new VaultContractError(
      'CONTRACT_REVERT',
      `${ctx.prefix}The contract reverted: ${redactSecrets(reverted.reason, { hideHex32: true })}.`,
      {
        errorName: 'Error',
        args: [reverted.reason],
        contract: ctx.contract,
        details: { ...fnDetails(ctx), reason: reverted.reason },
        cause: ctx.cause,
      },
    )
  }
  return fromRevertData(reverted.raw, ctx)
}

function fromRevertData(data: Hex | undefined, ctx: RevertContext): VaultContractError {
  if (data && isHex(data) && data.length >= 10) {
    const decoded = decodeVaultError(data)
    if (decoded) return contractError(decoded.errorName, decoded.args, ctx)
    return new VaultContractError(
      'CONTRACT_REVERT',
      `${ctx.prefix}${callee(ctx)} reverted with an unknown error (selector ${data.slice(0, 10)}).`,
      {
        contract: ctx.contract,
        details: { ...fnDetails(ctx), selector: data.slice(0, 10), data },
        cause: ctx.cause,
      },
    )
  }
  return new VaultContractError(
    'CONTRACT_REVERT',
    `${ctx.prefix}${callee(ctx)} reverted without a reason.`,
    {
      contract: ctx.contract,
      details: fnDetails(ctx),
      cause: ctx.cause,
    },
  )
}

function contractError(
  errorName: string,
  args: readonly unknown[],
  ctx: RevertContext,
): VaultContractError {
  const described = describeContractError(errorName, args)
  return new VaultContractError(described.code, `${ctx.prefix}${described.message}`, {
    errorName,
    args,
    contract: ctx.contract,
    details: fnDetails(ctx),
    cause: ctx.cause,
  })
}

function callee(ctx: RevertContext): string {
  if (ctx.functionName && ctx.contract) return `${ctx.contract}.${ctx.functionName}()`
  if (ctx.functionName) return `${ctx.functionName}()`
  return 'The contract'
}

function fnDetails(ctx: RevertContext): VaultErrorDetails {
  return ctx.functionName ? { functionName: ctx.functionName } : {}
}

/** The revert data an RPC error carries (`data` or `data.data`), when it looks like an error selector. */
function revertDataOf(value: unknown): Hex | undefined {
  if (typeof value !== 'object' || value === null || !('data' in value)) return undefined
  const data = (value as { data?: unknown }).data
  const hex = typeof data === 'object' && data !== null ? (data as { data?: unknown }).data : data
  return typeof hex === 'string' && isHex(hex) && hex.length >= 10 ? hex : undefined
}

function fromRpc(
  http: HttpRequestError | RpcRequestError | null,
  rpcCode: number | undefined,
  prefix: string,
  cause: unknown,
): VaultRpcError {
  const status = http?.status
  const where = http?.url ? ` (${redactUrl(http.url)})` : ''
  const retryAfterMs = parseRetryAfter(http?.headers?.get('Retry-After') ?? null)
  if (status === 429 || rpcCode === 429 || rpcCode === -32005 || rpcCode === -32007) {
    return new VaultRpcError(
      'RPC_RATE_LIMITED',
      `${prefix}The RPC is rate limiting requests${where}. Retry later.`,
      {
        retryable: true,
        status,
        retryAfterMs,
        cause,
      },
    )
  }
  if (status === 408 || status === 504) {
    return new VaultRpcError(
      'RPC_TIMEOUT',
      `${prefix}The RPC timed out (HTTP ${status})${where}.`,
      {
        retryable: true,
        status,
        cause,
      },
    )
  }
  if (status !== undefined && status >= 500) {
    return new VaultRpcError(
      'RPC_HTTP_ERROR',
      `${prefix}The RPC answered HTTP ${status}${where}.`,
      {
        retryable: true,
        status,
        retryAfterMs,
        cause,
      },
    )
  }
  if (status === 401 || status === 403) {
    return new VaultRpcError(
      'RPC_UNAUTHORIZED',
      `${prefix}The RPC refused the request (HTTP ${status})${where}: check the RPC URL's key.`,
      {
        retryable: false,
        status,
        cause,
      },
    )
  }
  if (status !== undefined && status >= 400) {
    return new VaultRpcError(
      'RPC_HTTP_ERROR',
      `${prefix}The RPC answered HTTP ${status}${where}.`,
      {
        retryable: false,
        status,
        cause,
      },
    )
  }
  if (http instanceof HttpRequestError && status === undefined) {
    const inner = http.cause instanceof Error ? http.cause : undefined
    if (inner instanceof SyntaxError) {
      return new VaultRpcError(
        'RPC_BAD_RESPONSE',
        `${prefix}The RPC sent a malformed answer${where}.`,
        {
          retryable: true,
          cause,
        },
      )
    }
    return new VaultRpcError('RPC_UNREACHABLE', `${prefix}The RPC could not be reached${where}.`, {
      retryable: true,
      cause,
    })
  }
  const retryable = rpcCode === -32603 || rpcCode === -32000 || rpcCode === -1
  return new VaultRpcError(
    'RPC_ERROR',
    `${prefix}The RPC returned an error${rpcCode === undefined ? '' : ` (code ${rpcCode})`}${where}.`,
    { retryable, status, details: rpcCode === undefined ? {} : { rpcCode }, cause },
  )
}

/**
 * Parses a `Retry-After` header (seconds or an HTTP date) into milliseconds.
 *
 * @param value - The header value.
 * @param now - The current time in ms (for HTTP dates).
 * @returns Milliseconds to wait (≥ 0), or `undefined` when absent or unparsable.
 * @example
 * parseRetryAfter('2') // 2000
 */
export function parseRetryAfter(
  value: string | null | undefined,
  now = Date.now(),
): number | undefined {
  if (!value) return undefined
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000
  const date = Date.parse(trimmed)
  if (Number.isNaN(date)) return undefined
  return Math.max(0, date - now)
}

function contractRoleOf(
  error: BaseError,
  addresses: VaultAddresses | undefined,
): VaultContractRole | undefined {
  if (!addresses) return undefined
  const exec = (
    error instanceof ContractFunctionExecutionError
      ? error
      : error.walk((e) => e instanceof ContractFunctionExecutionError)
  ) as ContractFunctionExecutionError | null
  const address = exec?.contractAddress?.toLowerCase()
  if (!address) return undefined
  for (const [role, value] of Object.entries(addresses) as [keyof VaultAddresses, Address][]) {
    if (value.toLowerCase() === address) return role
  }
  if (address === '0xca11bde05977b3631167028862be2a173976ca11') return 'multicall3'
  return undefined
}

function summarizeCause(cause: unknown): Error | undefined {
  if (cause === undefined) return undefined
  if (cause instanceof VaultError) return cause
  const name = cause instanceof Error ? cause.name : 'Error'
  const text =
    cause instanceof BaseError
      ? cause.shortMessage || cause.message
      : cause instanceof Error
        ? cause.message
        : String(cause)
  const summary = new Error(redactSecrets(text, { hideHex32: !(cause instanceof BaseError) }))
  summary.name = name
  return summary
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

function fmt6(value: bigint): string {
  const negative = value < 0n
  const abs = negative ? -value : value
  const fraction = (abs % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '')
  return `${negative ? '-' : ''}${abs / 1_000_000n}${fraction ? `.${fraction}` : ''}`
}

function fmt6Unknown(value: unknown): string {
  return typeof value === 'bigint' ? fmt6(value) : String(value)
}

function fmt(value: unknown): string {
  return typeof value === 'bigint' ? value.toString() : String(value)
}
