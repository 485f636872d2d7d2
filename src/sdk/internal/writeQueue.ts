import type { Account, Address, Hash } from 'viem'
import type { VaultContext } from '../context.js'
import { resolveAccount } from './validate.js'
import { type SentTransaction, waitForNonceSlot } from './waitForNonceSlot.js'

/**
 * The per-account write queue.
 *
 * Writes from one account run one after another, process-wide: the queue is keyed by chain id and
 * account address, so two vault clients for the same key in one process share it. A write holds the
 * account from its first read until its transaction's receipt, also when the caller only asked for the
 * hash (`deposit` rather than `depositAndWait`). So the next write reads, simulates and takes its nonce
 * from the state its predecessor left: concurrent writes never collide on the transaction nonce, never
 * reuse an EIP-2612 permit nonce, and never send a transaction simulated against stale state.
 *
 * Design: explicit slots, not reentrancy. `runExclusive` is not reentrant: a body that called it again
 * for the same account would wait for itself. So each public write is a thin wrapper,
 * `runExclusive(ctx, account, (slot) => body(slot, …))`, and the bodies (`depositAndWaitIn`,
 * `approveUsdcAndWaitIn`, …) take the slot they run in as their first parameter and call only other
 * bodies. A caller that must run several steps as one unit takes the slot once and calls bodies inside
 * it: the seller sweeper's "read the balance → decide → deposit and wait", and a manual sweep that must
 * wait for a running one. Needing a slot to call a body makes "this runs inside the queue" part of the
 * types, and a body checks that its slot is for the account it writes from.
 */
export type WriteSlot = {
  /** `<chainId>:<account address, lower case>`. */
  readonly key: string
  /** Keeps the account held after the body returns, until `settled` settles (a receipt). */
  holdUntil(settled: Promise<unknown>): void
}

// Shared through the global symbol registry so that two copies of this package in one process (two
// versions, or a bundled one) still queue one account's writes in one line.
const registryKey = Symbol.for('x402-vault.writeQueue')
const releasesKey = Symbol.for('x402-vault.writeReleases')
const globals = globalThis as {
  [registryKey]?: Map<string, Promise<void>>
  [releasesKey]?: Map<string, number>
}
/** The last write queued per key; it resolves (never rejects) when that write releases the account. */
globals[registryKey] ??= new Map()
const tails: Map<string, Promise<void>> = globals[registryKey]
/** How many writes released each key (see {@link writeEpoch}). */
globals[releasesKey] ??= new Map()
const releases: Map<string, number> = globals[releasesKey]

/**
 * Where an account's writes stand, for a balance read that must know whether a write of this process
 * moved the balance after it was sent: `undefined` while a write is queued or running (the read may
 * or may not see it), else a number that changes each time a write releases the account. A read sent
 * at epoch `e` shows every write of this process while the epoch is still `e`.
 *
 * @param ctx - The vault client.
 * @param address - The account.
 * @returns The epoch, or `undefined` while a write is in progress.
 * @example
 * const epoch = writeEpoch(ctx, wallet)
 * const balance = await getUsdcBalance(ctx, { wallet })
 * const trusted = epoch !== undefined && writeEpoch(ctx, wallet) === epoch
 */
export function writeEpoch(ctx: VaultContext, address: Address): number | undefined {
  const key = slotKey(ctx, address)
  return tails.has(key) ? undefined : (releases.get(key) ?? 0)
}

/**
 * Runs `body` when every earlier write from the same account (same chain id) has released it.
 *
 * @param ctx - The vault client.
 * @param account - The sending account (default: the wallet client's).
 * @param body - The write; it receives the slot it holds.
 * @returns What `body` returns. The account stays held until `body` settles and every promise passed
 *   to `slot.holdUntil` settles.
 */
export async function runExclusive<T>(
  ctx: VaultContext,
  account: Account | Address | undefined,
  body: (slot: WriteSlot) => Promise<T>,
): Promise<T> {
  const key = slotKey(ctx, resolveAccount(ctx, account).address)
  const holds: Promise<unknown>[] = []
  let release = () => {}
  const released = new Promise<void>((resolve) => {
    release = resolve
  })
  const previous = tails.get(key) ?? Promise.resolve()
  const tail = previous.then(() => released)
  tails.set(key, tail)
  await previous
  try {
    return await body({ key, holdUntil: (settled) => holds.push(settled) })
  } finally {
    void Promise.allSettled(holds).then(() => {
      releases.set(key, (releases.get(key) ?? 0) + 1)
      release()
      if (tails.get(key) === tail) tails.delete(key)
    })
  }
}

/**
 * Runs `body` in a slot of its own, outside the account's queue: for a caller that keeps its own
 * writes one at a time and must not wait on a promise that another context created, such as a sweep
 * within an edge runtime's request (workerd cancels a request that waits on another's promise). The
 * writes in the queue do not wait for it either: against them it is guarded as another process's
 * write with the same key is (a nonce or a permit taken first is refused before anything is mined).
 *
 * @param ctx - The vault client.
 * @param account - The sending account (default: the wallet client's).
 * @param body - The write; it receives its slot.
 * @returns What `body` returns.
 */
export function runAlone<T>(
  ctx: VaultContext,
  account: Account | Address | undefined,
  body: (slot: WriteSlot) => Promise<T>,
): Promise<T> {
  const key = slotKey(ctx, resolveAccount(ctx, account).address)
  // Nothing waits for this slot: holding it longer has no one to hold back.
  return body({ key, holdUntil: () => {} })
}

/**
 * Runs a write that returns its transaction hash at once (`deposit`, not `depositAndWait`) in the
 * account's slot, and keeps the account held until that transaction's receipt (or until waiting for
 * it fails), so the next write sees its effects. The wait ends when any transaction is mined in the
 * sent one's nonce slot, ours or another sender's (see `waitForNonceSlot`).
 *
 * @returns The hash, as soon as the transaction is sent.
 */
export function sendExclusive(
  ctx: VaultContext,
  account: Account | Address | undefined,
  send: (slot: WriteSlot) => Promise<SentTransaction>,
): Promise<Hash> {
  return runExclusive(ctx, account, async (slot) => {
    const sent = await send(slot)
    slot.holdUntil(waitForNonceSlot(ctx, sent, 'Holding the account'))
    return sent.hash
  })
}

/**
 * Checks that a write body runs in the slot of the account it sends from.
 *
 * @throws {Error} When it does not: a programming error in the SDK, not a user error.
 */
export function assertSlotFor(slot: WriteSlot, ctx: VaultContext, address: Address): void {
  if (slot.key !== slotKey(ctx, address)) {
    throw new Error(`A write from ${address} ran in the write slot of ${slot.key}.`)
  }
}

function slotKey(ctx: VaultContext, address: Address): string {
  return `${ctx.chainId}:${address.toLowerCase()}`
}
