/**
 * The buyer's balance reads on their own, on a fake clock: when a read is sent ahead, and when a
 * payment may trust a read (the devnet tests run the same rules through real payments).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import {
  BalanceReads,
  readAheadFreshMs,
  readAheadRefreshMs,
} from '../../src/sdk/buyer/balanceReads.js'

/** Reads that answer `balance` at once, counted; and a write epoch the test moves. */
function setUp(balance = 1_000n) {
  const wallet = { balance, reads: 0, epoch: 0 as number | undefined }
  const reads = new BalanceReads(
    async () => {
      wallet.reads += 1
      return wallet.balance
    },
    () => wallet.epoch,
  )
  return { wallet, reads }
}

/** What a read leaves for payments once it has answered. */
async function spendableOf(reads: BalanceReads, read = reads.send()) {
  const balance = await read.balance
  return balance === undefined ? undefined : reads.spendable(read, balance)
}

describe('BalanceReads', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['performance'] })
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('a fresh read leaves its balance, less the payments released after it was sent', async () => {
    const { reads } = setUp(1_000n)
    const read = reads.send()
    vi.advanceTimersByTime(1)
    reads.released(300n, true)
    expect(await spendableOf(reads, read)).toBe(700n)
    // Sent after that release: the balance shows it. (Sent in the same instant, it would count it.)
    expect(await spendableOf(reads)).toBe(700n)
    vi.advanceTimersByTime(1)
    expect(await spendableOf(reads)).toBe(1_000n)
  })

  it('sends a read ahead only for a payer that pays in a loop, and no more than one at a time', async () => {
    const { wallet, reads } = setUp()
    // The first payment: nothing was released before it, so no loop.
    expect(reads.arrived()).toBeUndefined()
    reads.released(100n, true)
    expect(wallet.reads).toBe(0)
    // The next comes soon after: a loop; its outcome sends a read ahead.
    vi.advanceTimersByTime(50)
    expect(reads.arrived()).toBeUndefined()
    reads.released(100n, true)
    expect(wallet.reads).toBe(1)
    // Another outcome while that read is on its way sends none.
    reads.released(100n, true)
    expect(wallet.reads).toBe(1)
    const ahead = reads.arrived()
    expect(ahead).toBeDefined()
    // It counts the payment whose outcome sent it, and every later one, as unspent.
    expect(await spendableOf(reads, ahead)).toBe(1_000n - 200n)
  })

  it('a payer that does not loop gets no read ahead, and none goes out while a round runs or after close()', async () => {
    const { wallet, reads } = setUp()
    reads.arrived()
    reads.released(100n, true)
    vi.advanceTimersByTime(readAheadFreshMs + 1)
    reads.arrived()
    reads.released(100n, true)
    expect(wallet.reads).toBe(0)

    vi.advanceTimersByTime(10)
    reads.arrived()
    reads.released(100n, false)
    expect(wallet.reads).toBe(0)
    reads.close()
    reads.released(100n, true)
    expect(wallet.reads).toBe(0)
  })

  it('a read ahead serves for readAheadFreshMs and is renewed after readAheadRefreshMs', async () => {
    const { wallet, reads } = setUp()
    reads.arrived()
    reads.released(1n, true)
    vi.advanceTimersByTime(10)
    reads.arrived()
    reads.released(1n, true)
    const first = reads.arrived()
    await first?.balance
    expect(wallet.reads).toBe(1)
    // Younger than readAheadRefreshMs: an outcome does not renew it.
    vi.advanceTimersByTime(readAheadRefreshMs - 20)
    expect(reads.arrived()).toBe(first)
    reads.released(1n, true)
    expect(wallet.reads).toBe(1)
    // Older: the next outcome sends a new one, which serves once it has answered.
    vi.advanceTimersByTime(30)
    expect(reads.arrived()).toBe(first)
    reads.released(1n, true)
    expect(wallet.reads).toBe(2)
    expect(reads.arrived()).toBe(first)
    await vi.waitFor(() => expect(reads.arrived()).not.toBe(first))
    const second = reads.arrived()
    // Past readAheadFreshMs without a new outcome: none serves.
    vi.advanceTimersByTime(readAheadFreshMs + 1)
    expect(second).toBeDefined()
    expect(reads.arrived()).toBeUndefined()
  })

  it('a write of the account makes every read sent before it untrusted; one sent during a write is never trusted', async () => {
    const { wallet, reads } = setUp()
    const before = reads.send()
    wallet.epoch = undefined
    const during = reads.send()
    expect(await spendableOf(reads, during)).toBeUndefined()
    wallet.epoch = 1
    expect(await spendableOf(reads, before)).toBeUndefined()
    expect(await spendableOf(reads, during)).toBeUndefined()
    expect(await spendableOf(reads)).toBe(1_000n)
  })

  it('a read that failed has no balance; a read whose releases are no longer listed is untrusted', async () => {
    const reads = new BalanceReads(
      async () => {
        throw new Error('RPC down')
      },
      () => 0,
    )
    expect(await reads.send().balance).toBeUndefined()

    const { reads: listed } = setUp(1_000n)
    const slow = listed.send()
    vi.advanceTimersByTime(2 * readAheadFreshMs + 1)
    listed.released(1n, true)
    expect(await spendableOf(listed, slow)).toBeUndefined()
  })
})
