import type {
  Address,
  ContractFunctionExecutionError,
  ContractFunctionRevertedError,
  RawContractError,
} from 'viem'
import type { VaultAddresses } from '../chains.js'
import { multicall3Address } from '../chains.js'
import { redactSecrets } from '../redact.js'
import {
  VaultConfigError,
  VaultContractError,
  type VaultContractRole,
  VaultError,
  VaultRpcError,
  VaultTransactionError,
} from './classes.js'
import { asMorphoUnreachable, fromRevert, fromRevertData, revertDataOf } from './contract.js'
import { findCause, findError } from './find.js'
import { fromRpcFailure, readRpcFailure } from './rpc.js'

/** Context that makes normalised errors more precise. */
export type ToVaultErrorContext = {
  /** Maps a contract address to its role (`router`, `usdc`, …) in the details. */
  addresses?: VaultAddresses | undefined
  /** What the SDK was doing, prefixed to the message, such as `Deposit simulation`. */
  action?: string | undefined
  /**
   * `withdrawCapacity().morphoReachable`, read in the same round trip as (or before) the failed call.
   * When `false`, a revert no vault ABI knows is the Morpho vault's own error: `MORPHO_UNREACHABLE`.
   */
  morphoReachable?: boolean | undefined
  /** The contract function that was called, when the error does not say (a replayed transaction). */
  functionName?: string | undefined
}

/**
 * Turns anything thrown (viem errors, fetch failures, our own errors) into a `VaultError`.
 *
 * Contract reverts are decoded against every vault ABI (and the live USDCs' reason strings); HTTP
 * 429/5xx, timeouts, network failures and malformed answers (an HTTP error viem reads as a revert,
 * a call result that does not decode) become retryable `VaultRpcError`s, and so do a receipt, a
 * transaction or a block the RPC does not have yet (`RECEIPT_NOT_FOUND`, `TRANSACTION_NOT_FOUND`,
 * `BLOCK_NOT_FOUND`); a nonce taken by another sender is `NONCE_CONFLICT`; secrets are stripped from
 * every message. Errors are recognised by name, so it works whichever copy of viem built the clients.
 *
 * @param error - What was thrown.
 * @param context - Addresses (to name the contract), the action, what the read learned about Morpho.
 * @returns A `VaultError` (the same object when it already is one).
 * @example
 * try { await publicClient.readContract(...) } catch (e) { throw toVaultError(e) }
 */
export function toVaultError(error: unknown, context: ToVaultErrorContext = {}): VaultError {
  if (error instanceof VaultError) return error
  const prefix = context.action ? `${context.action} failed: ` : ''
  const converted = classify(error, context, prefix)
  return context.morphoReachable === false ? asMorphoUnreachable(converted, prefix) : converted
}

/** viem's errors for data too short or malformed to decode: in a call's result, a malformed answer. */
const answerDecodingErrors = [
  'AbiDecodingDataSizeTooSmallError',
  'AbiDecodingDataSizeInvalidError',
  'PositionOutOfBoundsError',
  'RecursiveReadLimitExceededError',
  'SliceOffsetOutOfBoundsError',
  'InvalidBytesBooleanError',
]

/** Node messages for a transaction whose nonce another sender has already taken. */
const nonceTakenPattern = /nonce too low|replacement transaction underpriced/i
/** Node messages for a transaction the node already has, byte for byte (geth, anvil, others). */
const alreadyKnownPattern = /already known|transaction already imported|\bknown transaction\b/i

function classify(error: unknown, context: ToVaultErrorContext, prefix: string): VaultError {
  // viem reads a JSON-RPC "internal error" (-32603) as a revert whose reason is the error's message,
  // even in an HTTP 500 answer: without revert data, a "revert" in an HTTP error is the server failing.
  const rpcFailure = readRpcFailure(error)
  if (
    rpcFailure?.status !== undefined &&
    rpcFailure.status >= 400 &&
    findError(error, 'ContractFunctionRevertedError', 'RawContractError') &&
    !carriesRevertData(error)
  ) {
    return fromRpcFailure(rpcFailure, prefix, error)
  }

  const execution = findError<ContractFunctionExecutionError>(
    error,
    'ContractFunctionExecutionError',
  )
  const revert = {
    contract: contractRoleOf(execution?.contractAddress, context.addresses),
    functionName: execution?.functionName ?? context.functionName,
    prefix,
    cause: error,
  }

  const reverted = findError<ContractFunctionRevertedError>(error, 'ContractFunctionRevertedError')
  if (reverted) return fromRevert(reverted, revert)
  const raw = findError<RawContractError>(error, 'RawContractError')
  if (raw) return fromRevertData(typeof raw.data === 'object' ? raw.data?.data : raw.data, revert)
  // A node's "execution reverted" (JSON-RPC code 3) carrying revert data, e.g. from a plain eth_call.
  const withData = findCause(error, (e) => revertDataOf(e) !== undefined)
  if (withData) return fromRevertData(revertDataOf(withData), revert)

  if (findError(error, 'ContractFunctionZeroDataError', 'AbiDecodingZeroDataError')) {
    const { functionName, contract } = revert
    return new VaultContractError(
      `${prefix}The call${functionName ? ` to ${functionName}()` : ''} returned no data: no contract at that address, or it lacks the function.`,
      {
        code: 'CONTRACT_NO_DATA',
        contract,
        details: functionName ? { functionName } : {},
        cause: error,
      },
    )
  }

  // A call whose answer does not decode as the function's return values: a broken RPC or gateway
  // (or another contract at the address, which verifyAddresses tells apart).
  if (execution && findError(error, ...answerDecodingErrors)) {
    const { functionName } = revert
    return new VaultRpcError(
      `${prefix}The RPC's answer to the call${functionName ? ` to ${functionName}()` : ''} does not decode as its return values: a malformed answer (or not the expected contract at that address).`,
      {
        code: 'RPC_BAD_RESPONSE',
        retryable: true,
        details: functionName ? { functionName } : {},
        cause: error,
      },
    )
  }

  if (findError(error, 'WaitForTransactionReceiptTimeoutError')) {
    return new VaultTransactionError(
      `${prefix}No receipt arrived in time; the transaction may still be mined. Check it before sending again.`,
      { code: 'RECEIPT_TIMEOUT', cause: error },
    )
  }
  if (findError(error, 'UserRejectedRequestError')) {
    return new VaultTransactionError(`${prefix}The wallet refused the request.`, {
      code: 'USER_REJECTED',
      cause: error,
    })
  }
  if (findError(error, 'InsufficientFundsError')) {
    return new VaultTransactionError(
      `${prefix}The sending account does not have enough ETH to pay for gas.`,
      { code: 'INSUFFICIENT_FUNDS_FOR_GAS', cause: error },
    )
  }
  // Two processes with one key that decide on the same state sign the same transaction (an EIP-2612
  // signature is deterministic): the second send finds it already in the pool. It is mined once, as
  // the first sender's; this sender should read the state again rather than count it as its own.
  if (findCause(error, (e) => alreadyKnownPattern.test(e.message))) {
    return new VaultTransactionError(
      `${prefix}The node already has this exact transaction: another process with the same key sent it first (or it was sent twice). It is mined once; read the state again before sending anything else.`,
      { code: 'TRANSACTION_ALREADY_KNOWN', cause: error, retryable: true },
    )
  }
  // The RPC worked; the transaction was refused because its nonce is taken, so nothing of this call
  // went on chain. A transaction category, not an RPC one: the fix is to send again, not to wait for
  // the RPC.
  if (findCause(error, (e) => nonceTakenPattern.test(e.message))) {
    return new VaultTransactionError(
      `${prefix}Another sender used this account's transaction nonce first (another process with the same key?). Nothing was sent for this call; it is safe to retry.`,
      { code: 'NONCE_CONFLICT', cause: error, retryable: true },
    )
  }
  if (findError(error, 'ChainMismatchError')) {
    return new VaultConfigError(
      `${prefix}The wallet is connected to a different chain than the vault client.`,
      { code: 'CHAIN_MISMATCH', cause: error },
    )
  }
  if (findError(error, 'AccountNotFoundError')) {
    return new VaultConfigError(
      `${prefix}No account: give the wallet client an account, or pass \`account\`.`,
      { code: 'ACCOUNT_REQUIRED', cause: error },
    )
  }

  const notFound = fromNotFound(error, prefix)
  if (notFound) return notFound

  if (rpcFailure) return fromRpcFailure(rpcFailure, prefix, error)

  if (error instanceof Error) {
    // viem's messages carry transaction hashes, worth keeping; other text may carry a private key.
    const shortMessage = (error as { shortMessage?: unknown }).shortMessage
    const text = typeof shortMessage === 'string' && shortMessage ? shortMessage : error.message
    return new VaultError(
      `${prefix}${redactSecrets(text, { hideHex32: typeof shortMessage !== 'string' })}`,
      { code: 'UNKNOWN', category: 'internal', cause: error },
    )
  }
  return new VaultError(
    `${prefix}Unknown error: ${redactSecrets(String(error), { hideHex32: true })}`,
    { code: 'UNKNOWN', category: 'internal', cause: error },
  )
}

/** Whether revert data (at least a selector) is anywhere in the cause chain. */
function carriesRevertData(error: unknown): boolean {
  return (
    findCause(error, (e) => {
      if (revertDataOf(e) !== undefined) return true
      const raw = e.name === 'ContractFunctionRevertedError' ? e.raw : undefined
      return typeof raw === 'string' && raw.length >= 10
    }) !== undefined
  )
}

/**
 * viem's "could not be found" for a receipt, a transaction or a block the RPC answered `null` for. A
 * node behind a load balancer often has not seen the latest block yet, so it passes: retryable. The
 * hash or block number is read from viem's message (its errors keep no field for it).
 */
function fromNotFound(error: unknown, prefix: string): VaultRpcError | undefined {
  const found = findError(
    error,
    'TransactionReceiptNotFoundError',
    'TransactionNotFoundError',
    'BlockNotFoundError',
  )
  if (!found) return undefined
  const txHash = /hash "(0x[0-9a-fA-F]{64})"/.exec(found.message)?.[1]
  const transaction = `transaction ${txHash ?? '(hash unknown)'}`
  if (found.name === 'TransactionReceiptNotFoundError') {
    return new VaultRpcError(
      `${prefix}The RPC has no receipt for ${transaction} yet: it is not mined yet, or the node that answered has not seen its block (nodes behind a load balancer lag). Wait for it again before sending anything else.`,
      {
        code: 'RECEIPT_NOT_FOUND',
        retryable: true,
        details: txHash ? { txHash } : {},
        cause: error,
      },
    )
  }
  if (found.name === 'TransactionNotFoundError') {
    return new VaultRpcError(
      `${prefix}The RPC does not know ${transaction} yet: the node that answered has not seen it (nodes behind a load balancer lag). Look for it again before sending anything else.`,
      {
        code: 'TRANSACTION_NOT_FOUND',
        retryable: true,
        details: txHash ? { txHash } : {},
        cause: error,
      },
    )
  }
  const blockNumber = /number "(\d+)"/.exec(found.message)?.[1]
  return new VaultRpcError(
    `${prefix}The RPC does not have block ${blockNumber ?? '(unknown)'} yet: the node that answered lags behind the chain (nodes behind a load balancer do). Retry.`,
    {
      code: 'BLOCK_NOT_FOUND',
      retryable: true,
      details: blockNumber ? { blockNumber: BigInt(blockNumber) } : {},
      cause: error,
    },
  )
}

function contractRoleOf(
  address: Address | undefined,
  addresses: VaultAddresses | undefined,
): VaultContractRole | undefined {
  if (!address || !addresses) return undefined
  const wanted = address.toLowerCase()
  for (const [role, value] of Object.entries(addresses) as [keyof VaultAddresses, Address][]) {
    if (value.toLowerCase() === wanted) return role
  }
  return wanted === multicall3Address.toLowerCase() ? 'multicall3' : undefined
}
