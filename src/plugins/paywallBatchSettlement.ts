import type { FacilitatorClient, x402ResourceServer } from '@x402/core/server'
import type { Network } from '@x402/core/types'
import {
  BatchSettlementEvmScheme,
  type Channel,
  type ChannelStorage,
} from '@x402/evm/batch-settlement/server'
import { type Address, erc20Abi, type Hash, isAddressEqual, parseEventLogs } from 'viem'
import { multicall, readContract, waitForTransactionReceipt } from 'viem/actions'
import { type SettlementHookContext, type VaultClient, VaultTransactionError } from '../index.js'
import { redactSecrets, x402BatchSettlementAbi, x402BatchSettlementAddress } from '../sdk/shared.js'
import type { CheckedBatchSettlement } from './paywallOptions.js'
import type { PaywallReport } from './paywallSettlements.js'

/**
 * A channel storage that also says which instance runs the claims: `createPostgresChannelStorage`'s.
 * Without one, every instance claims on its own (a voucher claimed twice moves nothing twice on chain,
 * but costs gas).
 */
export type ChannelJobLock = {
  /**
   * Runs `job` while this instance holds the lock named `key`, waiting for it up to `waitMs` (0: not at
   * all).
   *
   * @returns `{ ran: true, value }`, or `{ ran: false }` when another instance held it throughout.
   */
  whileLocked: <value>(
    key: string,
    job: () => Promise<value>,
    waitMs: number,
  ) => Promise<{ ran: true; value: value } | { ran: false }>
}

/** What the paywall needs from its batch-settlement part. */
export type BatchSettlementRunner = {
  /** Starts the claim, settle and refund jobs (after the HTTP server is initialised). */
  start: () => void
  /**
   * Claims every voucher and settles what is owed, within `closeTimeoutMs`, then stops the jobs. A
   * settlement it makes reaches the sweeper before it resolves.
   */
  close: () => Promise<void>
}

/**
 * Prepares x402's channel manager for each asset the routes accept, over the `batch-settlement` scheme
 * registered on the resource server (`registerPaywallSchemes`: it keeps the channels in the seller's
 * storage, and answers vouchers with no transaction). The jobs start with `start()`: the claims (and
 * idle refunds) every `claimIntervalMs`, the settlement every `settleIntervalMs`. A settlement is sent
 * only when the contract owes `payTo` something, read from the chain, so an instance that did not make
 * the claims (or started after a crash) still settles them. With a storage that offers a lock
 * (`ChannelJobLock`) the jobs run on one instance at a time.
 *
 * @param parameters - The vault, `payTo`, the resource server, the facilitator client the manager sends
 *   its claims to, the accepted assets, the checked `batchSettlement`, how to report, and where a
 *   settlement to `payTo` goes (the sweeper's feed).
 * @returns `{ start, close }`.
 * @throws {Error} when the resource server has no `batch-settlement` scheme of x402's registered.
 * @example
 * const batch = paywallBatchSettlement({ vault, payTo, resourceServer, facilitatorClient, assets, options, report, settled })
 * batch.start()
 */
export function paywallBatchSettlement(parameters: {
  vault: VaultClient
  payTo: Address
  resourceServer: x402ResourceServer
  facilitatorClient: FacilitatorClient
  assets: readonly Address[]
  options: CheckedBatchSettlement
  report: PaywallReport
  settled: (context: SettlementHookContext) => void
}): BatchSettlementRunner {
  const { vault, payTo, resourceServer, facilitatorClient, options, report, settled } = parameters
  const network = vault.network as Network
  const scheme = resourceServer.getRegisteredScheme(network, 'batch-settlement')
  if (!(scheme instanceof BatchSettlementEvmScheme)) {
    throw new Error(`x402's batch-settlement scheme is not registered for ${network}`)
  }
  const storage = scheme.getStorage()
  if (options.storage === undefined) {
    console.warn(
      "x402-vault: batch-settlement channels are kept in this process's memory: vouchers not yet claimed are lost if it stops without close(), and a second instance would not see them. Give `batchSettlement.storage` (createPostgresChannelStorage) to keep them in a shared store.",
    )
  }
  const lock = jobLockOf(storage)
  const managers = parameters.assets.map((token) => ({
    token,
    manager: scheme.createChannelManager(facilitatorClient, network, token),
    lockKey: `batch-settlement:${network}:${payTo.toLowerCase()}:${token.toLowerCase()}`,
  }))
  type Manager = (typeof managers)[number]

  const failed = (what: string, token: Address, error: unknown) =>
    report(
      'facilitator',
      new VaultTransactionError(
        `batch-settlement ${what} for ${payTo} in ${token} failed: ${messageOf(error)}. It is tried again at the next interval; the vouchers stay in the channel storage.`,
        {
          code: 'BATCH_SETTLEMENT_FAILED',
          details: { job: what, payTo, token },
          retryable: true,
          cause: error,
        },
      ),
    )

  /** Settles what the contract owes `payTo` in `token`, and tells the sweeper what reached `payTo`. */
  const settleOwed = async ({ token, manager }: Manager) => {
    const [totalClaimed, totalSettled] = await readContract(vault.publicClient, {
      address: x402BatchSettlementAddress,
      abi: x402BatchSettlementAbi,
      functionName: 'receivers',
      args: [payTo, token],
    })
    if (totalClaimed <= totalSettled) return
    const { transaction } = await manager.settle()
    const received = await receivedIn(vault, transaction as Hash, token, payTo)
    if (received === 0n) return
    settled({
      requirements: {
        scheme: 'batch-settlement',
        network,
        asset: token,
        amount: received.toString(),
        payTo,
      },
      result: { success: true, transaction, network, amount: received.toString() },
      paymentPayload: { payload: { type: 'settle' } },
    } as SettlementHookContext)
  }

  /** x402's manager would claim (and refund) every stored channel, whatever its token: each takes its own. */
  const ownChannels = (channels: Channel[], { token }: Manager) =>
    channels.filter(
      (channel) =>
        isAddressEqual(channel.channelConfig.token, token) &&
        isAddressEqual(channel.channelConfig.receiver, payTo),
    )

  const jobs = {
    claim: async (entry: Manager) => {
      await entry.manager.claim({
        selectClaimChannels: (channels) =>
          claimedOnChain(vault, storage, ownChannels(channels, entry)),
      })
      if (options.refundIdleAfterMs !== false) {
        await refundIdle(entry, options.refundIdleAfterMs)
      }
    },
    settle: settleOwed,
  }
  type Job = keyof typeof jobs

  /**
   * Refunds this token's channels idle for `idleMs` that hold something unclaimed, after the claim (which
   * brought their `totalClaimed` up to the chain's, so a refund carries no claim row that moves nothing).
   * x402's `refundIdleChannels` would also take a channel whose deposit was all charged: its refund of 0
   * reverts (`ZeroRefund`), fails the job at every interval, and keeps the channels after it unrefunded.
   */
  async function refundIdle(entry: Manager, idleMs: number) {
    const now = Date.now()
    const idle = ownChannels(await storage.list(), entry).filter(
      (channel) =>
        BigInt(channel.balance) > BigInt(channel.chargedCumulativeAmount) &&
        now - channel.lastRequestTimestamp >= idleMs,
    )
    if (idle.length > 0) await entry.manager.refund(idle.map((channel) => channel.channelId))
  }

  // One job at a time in this instance; each under the storage's lock, when it has one.
  let queue: Promise<void> = Promise.resolve()
  const queued = new Set<Job>()
  const timers: ReturnType<typeof setInterval>[] = []
  let stopped = false
  const runLocked = async (job: Job, entry: Manager, waitMs: number) => {
    try {
      const outcome = lock
        ? await lock.whileLocked(entry.lockKey, () => jobs[job](entry), waitMs)
        : { ran: true as const, value: await jobs[job](entry) }
      return outcome.ran
    } catch (error) {
      failed(job, entry.token, error)
      return true
    }
  }
  const enqueue = (job: Job) => {
    if (stopped || queued.has(job)) return
    queued.add(job)
    queue = queue.then(async () => {
      queued.delete(job)
      if (stopped) return
      for (const entry of managers) await runLocked(job, entry, 0)
    })
  }

  return {
    start: () => {
      timers.push(setInterval(() => enqueue('claim'), options.claimIntervalMs))
      timers.push(setInterval(() => enqueue('settle'), options.settleIntervalMs))
      for (const timer of timers) timer.unref?.()
    },
    close: async () => {
      if (stopped) return
      stopped = true
      for (const timer of timers) clearInterval(timer)
      const deadline = Date.now() + options.closeTimeoutMs
      const work = (async () => {
        await queue
        for (const entry of managers) {
          const left = Math.max(0, deadline - Date.now())
          const ran = await runLocked('claim', entry, left).then(async (claimed) =>
            claimed ? runLocked('settle', entry, Math.max(0, deadline - Date.now())) : false,
          )
          if (!ran) {
            throw new Error(
              `another instance held the claim lock for ${entry.token} for the whole ${options.closeTimeoutMs} ms`,
            )
          }
        }
      })()
      let timer: ReturnType<typeof setTimeout> | undefined
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), Math.max(0, deadline - Date.now()))
      })
      try {
        const outcome = await Promise.race([work.then(() => 'done' as const), late])
        if (outcome === 'late')
          closeIncomplete(report, options.closeTimeoutMs, 'it ran out of time')
      } catch (error) {
        closeIncomplete(report, options.closeTimeoutMs, messageOf(error))
      } finally {
        clearTimeout(timer)
      }
    },
  }
}

function closeIncomplete(report: PaywallReport, closeTimeoutMs: number, why: string) {
  report(
    'facilitator',
    new VaultTransactionError(
      `close() could not claim and settle every batch-settlement voucher within closeTimeoutMs (${closeTimeoutMs} ms): ${why}. What is unclaimed stays in the channel storage, and the contract keeps the money in escrow until a later claim and settlement.`,
      { code: 'BATCH_CLOSE_INCOMPLETE', details: { closeTimeoutMs }, retryable: true },
    ),
  )
}

/** The USDC a settlement transaction moved from the batch-settlement escrow to `payTo`. */
async function receivedIn(
  vault: VaultClient,
  transaction: Hash,
  token: Address,
  payTo: Address,
): Promise<bigint> {
  const receipt = await waitForTransactionReceipt(vault.publicClient, { hash: transaction })
  return parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs })
    .filter(
      (log) =>
        isAddressEqual(log.address, token) &&
        isAddressEqual(log.args.from, x402BatchSettlementAddress) &&
        isAddressEqual(log.args.to, payTo),
    )
    .reduce((sum, log) => sum + log.args.value, 0n)
}

/**
 * The channels with vouchers to claim, each with what the chain shows claimed already. x402's scheme
 * writes a voucher's channel with the `totalClaimed` it read when it verified the voucher, so a claim
 * mined in between is forgotten in the storage, and x402's manager would claim that voucher again (a
 * row that moves nothing and costs gas). One multicall, only when there is something to claim; the
 * storage is corrected too.
 */
async function claimedOnChain(
  vault: VaultClient,
  storage: ChannelStorage,
  channels: Channel[],
): Promise<Channel[]> {
  const candidates = channels.filter(
    (channel) => BigInt(channel.chargedCumulativeAmount) > BigInt(channel.totalClaimed),
  )
  if (candidates.length === 0) return []
  const states = await multicall(vault.publicClient, {
    allowFailure: false,
    contracts: candidates.map((channel) => ({
      address: x402BatchSettlementAddress,
      abi: x402BatchSettlementAbi,
      functionName: 'channels' as const,
      args: [channel.channelId as Hash] as const,
    })),
  })
  return Promise.all(
    candidates.map(async (channel, index) => {
      const onChain = (states[index] as readonly [bigint, bigint])[1]
      if (onChain <= BigInt(channel.totalClaimed)) return channel
      await storage.updateChannel(channel.channelId, (current) =>
        current && BigInt(current.totalClaimed) < onChain
          ? { ...current, totalClaimed: onChain.toString() }
          : current,
      )
      return { ...channel, totalClaimed: onChain.toString() }
    }),
  )
}

function jobLockOf(storage: ChannelStorage): ChannelJobLock | undefined {
  const candidate = storage as Partial<ChannelJobLock>
  return typeof candidate.whileLocked === 'function' ? (candidate as ChannelJobLock) : undefined
}

function messageOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error)
  return redactSecrets(text.replace(/\s*\n\s*/g, ' '))
}
