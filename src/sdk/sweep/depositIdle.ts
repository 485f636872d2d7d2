import type { VaultContext } from '../context.js'
import { runExclusive } from '../internal/writeQueue.js'
import type { WaitOptions } from '../transactions.js'
import { resolveSweepSettings, type SweepOptions, type SweepResult, sweepIn } from './sweep.js'

export type DepositIdleParameters = SweepOptions & WaitOptions

/**
 * Sweeps the merchant wallet now, with the options given: reads its USDC balance and the vault
 * (pause, minimum deposit, TVL cap and what the deposit needs) in one round trip, applies the sweep
 * rule, and when it says so deposits all of the idle USDC and waits for the receipt.
 *
 * The rule: `reserveFloor = reserve`; `idleAmount = walletBalance − reserveFloor` (0 if negative); a
 * deposit of all of `idleAmount` happens when `idleAmount ≥ max(minIdleThreshold, protocol minimum)`,
 * deposits are not paused and the TVL cap has room for it.
 *
 * How it differs from the `depositIdle()` of an attached sweeper (`attachToResourceServer`): this one
 * takes its options here and knows of no settlements (its deposit's `settlements` is `[]`) and no
 * observers; the sweeper's takes no arguments, sweeps with the sweeper's own options, reports its
 * deposit (with the settlements it covers) to `onIdleDeposit` as well, and returns the same thing.
 * Both make one attempt, reject on failure, and run in the same per-account queue.
 *
 * It runs as one unit in the sending account's write queue, so it never races another write from this
 * process (a sweep of `attachToResourceServer` included). Another process sending with the same key at
 * the same moment makes it fail with `NONCE_CONFLICT` (retryable, nothing sent) or be refused before
 * sending because the balance moved; sweeping again then deposits what is left, if anything.
 *
 * @param ctx - The vault client, with a wallet client whose account sends the deposit.
 * @param params - `minIdleThreshold`, `reserve` (default 0), as bigint base units or decimal USDC
 *   strings; `wallet` (default: the wallet client's account); `confirmations`, `timeout`.
 * @returns An `IdleDeposit` (`{ deposited: true, idleAmount, txHash, sharesMinted, … }`) or a
 *   `NoIdleDeposit` (`{ deposited: false, reason }`, the reason `below-threshold`,
 *   `below-protocol-minimum`, `reserve-above-balance`, `paused` or `tvl-cap`); both with the wallet, its balance, the reserve
 *   floor, the idle amount and the protocol minimum.
 * @throws {VaultValidationError} `INVALID_AMOUNT`, `INVALID_ADDRESS`; {VaultPreconditionError}
 *   `WALLET_NOT_REGISTERED` (see `ensureInitializedAndWait`); RPC, contract and transaction errors as
 *   `depositAndWait` throws them.
 * @example
 * const result = await vault.depositIdle({ minIdleThreshold: '10', reserve: '50' })
 * if (result.deposited) console.log(`deposited ${formatUsdc(result.idleAmount)} USDC in ${result.txHash}`)
 * else console.log(`nothing to deposit: ${result.reason}`)
 */
export async function depositIdle(
  ctx: VaultContext,
  params: DepositIdleParameters,
): Promise<SweepResult> {
  const settings = resolveSweepSettings(ctx, params)
  return runExclusive(ctx, undefined, (slot) =>
    sweepIn(slot, ctx, settings, undefined, { wait: params }),
  )
}
