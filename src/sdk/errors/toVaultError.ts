import {
  AbiDecodingZeroDataError,
  type Address,
  BaseError,
  ChainMismatchError,
  ContractFunctionExecutionError,
  ContractFunctionRevertedError,
  ContractFunctionZeroDataError,
  HttpRequestError,
  InsufficientFundsError,
  RawContractError,
  RpcError,
  RpcRequestError,
  TimeoutError,
  UserRejectedRequestError,
} from 'viem'
import type { VaultAddresses } from '../chains.js'
import { redactSecrets, redactUrl } from '../redact.js'
import {
  VaultConfigError,
  VaultContractError,
  type VaultContractRole,
  VaultError,
  VaultRpcError,
  VaultTransactionError,
} from './classes.js'
import { fromRevert, fromRevertData, revertDataOf } from './contract.js'
import { fromRpc } from './rpc.js'

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
