import type { Account, Address, Hash } from 'viem'
import { simulateContract } from 'viem/actions'
import { routerAbi } from '../abis/index.js'
import type { VaultContext } from '../context.js'
import { guard } from '../internal/read.js'
import { resolveAccount } from '../internal/validate.js'
import type { SentTransaction } from '../internal/waitForNonceSlot.js'
import { findRouterEvent, sendRequest, waitForSuccess } from '../internal/write.js'
import {
  assertSlotFor,
  runExclusive,
  sendExclusive,
  type WriteSlot,
} from '../internal/writeQueue.js'
import type { WaitOptions } from '../transactions.js'

export type InitializeParameters = {
  /** The account that registers itself. Default: the wallet client's account. */
  account?: Account | Address | undefined
}

/** A confirmed registration. */
export type InitializeResult = {
  txHash: Hash
  wallet: Address
  blockNumber: bigint
}

/**
 * Registers the sending account with the router (`router.initialize()`). Simulates first: an
 * already-registered wallet is refused with `WALLET_ALREADY_REGISTERED` before anything is sent.
 *
 * Runs in the sending account's write queue: after every earlier write from that account has its
 * receipt, and holding the account until this transaction has its own. A nonce another process took
 * first is `NONCE_CONFLICT` (retryable).
 *
 * @param ctx - The vault client, with a wallet client.
 * @param params - `account` (default: the wallet client's).
 * @returns The transaction hash.
 * @example
 * const hash = await vault.initialize()
 */
export function initialize(ctx: VaultContext, params: InitializeParameters = {}): Promise<Hash> {
  return sendExclusive(ctx, params.account, (slot) => sendRegistration(slot, ctx, params))
}

async function sendRegistration(
  slot: WriteSlot,
  ctx: VaultContext,
  params: InitializeParameters,
): Promise<SentTransaction> {
  const { walletClient, account, address } = resolveAccount(ctx, params.account)
  assertSlotFor(slot, ctx, address)
  const { request } = await guard(ctx, 'Registration simulation', () =>
    simulateContract(ctx.publicClient, {
      account,
      address: ctx.addresses.router,
      abi: routerAbi,
      functionName: 'initialize',
    }),
  )
  return sendRequest(ctx, walletClient, account, request, 'Registration')
}

/**
 * Registers the sending account and waits for the receipt (checking its status and the router's
 * `WalletAuthorised` log).
 *
 * @param ctx - The vault client, with a wallet client.
 * @param params - `account`, `confirmations`, `timeout`.
 * @returns `{ txHash, wallet, blockNumber }`.
 * @example
 * await vault.initializeAndWait()
 */
export function initializeAndWait(
  ctx: VaultContext,
  params: InitializeParameters & WaitOptions = {},
): Promise<InitializeResult> {
  return runExclusive(ctx, params.account, (slot) => registerAndWaitIn(slot, ctx, params))
}

/**
 * The body of {@link initializeAndWait} for a caller that already holds the account's write slot
 * (see `runExclusive`), such as `ensureInitializedAndWait`.
 *
 * @param slot - The sending account's write slot.
 * @param ctx - The vault client, with a wallet client.
 * @param params - As `initializeAndWait`.
 * @returns As `initializeAndWait`.
 */
export async function registerAndWaitIn(
  slot: WriteSlot,
  ctx: VaultContext,
  params: InitializeParameters & WaitOptions,
): Promise<InitializeResult> {
  const { address } = resolveAccount(ctx, params.account)
  const sent = await sendRegistration(slot, ctx, params)
  const receipt = await waitForSuccess(ctx, sent, 'Registration', params)
  const wallet = findRouterEvent(ctx, receipt, 'WalletAuthorised', address)?.args.wallet ?? address
  return { txHash: receipt.transactionHash, wallet, blockNumber: receipt.blockNumber }
}
