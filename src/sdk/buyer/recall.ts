import type { Address, Hash } from 'viem'
import { getUsdcBalance } from '../actions/getUsdcBalance.js'
import { confirmWithdraw, type SentWithdrawal, sendWithdrawIn } from '../actions/withdraw.js'
import type { VaultContext } from '../context.js'
import type { VaultError } from '../errors/classes.js'
import { toVaultError } from '../errors/toVaultError.js'
import { sleep } from '../internal/sleep.js'
import { runExclusive } from '../internal/writeQueue.js'
import { type SweepRetryPolicy, sweepRetryDelay } from '../sweep/sweepRetry.js'
import type { WaitOptions } from '../transactions.js'

/** A confirmed recall: a withdrawal by net amount that brought the wallet what its payments lacked. */
export type Recall = {
  /** The withdrawal's transaction. */
  txHash: Hash
  /**
   * USDC the wallet received, net of the fee: at least `requested`, at most 1 base unit more from
   * rounding, plus the interest the burned shares earned until the withdrawal's block.
   */
  amount: bigint
  /** What the recall asked for: the payments' and the reserve's shortfall, to the base unit. */
  requested: bigint
  /** Vault shares burned. */
  shares: bigint
  /** The fee paid on the yield the burned shares realised. */
  fee: bigint
  /** Yield the withdrawal realised, before the fee. */
  yieldEarned: bigint
  /** Why it was made: the wallet's liquid USDC did not cover the payments about to be signed. */
  reason: 'payment-shortfall'
  /** The amounts of the payments it funded (base units), in the order they arrived. */
  payments: bigint[]
  /** The wallet's liquid USDC when the recall read it, before the withdrawal. */
  walletBalance: bigint
  blockNumber: bigint
  /**
   * How long the recall took, in milliseconds: from its first balance read to the withdrawal's
   * receipt, retries included. The payments it funded waited this long for it, and for their batch
   * to gather (a few milliseconds, at most a quarter of the last recall's time).
   */
  durationMs: number
}

/** The steps of a recall, in order: where a failed recall stopped. */
export type RecallStep = 'balance-read' | 'withdraw' | 'receipt'

/** A recall that did not succeed: the step it stopped at and why. */
export type RecallFailure = { step: RecallStep; error: VaultError }

/** What a recall attempt needs: the vault, the wallet, and how it retries and waits. */
export type RecallSettings = {
  ctx: VaultContext
  wallet: Address
  retry: SweepRetryPolicy
  wait: WaitOptions
  /** Told of each failed attempt that is tried again. */
  onRetry: (failure: RecallFailure) => void
  /**
   * Counts a withdrawal against the window as it is sent (its `requested`): one whose answer was lost
   * may have been mined. Returns what takes it back out, for a send that surely failed.
   */
  countSend: (requested: bigint) => () => void
}

/**
 * Brings the wallet's liquid USDC up to `target`, asking for exactly the shortfall: in the account's
 * write queue, reads the balance, and when it is short withdraws the difference by net amount
 * (`withdraw` by `amount`: the fewest shares that pay it, so the wallet receives at least that) and
 * waits for the receipt.
 *
 * Failures that can pass are retried (the seller sweep's policy, `sweepRetryDelay`, with the withdrawal
 * as its send step). Each retry reads the balance again, unless a withdrawal was sent: then it waits for
 * that withdrawal's receipt again. So a send whose outcome was lost is never sent twice on top of
 * itself: when it was mined, the next read finds its USDC.
 *
 * @param settings - The vault, the wallet, retries and receipt wait.
 * @param target - The liquid USDC the wallet must hold (payments in flight, these payments, the reserve).
 * @param payments - The payments it funds, for the report.
 * @param startedAt - When the round asking for it began (`performance.now()`, before its first balance
 *   read): the recall's `durationMs` counts from there.
 * @returns The recall, or `undefined` when the balance already covered `target`.
 * @throws {RecallFailure} when the last attempt failed.
 */
export async function recallTo(
  settings: RecallSettings,
  target: bigint,
  payments: bigint[],
  startedAt: number,
): Promise<Recall | undefined> {
  const { ctx, wallet, retry, wait, onRetry, countSend } = settings
  let sent: { withdrawal: SentWithdrawal; requested: bigint; walletBalance: bigint } | undefined
  // An object, not a `let`: the attempt's closure moves it along.
  const at: { step: RecallStep } = { step: 'balance-read' }
  // The window's count of each send whose answer was lost, by nonce: a later send with the same nonce
  // was accepted in its place, so only one of the two can be mined.
  const lostUncounts = new Map<number, () => void>()
  const lostSends = {
    take(nonce: number, uncount?: () => void) {
      lostUncounts.get(nonce)?.()
      lostUncounts.delete(nonce)
      if (uncount) lostUncounts.set(nonce, uncount)
    },
  }
  for (let attempt = 1; ; attempt++) {
    try {
      return await runExclusive(ctx, undefined, async (slot) => {
        if (!sent) {
          at.step = 'balance-read'
          const walletBalance = await getUsdcBalance(ctx, { wallet })
          if (walletBalance >= target) return undefined
          at.step = 'withdraw'
          const requested = target - walletBalance
          const uncount = countSend(requested)
          let withdrawal: SentWithdrawal
          try {
            withdrawal = await sendWithdrawIn(slot, ctx, { amount: requested, wallet })
          } catch (error) {
            const landing = mayHaveLanded(error)
            if (!landing) uncount()
            else if (landing.nonce !== undefined) lostSends.take(landing.nonce, uncount)
            throw error
          }
          lostSends.take(withdrawal.nonce)
          sent = { withdrawal, requested, walletBalance }
        }
        at.step = 'receipt'
        const confirmed = await confirmWithdraw(ctx, sent.withdrawal, wait)
        return {
          txHash: confirmed.txHash,
          amount: confirmed.usdcReturned,
          requested: sent.requested,
          shares: confirmed.sharesBurned,
          fee: confirmed.feePaid,
          yieldEarned: confirmed.yieldEarned,
          reason: 'payment-shortfall' as const,
          payments,
          walletBalance: sent.walletBalance,
          blockNumber: confirmed.blockNumber,
          durationMs: Math.round(performance.now() - startedAt),
        }
      })
    } catch (thrown) {
      const error = toVaultError(thrown, { addresses: ctx.addresses })
      // Replaced by another sender's transaction: waiting again cannot help; read again instead.
      if (at.step === 'receipt' && error.code === 'NONCE_CONFLICT') sent = undefined
      // The withdrawal is the recall's send step, as the deposit is the sweep's.
      const { step } = at
      const delay = sweepRetryDelay(retry, attempt, step === 'withdraw' ? 'deposit' : step, error)
      const failure: RecallFailure = { step, error }
      if (delay === undefined) throw failure
      onRetry(failure)
      await sleep(delay)
    }
  }
}

/**
 * Whether a failed send may still have reached the chain, and with which nonce when known: its answer
 * was lost (`SEND_OUTCOME_UNKNOWN`, with the nonce) or the node already had it. A retry may then find
 * its USDC in the wallet and send nothing more, so it stays counted against the window.
 */
function mayHaveLanded(error: unknown): { nonce: number | undefined } | undefined {
  const { code, details } = toVaultError(error)
  if (code !== 'SEND_OUTCOME_UNKNOWN' && code !== 'TRANSACTION_ALREADY_KNOWN') return undefined
  return { nonce: typeof details.nonce === 'number' ? details.nonce : undefined }
}
