import type { VaultContext } from '../context.js'
import { type VaultError, VaultTransactionError } from '../errors/classes.js'
import { toVaultError } from '../errors/toVaultError.js'
import { sleep } from '../internal/sleep.js'
import { resolveAccount } from '../internal/validate.js'
import { runAlone, runExclusive } from '../internal/writeQueue.js'
import type { WaitOptions } from '../transactions.js'
import type { MerchantSettlement, SettlementRecord } from './settlementRecord.js'
import { type SweepProgress, type SweepResult, type SweepSettings, sweepIn } from './sweep.js'
import { sweepGasText } from './sweepGas.js'
import type { SweepObservers } from './sweepObservers.js'
import { type SweepRetryPolicy, sweepRetryDelay } from './sweepRetry.js'

/**
 * What a sweeper is made of: the sweep it makes, the settlements it covers, its observers, and how
 * its sends are guarded and its receipts awaited. `attachToResourceServer` and `x402-vault sweep
 * --watch` build one each.
 */
export type SweeperParts = {
  ctx: VaultContext
  settings: SweepSettings
  record: SettlementRecord
  observers: SweepObservers
  /**
   * Runs right before a deposit is sent, in the write slot; a throw (or rejection) stops the sweep
   * before it sends. The watch sweeper's lock refuses there once it may have lost the lock.
   */
  beforeSend?: (() => void | Promise<void>) | undefined
  /** How long, and for how many confirmations, a deposit's receipt is awaited. */
  wait?: WaitOptions | undefined
}

/**
 * A manual sweep: one attempt in the write queue, covering the settlements pending; its failure
 * rejects.
 *
 * @param parts - The sweeper's parts.
 * @returns The sweep's result; a deposit is also reported to the observers.
 */
export async function sweepOnce(parts: SweeperParts): Promise<SweepResult> {
  const taken: Taken = { settlements: [] }
  try {
    return await attemptSweep(parts, runExclusive, undefined, taken)
  } catch (error) {
    throw sweepError(parts.ctx, error)
  } finally {
    parts.record.putBack(taken.settlements)
  }
}

/**
 * A scheduled sweep: attempts until one succeeds, the retry policy says stop, or `signal` aborts (the
 * sweeper was detached). Every failure is reported to the observers; nothing rejects.
 *
 * @param parts - The sweeper's parts.
 * @param retry - When to try again.
 * @param signal - Aborts a backoff (the attempt in flight runs to its end).
 * @param queue - `'account'` (the default): each attempt waits its turn in the account's write queue.
 *   `'none'`: for a caller that runs its sweeps one at a time itself and must not wait on a promise
 *   another context created (a sweep within an edge runtime's request); writes in the queue then meet
 *   it as they meet another process's.
 * @returns The result of the attempt that succeeded (a deposit is also reported to the observers),
 *   or `undefined` when none did.
 */
export async function sweepWithRetries(
  parts: SweeperParts,
  retry: SweepRetryPolicy,
  signal: AbortSignal,
  queue: 'account' | 'none' = 'account',
): Promise<SweepResult | undefined> {
  const { ctx, record, observers } = parts
  const run = queue === 'account' ? runExclusive : runAlone
  // Kept across attempts: after a failed receipt wait, the next attempt waits for it again.
  const progress: SweepProgress = { step: 'balance-read', sent: undefined }
  const taken: Taken = { settlements: [] }
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        return await attemptSweep(parts, run, progress, taken)
      } catch (error) {
        const vaultError = sweepError(ctx, error)
        const delay = signal.aborted
          ? undefined
          : sweepRetryDelay(retry, attempt, progress.step, vaultError)
        observers.problem(progress.step, vaultError, delay !== undefined)
        if (delay === undefined) return undefined
        await sleep(delay, signal)
      }
    }
  } catch {
    // Detached during a backoff: the sweep ends here.
    return undefined
  } finally {
    record.putBack(taken.settlements)
  }
}

/** The settlements a sweep covers: back to the record unless a deposit is reported with them. */
type Taken = { settlements: MerchantSettlement[] }

/**
 * One attempt: read → decide → deposit → receipt, as one unit in the write slot `run` gives. It covers
 * the settlements pending then (those `taken` held go back first), unless `progress` says an earlier
 * attempt sent the deposit: that one covers what it took. A deposit is reported to the observers with
 * them, and `taken` is emptied.
 */
async function attemptSweep(
  parts: SweeperParts,
  run: typeof runExclusive,
  progress: SweepProgress | undefined,
  taken: Taken,
): Promise<SweepResult> {
  const { ctx, settings, record, observers } = parts
  const result = await run(ctx, undefined, (slot) => {
    if (!progress?.sent) {
      record.putBack(taken.settlements)
      taken.settlements = record.take()
    }
    return sweepIn(slot, ctx, settings, progress, parts)
  })
  if (!result.deposited) return result
  const deposit = { ...result, settlements: taken.settlements }
  taken.settlements = []
  observers.deposited(deposit)
  return deposit
}

/** A sweep's failure as a `VaultError`, naming the key to fund when it lacked gas. */
function sweepError(ctx: VaultContext, error: unknown): VaultError {
  return withGasPayer(ctx, toVaultError(error, { addresses: ctx.addresses }))
}

/**
 * A sweep refused for want of gas names the account to fund (as `x402-vault sweep --watch`'s low-gas
 * warning does): the key that sends the deposits, often an operator key rather than the wallet.
 */
function withGasPayer(ctx: VaultContext, error: VaultError): VaultError {
  if (error.code !== 'INSUFFICIENT_FUNDS_FOR_GAS' || error.details.account !== undefined)
    return error
  const account = resolveAccount(ctx, undefined).address
  return new VaultTransactionError(
    `The sweep sent no deposit: ${account}, the key that sends every sweep, has too little ETH for gas on ${ctx.chain}. Send it ETH: a sweep uses about ${sweepGasText} gas (0.00001 ETH or less at Base's usual fees), so 0.001 ETH lasts about a hundred sweeps. Until then the USDC waits in the wallet.`,
    { code: 'INSUFFICIENT_FUNDS_FOR_GAS', details: { account, chain: ctx.chain }, cause: error },
  )
}
