/**
 * A batch-settlement seller killed (SIGKILL) in the middle of its claim job: it holds the Postgres claim
 * lock, and its claim transaction has left the facilitator, which a proxy holds before the node until the
 * process is dead; then the proxy lets it reach the node (it is mined without the seller ever hearing of
 * it, so the channel storage never learns of the claim) or refuses it (nothing is claimed). A second
 * instance on the same Postgres then takes the lock, claims and settles: no voucher is claimed twice,
 * nothing is lost, the merchant receives exactly the charges, and its sweeper is fed the settlements.
 * On both chains: the merchant process runs on the devnet's chain.
 */
import { type Hex, isAddressEqual, parseTransaction, toFunctionSelector } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { escrowActivity } from '../../harness/batchSettlement.js'
import {
  type CountingProxy,
  type RpcCall,
  startCountingProxy,
} from '../../harness/countingProxy.js'
import { gate, type MerchantRpc, usdcBalance, watchMerchantRpc } from '../../harness/merchant.js'
import { buyerClient } from '../../harness/merchantApps.js'
import { spawnMerchant } from '../../harness/spawnMerchant.js'
import { type FacilitatorServer, startFacilitatorServer } from '../../src/devnet/facilitator.js'
import type { Devnet } from '../../src/devnet/startDevnet.js'
import { parseUsdc } from '../../src/index.js'
import { x402BatchSettlementAbi, x402BatchSettlementAddress } from '../../src/sdk/shared.js'
import { type DevnetClients, useMerchantDevnet } from '../support/devnet.js'
import { startPostgres } from '../support/postgres.js'

let devnet: Devnet
let t: DevnetClients
let proxy: CountingProxy
/** The facilitator's RPC traffic, at a proxy of its own, and the rule that holds its claim. */
let facilitatorRpc: MerchantRpc
let facilitator: FacilitatorServer
/** One Postgres for the file; each test keeps its channels in a table of its own. */
let postgres: Awaited<ReturnType<typeof startPostgres>>
beforeAll(async () => {
  postgres = await startPostgres()
})
afterAll(() => postgres?.stop())

/** The route's price: 0.001 USDC. */
const price = 1_000n

/** `claim` and `claimWithSignature`: what the facilitator sends for a claim. */
const claimSelectors = x402BatchSettlementAbi.flatMap((item) =>
  item.type === 'function' && item.name.startsWith('claim') ? [toFunctionSelector(item)] : [],
)

/** The raw transaction of a send that claims vouchers on the batch-settlement contract, if `call` is one. */
function claimSent(call: RpcCall): Hex | undefined {
  if (call.method !== 'eth_sendRawTransaction') return undefined
  const raw = call.params?.[0] as Hex
  const { to, data } = parseTransaction(raw)
  return to &&
    isAddressEqual(to, x402BatchSettlementAddress) &&
    claimSelectors.includes(data?.slice(0, 10) as Hex)
    ? raw
    : undefined
}

describe.each(['base', 'base-sepolia'] as const)('on %s', (chain) => {
  useMerchantDevnet({ chain }, async (m) => {
    ;({ devnet, t, proxy } = m)
    // A facilitator with the devnet's facilitator account, whose transactions go through a proxy.
    const chainProxy = await startCountingProxy(devnet.rpcUrl)
    facilitatorRpc = watchMerchantRpc(chainProxy, devnet)
    facilitator = await startFacilitatorServer({
      rpcUrl: chainProxy.url,
      chain: devnet.viemChain,
      account: privateKeyToAccount(devnet.accounts.facilitator.privateKey),
    })
  })

  describe('a batch-settlement seller killed during its claim', () => {
    it.each([
      ['reaches the node after the kill', 'reached'],
      ['never reaches the node', 'lost'],
    ] as const)(
      'its held claim %s: a second instance on the same Postgres claims and settles; no voucher claimed twice, the merchant gets exactly the charges, the sweeper is fed the settlements',
      async (_name, fate) => {
        const merchant = devnet.accounts.merchant.address
        const buyer = devnet.accounts.buyer.address
        const requests = 5
        const charged = price * BigInt(requests)
        const start = await usdcBalance(devnet, merchant)
        const buyerStart = await usdcBalance(devnet, buyer)
        const firstBlock = (await t.publicClient.getBlockNumber({ cacheTime: 0 })) + 1n
        // 10 USDC become idle once every charge has reached the wallet: one sweep reports every settlement.
        const reserve = start + charged - parseUsdc('10')
        const batch = {
          databaseUrl: postgres.url,
          table: `channels_${fate}`,
          claimIntervalMs: 100,
          settleIntervalMs: 150,
        }
        const startSeller = () =>
          spawnMerchant(devnet, proxy.url, reserve, { batch, facilitatorUrl: facilitator.url })

        // The first claim's send waits at the proxy until the seller is dead; then it is forwarded, or refused
        // (every time it is sent again: viem's transport retries).
        const held = gate()
        const killed = gate()
        let heldClaim: Hex | undefined
        facilitatorRpc.setRule(async (calls) => {
          const claim = calls.map(claimSent).find((raw) => raw !== undefined)
          if (!claim) return undefined
          if (heldClaim === undefined) {
            heldClaim = claim
            held.open()
            await killed.opened
          }
          return fate === 'lost' && claim === heldClaim ? 502 : undefined
        })
        const sellers = [startSeller()]
        try {
          const first = sellers[0] as (typeof sellers)[number]
          const url = `http://127.0.0.1:${(await first.next('ready')).port}/tick`
          const pay = buyerClient(devnet, { scheme: 'batch-settlement' }).pay
          // The first request deposits into the escrow and carries the first voucher; the claim job claims it.
          expect((await pay(url)).status).toBe(200)
          await held.opened
          // The claim in flight does not hold the sales: the next vouchers are taken meanwhile.
          for (let request = 1; request < requests; request++) {
            expect((await pay(url)).status).toBe(200)
          }
          const deposit = buyerStart - (await usdcBalance(devnet, buyer))
          const answeredFrom = facilitatorRpc.answered.length
          first.kill()
          expect(await first.exited).toBeNull()
          killed.open()
          if (fate === 'reached') {
            // Automine: the claim is mined when the node answers its send.
            await facilitatorRpc.until(() =>
              facilitatorRpc.answered
                .slice(answeredFrom)
                .some((call) => claimSent(call) === heldClaim),
            )
          }

          const second = startSeller()
          sellers.push(second)
          await second.next('ready')
          const swept = await second.next('deposit')
          expect(await second.close()).toBe(0)
          expect(second.events.filter((event) => event.type === 'problem')).toEqual([])

          const escrow = await escrowActivity(devnet, firstBlock)
          // The held claim took the first voucher (if it was mined); the second instance the rest, once.
          expect(escrow.claimed.map((log) => log.claimAmount)).toEqual(
            fate === 'reached' ? [price, charged - price] : [charged],
          )
          expect(escrow.claimed.at(-1)?.newTotalClaimed).toBe(charged)
          // No voucher claimed twice: every row of every claim transaction claimed something new.
          expect(escrow.claimRows).toBe(escrow.claimed.length)
          expect(escrow.settled.reduce((sum, entry) => sum + entry.amount, 0n)).toBe(charged)
          // The sweeper was fed each settlement, with what reached the wallet, and deposited once.
          expect(swept).toMatchObject({ deposited: true, idleAmount: parseUsdc('10').toString() })
          expect(
            (swept.settlements as { txHash: Hex; amount: string; scheme: string }[]).map(
              (settlement) => [settlement.txHash, settlement.amount, settlement.scheme],
            ),
          ).toEqual(
            escrow.settled.map((entry) => [
              entry.txHash,
              entry.amount.toString(),
              'batch-settlement',
            ]),
          )
          expect(await usdcBalance(devnet, merchant)).toBe(reserve)
          // Every unit accounted for: the buyer's deposit less the charges waits in the escrow for the buyer.
          const [balance, totalClaimed] = await t.publicClient.readContract({
            address: x402BatchSettlementAddress,
            abi: x402BatchSettlementAbi,
            functionName: 'channels',
            args: [escrow.claimed[0]?.channelId as Hex],
          })
          expect([balance, totalClaimed]).toEqual([deposit, charged])
        } finally {
          facilitatorRpc.setRule(undefined)
          killed.open()
          for (const seller of sellers) seller.kill()
          await Promise.all(sellers.map((seller) => seller.exited))
        }
      },
    )
  })
})
