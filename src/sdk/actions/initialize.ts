import type { Account, Address, Hash } from 'viem'
import { simulateContract } from 'viem/actions'
import { routerAbi } from '../abis/index.js'
import type { VaultContext } from '../context.js'
import { guard } from '../internal/read.js'
import { resolveAccount } from '../internal/validate.js'
import {
  findRouterEvent,
  sendRequest,
  type WaitOptions,
  waitForSuccess,
} from '../internal/write.js'

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
 * @param ctx - The vault client, with a wallet client.
 * @param params - `account` (default: the wallet client's).
 * @returns The transaction hash.
 * @example
 * const hash = await vault.initialize()
 */
export async function initialize(
  ctx: VaultContext,
  params: InitializeParameters = {},
): Promise<Hash> {
  const { walletClient, account } = resolveAccount(ctx, params.account)
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
export async function initializeAndWait(
  ctx: VaultContext,
  params: InitializeParameters & WaitOptions = {},
): Promise<InitializeResult> {
  const { address } = resolveAccount(ctx, params.account)
  const txHash = await initialize(ctx, params)
  const receipt = await waitForSuccess(ctx, txHash, 'Registration', params)
  const wallet = findRouterEvent(ctx, receipt, 'WalletAuthorised', address)?.args.wallet ?? address
  return { txHash, wallet, blockNumber: receipt.blockNumber }
}
