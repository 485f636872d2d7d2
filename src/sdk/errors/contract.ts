import {
  type Abi,
  type ContractFunctionRevertedError,
  decodeErrorResult,
  type Hex,
  isHex,
} from 'viem'
import { vaultErrorsAbi } from '../abis/index.js'
import { describeShares, formatUsdc } from '../money.js'
import { redactSecrets } from '../redact.js'
import { VaultContractError, type VaultContractRole, type VaultError } from './classes.js'
import type { VaultErrorCode, VaultErrorDetails } from './codes.js'

/*
 * Contract reverts: the table of every named error the vault contracts surface, and the decoding of
 * revert data into a `VaultContractError`.
 */

type ErrorInfo = {
  code: VaultErrorCode
  /** `functionName` is the function that reverted, when known (the same error means shares or USDC). */
  message: (args: readonly unknown[], functionName: string | undefined) => string
}

/** An amount argument in USDC (`12.5 USDC`), never bare base units. */
const usdc = (value: unknown) =>
  typeof value === 'bigint' ? `${formatUsdc(value)} USDC` : String(value)
/** A share amount argument, in base units as inputs take them, and as decimal shares. */
const shares = (value: unknown) =>
  typeof value === 'bigint' ? describeShares(value) : String(value)

const morphoUnreachable =
  "The Morpho venue can't be valued right now (its vault does not answer), so the router refuses. Try again later."

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
    message: ([received, minimum], functionName) => {
      if (functionName === 'withdraw') {
        return `Slippage exceeded: the withdrawal would pay ${usdc(received)}, below the minimum of ${usdc(minimum)}.`
      }
      if (functionName === 'deposit' || functionName === 'depositWithPermit') {
        return `Slippage exceeded: the deposit would mint ${shares(received)}, below the minimum of ${shares(minimum)}.`
      }
      return `Slippage exceeded: the call would give ${amount6(received)}, below the minimum of ${amount6(minimum)} (shares for a deposit, USDC for a withdrawal).`
    },
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
    message: () => morphoUnreachable,
  },
  MorphoViewGasOutOfBounds: {
    code: 'CONTRACT_REVERT',
    message: ([provided, min, max]) =>
      `Morpho view gas ${String(provided)} is outside [${String(min)}, ${String(max)}].`,
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
      `USDC balance too low: ${String(sender)} has ${usdc(balance)}, needs ${usdc(needed)}.`,
  },
  ERC20InsufficientAllowance: {
    code: 'INSUFFICIENT_ALLOWANCE',
    message: ([spender, allowance, needed]) =>
      `USDC allowance too low: ${String(spender)} may spend ${usdc(allowance)}, needs ${usdc(needed)}.`,
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
 * The reason strings the live USDCs revert with: Circle's USDC on Base and Aave's test USDC on Base
 * Sepolia both say these, where an OpenZeppelin 5 token has the `ERC20…` errors above.
 */
const reasonStrings: Record<string, { code: VaultErrorCode; message: string }> = {
  'ERC20: transfer amount exceeds balance': {
    code: 'INSUFFICIENT_USDC',
    message: "The wallet's USDC balance is below the amount to transfer.",
  },
  'ERC20: transfer amount exceeds allowance': {
    code: 'INSUFFICIENT_ALLOWANCE',
    message: "The router's USDC allowance is below the amount to transfer: approve it first.",
  },
}

/**
 * Describes a decoded contract error: its stable code and a sentence.
 *
 * Besides the named errors of the vault contracts, it knows Solidity's `Error(string)` (the live
 * USDCs' reason strings get the codes of the named errors they mean) and `Panic(uint256)`.
 *
 * @param errorName - The Solidity error name (`Error` for a reason string, `Panic` for a panic).
 * @param args - The decoded arguments.
 * @param options - `functionName`: the function that reverted, which tells shares from USDC.
 * @returns `{ code, message }`; unknown names map to `CONTRACT_REVERT`.
 * @example
 * describeContractError('InvalidAmount', []).code // 'BELOW_MIN_DEPOSIT'
 * describeContractError('Error', ['ERC20: transfer amount exceeds balance']).code // 'INSUFFICIENT_USDC'
 */
export function describeContractError(
  errorName: string,
  args: readonly unknown[] = [],
  options: { functionName?: string | undefined } = {},
): { code: VaultErrorCode; message: string } {
  if (errorName === 'Error') {
    const reason = String(args[0] ?? '')
    const known = reasonStrings[reason]
    if (known)
      return { code: known.code, message: `${known.message} (The token said "${reason}".)` }
    return {
      code: 'CONTRACT_REVERT',
      message: `The contract reverted: ${redactSecrets(reason, { hideHex32: true })}.`,
    }
  }
  if (errorName === 'Panic') {
    const code = typeof args[0] === 'bigint' ? ` (Solidity panic 0x${args[0].toString(16)})` : ''
    return { code: 'CONTRACT_PANIC', message: `The contract panicked${code}.` }
  }
  const info = contractErrors[errorName]
  if (info) return { code: info.code, message: info.message(args, options.functionName) }
  const shown = args.length ? `(${args.map(String).join(', ')})` : '()'
  return { code: 'CONTRACT_REVERT', message: `The contract reverted with ${errorName}${shown}.` }
}

/**
 * Decodes raw revert data (`0x` + selector + arguments) against every vault ABI, and Solidity's own
 * `Error(string)` and `Panic(uint256)`.
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
  for (const candidate of abi ? [abi, vaultErrorsAbi()] : [vaultErrorsAbi()]) {
    try {
      const decoded = decodeErrorResult({ abi: candidate as Abi, data })
      return { errorName: decoded.errorName, args: (decoded.args ?? []) as readonly unknown[] }
    } catch {
      // try the next ABI
    }
  }
  return undefined
}

/** Where a revert happened, to name it in the error. */
export type RevertContext = {
  contract: VaultContractRole | undefined
  functionName: string | undefined
  prefix: string
  cause: unknown
}

/** A revert viem decoded against the called contract's ABI (or could not: then the raw data is decoded). */
export function fromRevert(
  reverted: ContractFunctionRevertedError,
  ctx: RevertContext,
): VaultContractError {
  const errorName = reverted.data?.errorName
  if (errorName) return contractError(errorName, (reverted.data?.args ?? []) as unknown[], ctx)
  return fromRevertData(reverted.raw, ctx)
}

/** Raw revert data: a known error (named, reason string, panic), an unknown selector, or nothing. */
export function fromRevertData(data: Hex | undefined, ctx: RevertContext): VaultContractError {
  if (data && isHex(data) && data.length >= 10) {
    const decoded = decodeVaultError(data)
    if (decoded) return contractError(decoded.errorName, decoded.args, ctx)
    return new VaultContractError(
      `${ctx.prefix}${callee(ctx)} reverted with an unknown error (selector ${data.slice(0, 10)}).`,
      {
        code: 'CONTRACT_REVERT',
        contract: ctx.contract,
        details: { ...fnDetails(ctx), selector: data.slice(0, 10), data },
        cause: ctx.cause,
      },
    )
  }
  return new VaultContractError(`${ctx.prefix}${callee(ctx)} reverted without a reason.`, {
    code: 'CONTRACT_REVERT',
    contract: ctx.contract,
    details: fnDetails(ctx),
    cause: ctx.cause,
  })
}

/**
 * Names a revert that no vault ABI knows, raised while `withdrawCapacity()` says the Morpho vault does
 * not answer: on the live router such a revert is the Morpho vault's own error passed through. The
 * router calls the oracle's `getOptimalVault()` and values its position with the Morpho vault's
 * `convertToAssets` without a try, so that vault's revert comes out of the call unchanged. Anything
 * else is returned as it is.
 */
export function asMorphoUnreachable(error: VaultError, prefix: string): VaultError {
  if (!(error instanceof VaultContractError)) return error
  if (error.code !== 'CONTRACT_REVERT' || error.errorName !== undefined) return error
  return new VaultContractError(`${prefix}${morphoUnreachable}`, {
    code: 'MORPHO_UNREACHABLE',
    contract: error.contract,
    details: { ...error.details, morphoReachable: false },
    cause: error,
    retryable: true,
  })
}

function contractError(
  errorName: string,
  args: readonly unknown[],
  ctx: RevertContext,
): VaultContractError {
  const described = describeContractError(errorName, args, { functionName: ctx.functionName })
  const reason = errorName === 'Error' ? { reason: String(args[0] ?? '') } : {}
  return new VaultContractError(`${ctx.prefix}${described.message}`, {
    code: described.code,
    errorName,
    args,
    contract: ctx.contract,
    details: { ...fnDetails(ctx), ...reason },
    cause: ctx.cause,
    // The venue answers again on its own; the same call can then succeed.
    retryable: described.code === 'MORPHO_UNREACHABLE',
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
export function revertDataOf(value: unknown): Hex | undefined {
  if (typeof value !== 'object' || value === null || !('data' in value)) return undefined
  const data = (value as { data?: unknown }).data
  const hex = typeof data === 'object' && data !== null ? (data as { data?: unknown }).data : data
  return typeof hex === 'string' && isHex(hex) && hex.length >= 10 ? hex : undefined
}

/** A 6-decimal amount whose unit the caller does not know (shares or USDC). */
function amount6(value: unknown): string {
  return typeof value === 'bigint' ? formatUsdc(value) : String(value)
}
