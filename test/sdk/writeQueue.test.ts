import { createPublicClient, createWalletClient, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { createVaultClient } from '../../src/index.js'
import { assertSlotFor, runExclusive, writeEpoch } from '../../src/sdk/internal/writeQueue.js'

const alice = privateKeyToAccount(`0x${'a1'.repeat(32)}`)
const bob = privateKeyToAccount(`0x${'b2'.repeat(32)}`)

/** A vault client that never touches its RPC: these tests only use the queue. */
function vaultOf(account = alice, chain: 'base' | 'base-sepolia' = 'base') {
  const transport = http('http://127.0.0.1:1')
  return createVaultClient({
    publicClient: createPublicClient({ transport }),
    walletClient: createWalletClient({ account, transport }),
    chain,
  })
}

/** A promise and the function that settles it. */
function gate() {
  let open = () => {}
  const opened = new Promise<void>((resolve) => {
    open = resolve
  })
  return { opened, open }
}

const tick = () => new Promise((resolve) => setImmediate(resolve))

describe('the per-account write queue', () => {
  it('runs one account’s writes one after another, in order, even from two vault clients', async () => {
    const log: string[] = []
    const first = gate()
    const a = runExclusive(vaultOf(), undefined, async () => {
      log.push('a starts')
      await first.opened
      log.push('a ends')
    })
    // Another client for the same key, created separately: it still waits.
    const b = runExclusive(vaultOf(), undefined, async () => {
      log.push('b runs')
    })
    await tick()
    expect(log).toEqual(['a starts'])
    first.open()
    await Promise.all([a, b])
    expect(log).toEqual(['a starts', 'a ends', 'b runs'])
  })

  it('lets other accounts and other chains run at the same time', async () => {
    const held = gate()
    const log: string[] = []
    const a = runExclusive(vaultOf(alice), undefined, async () => {
      await held.opened
    })
    await Promise.all([
      runExclusive(vaultOf(bob), undefined, async () => {
        log.push('bob')
      }),
      runExclusive(vaultOf(alice, 'base-sepolia'), undefined, async () => {
        log.push('alice on another chain')
      }),
    ])
    expect(log).toEqual(['bob', 'alice on another chain'])
    held.open()
    await a
  })

  it('an explicit account joins that account’s line', async () => {
    const held = gate()
    const log: string[] = []
    const a = runExclusive(vaultOf(alice), undefined, async () => {
      await held.opened
      log.push('alice')
    })
    const b = runExclusive(vaultOf(bob), alice.address, async () => {
      log.push('alice through bob’s client')
    })
    await tick()
    expect(log).toEqual([])
    held.open()
    await Promise.all([a, b])
    expect(log).toEqual(['alice', 'alice through bob’s client'])
  })

  it('holds the account after the body returns until what it holds settles', async () => {
    const mined = gate()
    const log: string[] = []
    const hash = await runExclusive(vaultOf(), undefined, async (slot) => {
      slot.holdUntil(mined.opened)
      return '0xhash'
    })
    expect(hash).toBe('0xhash')
    const next = runExclusive(vaultOf(), undefined, async () => {
      log.push('next')
    })
    await tick()
    expect(log).toEqual([])
    mined.open()
    await next
    expect(log).toEqual(['next'])
  })

  it('releases the account when a body fails or what it holds rejects', async () => {
    await expect(
      runExclusive(vaultOf(), undefined, async () => {
        throw new Error('refused')
      }),
    ).rejects.toThrow('refused')
    await runExclusive(vaultOf(), undefined, async (slot) => {
      slot.holdUntil(Promise.reject(new Error('receipt timeout')))
    })
    expect(await runExclusive(vaultOf(), undefined, async () => 'ran')).toBe('ran')
  })

  it('a body runs only in its own account’s slot', async () => {
    const vault = vaultOf()
    await runExclusive(vault, undefined, async (slot) => {
      expect(() => assertSlotFor(slot, vault, alice.address)).not.toThrow()
      expect(() => assertSlotFor(slot, vault, bob.address)).toThrow(/write slot/)
    })
  })

  it('the write epoch: none while a write is queued or held, a new one after each release, per account', async () => {
    const vault = vaultOf()
    const before = writeEpoch(vault, alice.address)
    expect(before).toBeTypeOf('number')
    const mined = gate()
    const started = gate()
    const write = runExclusive(vault, undefined, async (slot) => {
      started.open()
      slot.holdUntil(mined.opened)
    })
    // Queued at once, before its body runs: a balance read sent now may or may not see it.
    expect(writeEpoch(vault, alice.address)).toBeUndefined()
    await started.opened
    await write
    expect(writeEpoch(vault, alice.address)).toBeUndefined()
    // Bob's writes, and Alice's on another chain, are not Alice's on this one.
    expect(writeEpoch(vault, bob.address)).toBeTypeOf('number')
    expect(writeEpoch(vaultOf(alice, 'base-sepolia'), alice.address)).toBeTypeOf('number')
    mined.open()
    await tick()
    const after = writeEpoch(vault, alice.address)
    expect(after).toBeTypeOf('number')
    expect(after).not.toBe(before)
    // A failed write moves it too: it may have sent something.
    await runExclusive(vault, undefined, async () => {
      throw new Error('refused')
    }).catch(() => {})
    await tick()
    expect(writeEpoch(vault, alice.address)).not.toBe(after)
  })
})
