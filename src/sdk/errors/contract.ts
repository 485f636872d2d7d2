import {
  type Abi,
  type ContractFunctionRevertedError,
  decodeErrorResult,
  type Hex,
  isHex,
} from 'viem'
import { vaultErrorsAbi } from '../abis/index.js'
import { redactSecrets } from '../redact.js'
import { VaultContractError, type VaultContractRole } from './classes.js'
import type { VaultErrorCode, VaultErrorDetails } from './codes.js'

/*
 * Contract reverts: the table of every named error the vault contracts surface, and the decoding of
 * revert data into a `VaultContractError`.
 */

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

export type RevertContext = {
  contract: VaultContractRole | undefined
  functionName: string | undefined
  prefix: string
  cause: unknown
}

export function fromRevert(
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

export function fromRevertData(data: Hex | undefined, ctx: RevertContext): VaultContractError {
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
export function revertDataOf(value: unknown): Hex | undefined {
  if (typeof value !== 'object' || value === null || !('data' in value)) return undefined
  const data = (value as { data?: unknown }).data
  const hex = typeof data === 'object' && data !== null ? (data as { data?: unknown }).data : data
  return typeof hex === 'string' && isHex(hex) && hex.length >= 10 ? hex : undefined
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
