/**
 * A merchant process killed (SIGKILL) while its sweep's deposit is in flight: the proxy holds the
 * deposit's send until the process is dead, then either lets it reach the node (it is mined without
 * its sender) or drops it. Restarted with the same key, the merchant's next sweep deposits the idle
 * USDC that is left, and every base unit is accounted for on chain. And a merchant stopped (SIGTERM)
 * right after a sale, while the sale's sweep still waits out its debounce: the sweep runs at once and
 * deposits before the process exits.
 */
import { describe, expect, it } from 'vitest'
import type { CountingProxy } from '../../harness/countingProxy.js'
import {
  depositedIn,
  gate,
  isSend,
  type MerchantRpc,
  receiptsFrom,
  transferToMerchant,
  usdcBalance,
} from '../../harness/merchant.js'
import { buyerFetch } from '../../harness/merchantApps.js'
import { type MerchantProcess, spawnMerchant } from '../../harness/spawnMerchant.js'
import type { Devnet } from '../../src/devnet/startDevnet.js'
import { parseUsdc } from '../../src/index.js'
import { type DevnetClients, useMerchantDevnet } from '../support/devnet.js'

let devnet: Devnet
let t: DevnetClients
let proxy: CountingProxy
let rpc: MerchantRpc
useMerchantDevnet(
  { chain: 'base-sepolia', facilitator: true },
  (m) => ({ devnet, t, proxy, rpc } = m),
)

describe('a merchant killed during a sweep', () => {
  it.each([
    ['reaches the node after the kill', 'reached', [parseUsdc('11'), parseUsdc('11')]],
    ['never reaches the node', 'lost', [parseUsdc('22')]],
  ] as const)(
    'its held deposit %s: restarted, it deposits the rest; every unit accounted for',
    async (_name, fate, expectedDeposits) => {
      const merchant = devnet.accounts.merchant.address
      const start = await usdcBalance(devnet, merchant)
      const firstBlock = (await t.publicClient.getBlockNumber({ cacheTime: 0 })) + 1n
      // 10 USDC is idle from the start: the first sale (1 USDC) makes a sweep of 11 USDC.
      const reserve = start - parseUsdc('10')
      const held = gate()
      const killed = gate()
      let holding = true
      rpc.setRule(async (calls) => {
        if (!holding || !calls.some(isSend)) return undefined
        holding = false
        held.open()
        await killed.opened
        // A status is an answer instead of forwarding: the node never sees the deposit.
        return fate === 'lost' ? 502 : undefined
      })
      const pay = buyerFetch(devnet)
      const shops: MerchantProcess[] = []
      try {
        const first = spawnMerchant(devnet, proxy.url, reserve)
        shops.push(first)
        const firstPort = Number((await first.next('ready')).port)
        expect((await pay(`http://127.0.0.1:${firstPort}/paid`)).status).toBe(200)
        await held.opened
        const answeredFrom = rpc.answered.length
        first.kill()
        expect(await first.exited).toBeNull()
        expect(first.events.filter((event) => event.type === 'deposit')).toEqual([])
        killed.open()
        if (fate === 'reached') {
          // Automine: the deposit is mined when the node answers its send.
          await rpc.until(() => rpc.answered.slice(answeredFrom).some(isSend))
        }

        // USDC that arrives while the merchant is down, then a restart and a sale.
        await transferToMerchant(devnet, parseUsdc('10'))
        const second = spawnMerchant(devnet, proxy.url, reserve)
        shops.push(second)
        const secondPort = Number((await second.next('ready')).port)
        expect((await pay(`http://127.0.0.1:${secondPort}/paid`)).status).toBe(200)
        const deposit = await second.next('deposit')
        expect(deposit.idleAmount).toBe(expectedDeposits.at(-1)?.toString())
        expect(await second.close()).toBe(0)
        expect(second.events.filter((event) => event.type === 'problem')).toEqual([])

        const receipts = await receiptsFrom(devnet, merchant, firstBlock)
        expect(receipts.map((receipt) => receipt.status)).toEqual(
          expectedDeposits.map(() => 'success'),
        )
        const deposited = depositedIn(devnet, receipts, merchant)
        expect(deposited).toEqual(expectedDeposits)
        // Two sales of 1 USDC and a transfer of 10: all in the vault or the wallet, nothing twice.
        const received = parseUsdc('1') + parseUsdc('10') + parseUsdc('1')
        const end = await usdcBalance(devnet, merchant)
        expect(end).toBe(reserve)
        expect(start + received).toBe(end + deposited.reduce((sum, amount) => sum + amount, 0n))
      } finally {
        rpc.setRule(undefined)
        killed.open()
        for (const shop of shops) shop.kill()
      }
    },
  )

  it('stopped (SIGTERM) while a sale’s sweep waits out its debounce: the sweep deposits at once, before the process exits', async () => {
    const merchant = devnet.accounts.merchant.address
    const start = await usdcBalance(devnet, merchant)
    const firstBlock = (await t.publicClient.getBlockNumber({ cacheTime: 0 })) + 1n
    // 10 USDC is idle from the start: the sale (1 USDC) makes a sweep of 11 USDC.
    const reserve = start - parseUsdc('10')
    // A debounce no test waits out: the sweep is still scheduled when SIGTERM arrives.
    const debounceMs = 30_000
    const shop = spawnMerchant(devnet, proxy.url, reserve, { debounceMs })
    try {
      const port = Number((await shop.next('ready')).port)
      const from = rpc.calls.length
      expect((await buyerFetch(devnet)(`http://127.0.0.1:${port}/paid`)).status).toBe(200)
      // Nothing was sent for the sweep before the signal: it is scheduled, not started.
      expect(rpc.indexOf(isSend, from)).toBe(-1)
      shop.kill('SIGTERM')
      const stoppedAt = Date.now()
      expect(await shop.exited).toBe(0)
      expect(Date.now() - stoppedAt).toBeLessThan(debounceMs)
      expect(shop.events.map((event) => event.type)).toEqual(['ready', 'deposit', 'closed'])
      expect(shop.events[1]?.idleAmount).toBe(parseUsdc('11').toString())

      const receipts = await receiptsFrom(devnet, merchant, firstBlock)
      expect(receipts.map((receipt) => receipt.status)).toEqual(['success'])
      expect(depositedIn(devnet, receipts, merchant)).toEqual([parseUsdc('11')])
      expect(await usdcBalance(devnet, merchant)).toBe(reserve)
    } finally {
      shop.kill()
    }
  })
})
