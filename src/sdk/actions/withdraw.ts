import type { Account, Address, Hash } from 'viem'
import { simulateContract } from 'viem/actions'
import { routerAbi } from '../abis/index.js'
import type { VaultContext } from '../context.js'
import { VaultValidationError } from '../errors/classes.js'
import { type DecodeContext, guard } from '../internal/read.js'
import {
  resolveAccount,
  validateSlippage,
  validateUint256,
  validateWallet,
} from '../internal/validate.js'
import type { SentTransaction } from '../internal/waitForNonceSlot.js'
import { parseWithdrawTarget, quoteWithdraw } from '../internal/withdrawPreflight.js'
import { requireRouterEvent, sendRequest, waitForSuccess } from '../internal/write.js'
import {
  assertSlotFor,
  runExclusive,
  sendExclusive,
  type WriteSlot,
} from '../internal/writeQueue.js'
import type { WaitOptions } from '../transactions.js'

/**
 * A withdrawal: by `amount` (USDC the wallet receives at least, after the fee) or by `shares`
 * (exactly that many burned). Exactly one of the two.
 */
export type WithdrawParameters = {
  /** The wallet that holds the shares and receives the USDC. Default: the sending account. */
  wallet?: Address | undefined
  /** Tolerance on the USDC out when withdrawing by shares, in bps (0–1000). Default 10. */
  slippageBps?: number | undefined
  /** Overrides the computed minimum USDC out (advanced). By amount it may not be below the amount. */
  minUsdcOut?: bigint | undefined
  /** The sending account (the wallet or its operator). Default: the wallet client's account. */
  account?: Account | Address | undefined
} & ({ amount: bigint; shares?: undefined } | { shares: bigint; amount?: undefined })

/** A confirmed withdrawal, read from the router's `Withdrawn` log. */
export type WithdrawResult = {
  txHash: Hash
  wallet: Address
  /** Shares burned. */
  sharesBurned: bigint
  /** USDC the wallet received, after the fee. */
  usdcReturned: bigint
  /** Yield realised by this withdrawal (before the fee). */
  yieldEarned: bigint
  /** The fee paid to the treasury. */
  feePaid: bigint
  blockNumber: bigint
}

/**
 * Withdraws from the vault, by USDC amount (the fewest shares that deliver at least the amount, from
 * `previewWithdrawNet` and the share math; `minUsdcOut = amount`) or by shares (`previewRedeem` minus
 * slippage). Checks registration and share balance, simulates and estimates gas, then sends; a
 * withdrawal that would fail is refused before anything is sent.
 *
 * Runs in the sending account's write queue: after every earlier write from that account has its
 * receipt, and holding the account until this transaction has its own. A nonce another process took
 * first is `NONCE_CONFLICT` (retryable).
 *
 * @param ctx - The vault client, with a wallet client.
 * @param params - `amount` or `shares`, `wallet`, `slippageBps`, `minUsdcOut`, `account`.
 * @returns The transaction hash.
 * @throws {VaultPreconditionError} `WALLET_NOT_REGISTERED`, `INSUFFICIENT_SHARES`; {VaultContractError}
 *   `UNSERVICEABLE_AMOUNT`, `SLIPPAGE_EXCEEDED`, `INSUFFICIENT_VAULT_LIQUIDITY`, … from the simulation.
 * @example
 * await vault.withdraw({ amount: parseUsdc('5') })
 */
export function withdraw(ctx: VaultContext, params: WithdrawParameters): Promise<Hash> {
  return sendExclusive(ctx, params.account, (slot) => sendWithdrawIn(slot, ctx, params))
}

/**
 * Withdraws and waits for the receipt; returns what the router's `Withdrawn` log says.
 *
 * @param ctx - The vault client, with a wallet client.
 * @param params - As `withdraw`, plus `confirmations` and `timeout`.
 * @returns `{ txHash, usdcReturned, sharesBurned, yieldEarned, feePaid, … }`.
 * @example
 * const { usdcReturned } = await vault.withdrawAndWait({ shares: 1_000_000n })
 */
export function withdrawAndWait(
  ctx: VaultContext,
  params: WithdrawParameters & WaitOptions,
): Promise<WithdrawResult> {
  return runExclusive(ctx, params.account, async (slot) =>
    confirmWithdraw(ctx, await sendWithdrawIn(slot, ctx, params), params),
  )
}

/** A withdrawal sent and not yet confirmed: its transaction and the wallet it pays. */
export type SentWithdrawal = SentTransaction & { wallet: Address }

/**
 * Waits for a sent withdrawal's receipt and reads the router's `Withdrawn` log. Waiting again for the
 * same withdrawal after a failed wait is safe: it never sends anything.
 *
 * @param ctx - The vault client.
 * @param sent - The withdrawal, as {@link sendWithdrawIn} returned it.
 * @param wait - `confirmations`, `timeout`.
 * @returns What the log says.
 */
export async function confirmWithdraw(
  ctx: VaultContext,
  sent: SentWithdrawal,
  wait: WaitOptions = {},
): Promise<WithdrawResult> {
  const receipt = await waitForSuccess(ctx, sent, 'Withdrawal', wait)
  const log = requireRouterEvent(ctx, receipt, 'Withdrawn', sent.wallet, 'Withdrawal')
  return {
    txHash: receipt.transactionHash,
    wallet: sent.wallet,
    sharesBurned: log.args.dvUsdcBurned,
    usdcReturned: log.args.usdcReturned,
    yieldEarned: log.args.yieldEarned,
    feePaid: log.args.feePaid,
    blockNumber: receipt.blockNumber,
  }
}

/**
 * The body of `withdraw`, for a caller that holds the sending account's write slot: quotes, simulates
 * and sends; a withdrawal that would fail is refused before anything is sent.
 *
 * @param slot - The sending account's write slot.
 * @param ctx - The vault client, with a wallet client.
 * @param params - As `withdraw`.
 * @returns The sent transaction and the wallet it pays.
 */
export async function sendWithdrawIn(
  slot: WriteSlot,
  ctx: VaultContext,
  params: WithdrawParameters,
): Promise<SentWithdrawal> {
  const { walletClient, account, address } = resolveAccount(ctx, params.account)
  assertSlotFor(slot, ctx, address)
  const wallet = params.wallet === undefined ? address : validateWallet(params.wallet)
  const target = parseWithdrawTarget(params)
  const slippageBps = validateSlippage(params.slippageBps)
  const minUsdcOverride =
    params.minUsdcOut === undefined ? undefined : validateUint256(params.minUsdcOut, 'minUsdcOut')
  if (
    target.mode === 'amount' &&
    minUsdcOverride !== undefined &&
    minUsdcOverride < target.amount
  ) {
    throw new VaultValidationError(
      'minUsdcOut may not be below the requested amount when withdrawing by amount.',
      { code: 'INVALID_AMOUNT', details: { field: 'minUsdcOut' } },
    )
  }
  const quote = await quoteWithdraw(ctx, wallet, target, slippageBps, 'Withdrawal')
  const minUsdcOut = minUsdcOverride ?? quote.minUsdcOut
  const decode: DecodeContext = { ...ctx, morphoReachable: quote.morphoReachable }
  const { request } = await guard(decode, 'Withdrawal simulation', () =>
    simulateContract(ctx.publicClient, {
      account,
      address: ctx.addresses.router,
      abi: routerAbi,
      functionName: 'withdraw',
      args: [quote.shares, wallet, minUsdcOut],
    }),
  )
  return { ...(await sendRequest(decode, walletClient, account, request, 'Withdrawal')), wallet }
}
