import {
  type Address,
  encodeEventTopics,
  formatLog,
  getAbiItem,
  getAddress,
  type Hash,
  isAddressEqual,
  type Log,
  numberToHex,
  pad,
  parseAbi,
  parseEventLogs,
  type RpcLog,
} from 'viem'
import { getLogs } from 'viem/actions'
import { routerAbi, usdcAbi } from '../abis/index.js'
import { x402ExactPermit2ProxyAddress, x402UptoPermit2ProxyAddress } from '../chains.js'
import type { VaultContext } from '../context.js'
import { guard } from '../internal/read.js'
import { type BlockRange, DEFAULT_LOG_SPAN, readInRanges } from '../logRanges.js'
import { blocksOf, isLive, type MinedLog, position } from './minedLogs.js'
import { type Draft, ledgerAction, type Scan } from './types.js'

/**
 * x402's Permit2 proxies, `exact` and `upto`, at the same address on every chain. Each emits
 * `Settled()` or `SettledWithPermit()` when it pays a seller.
 */
const x402Permit2Proxies: readonly Address[] = [
  x402ExactPermit2ProxyAddress,
  x402UptoPermit2ProxyAddress,
]
const x402ProxyEvents = parseAbi(['event Settled()', 'event SettledWithPermit()'])

const transferEvent = getAbiItem({ abi: usdcAbi, name: 'Transfer' })
const authorizationUsedEvent = getAbiItem({ abi: usdcAbi, name: 'AuthorizationUsed' })
const routerEvents = [
  getAbiItem({ abi: routerAbi, name: 'Deposited' }),
  getAbiItem({ abi: routerAbi, name: 'Withdrawn' }),
  getAbiItem({ abi: routerAbi, name: 'OperatorSet' }),
] as const
/** Payers per `AuthorizationUsed` query: the topic filter lists each, and providers bound its length. */
const payersPerQuery = 100

/** How a scan reads: the widest range to ask for, and who hears how far it got. */
export type ScanOptions = {
  maxBlockRange?: bigint | undefined
  onProgress?: ((progress: { scannedBlocks: bigint; totalBlocks: bigint }) => void) | undefined
}

/** Every entry in the blocks, oldest first, read in ranges the RPC accepts. */
export async function scanEntries(
  ctx: VaultContext,
  wallet: Address,
  tokens: Address[],
  blocks: BlockRange,
  params: ScanOptions,
): Promise<Scan> {
  const totalBlocks = blocks.toBlock - blocks.fromBlock + 1n
  let scannedBlocks = 0n
  // viem's `getLogs({ blockRange })` splits one filter's range on any failure; a ledger range is
  // several filters read together, and only a "range too large" answer is a reason to split it.
  const limit = { maxRange: params.maxBlockRange ?? DEFAULT_LOG_SPAN }
  return guard(ctx, ledgerAction, async () => {
    const scan: Scan = { drafts: [], operators: [] }
    for await (const range of readInRanges({
      ...blocks,
      limit,
      read: (range) => readRange(ctx, wallet, tokens, range),
    })) {
      scan.drafts.push(...range.result.drafts)
      scan.operators.push(...range.result.operators)
      scannedBlocks += range.toBlock - range.fromBlock + 1n
      params.onProgress?.({ scannedBlocks, totalBlocks })
    }
    return scan
  })
}

/**
 * The entries of one range (transfers in and out, the router's events, and which payments were x402),
 * and the addresses the wallet made or unmade its operators in it.
 */
async function readRange(
  ctx: VaultContext,
  wallet: Address,
  tokens: Address[],
  range: BlockRange,
): Promise<Scan> {
  const client = ctx.publicClient
  const { router } = ctx.addresses
  const [incoming, outgoing, vaultEvents] = await Promise.all([
    getLogs(client, { address: tokens, event: transferEvent, args: { to: wallet }, ...range }),
    getLogs(client, { address: tokens, event: transferEvent, args: { from: wallet }, ...range }),
    walletRouterEvents(ctx, wallet, range),
  ])
  const ins = incoming.filter(isLive)
  const outs = outgoing.filter(isLive)
  const drafts: Draft[] = []
  const used = new Set<object>()
  const takeTransfer = (
    candidates: typeof ins,
    from: Address,
    to: Address,
    value: bigint,
    tx: Hash,
  ) => {
    const match = candidates.find(
      (log) =>
        !used.has(log) &&
        log.transactionHash === tx &&
        isAddressEqual(log.address, ctx.addresses.usdc) &&
        isAddressEqual(log.args.from as Address, from) &&
        isAddressEqual(log.args.to as Address, to) &&
        log.args.value === value,
    )
    if (match) used.add(match)
    return match
  }
  const operators: Address[] = []
  for (const log of vaultEvents.filter(isLive)) {
    const at = position(log)
    if (log.eventName === 'OperatorSet') {
      operators.push((log.args as { operator: Address }).operator)
    } else if (log.eventName === 'Deposited') {
      const { usdcAmount, dvUsdcMinted } = log.args as { usdcAmount: bigint; dvUsdcMinted: bigint }
      const transfer = takeTransfer(outs, wallet, router, usdcAmount, at.txHash)
      drafts.push({
        ...at,
        // The row describes the USDC moved: point at its Transfer (the router's event is beside it).
        logIndex: transfer?.logIndex ?? at.logIndex,
        kind: 'sweep',
        direction: 'out',
        token: ctx.addresses.usdc,
        counterparty: router,
        amount: usdcAmount,
        x402Method: null,
        shares: dvUsdcMinted,
        fee: 0n,
        yieldRealised: 0n,
      })
    } else {
      const { dvUsdcBurned, usdcReturned, yieldEarned, feePaid } = log.args as {
        dvUsdcBurned: bigint
        usdcReturned: bigint
        yieldEarned: bigint
        feePaid: bigint
      }
      const transfer = takeTransfer(ins, router, wallet, usdcReturned, at.txHash)
      drafts.push({
        ...at,
        logIndex: transfer?.logIndex ?? at.logIndex,
        kind: 'withdrawal',
        direction: 'in',
        token: ctx.addresses.usdc,
        counterparty: router,
        amount: usdcReturned,
        x402Method: null,
        shares: dvUsdcBurned,
        fee: feePaid,
        yieldRealised: yieldEarned,
      })
    }
  }
  const payments = ins.filter((log) => !used.has(log))
  const methods = await x402Methods(ctx, payments)
  for (const log of payments) {
    const method = methods.get(log) ?? null
    drafts.push({
      ...position(log),
      kind: method ? 'x402' : 'transfer-in',
      direction: 'in',
      token: getAddress(log.address),
      counterparty: log.args.from as Address,
      amount: log.args.value as bigint,
      x402Method: method,
      shares: 0n,
      fee: 0n,
      yieldRealised: 0n,
    })
  }
  for (const log of outs.filter((log) => !used.has(log))) {
    drafts.push({
      ...position(log),
      kind: 'transfer-out',
      direction: 'out',
      token: getAddress(log.address),
      counterparty: log.args.to as Address,
      amount: log.args.value as bigint,
      x402Method: null,
      shares: 0n,
      fee: 0n,
      yieldRealised: 0n,
    })
  }
  const sorted = drafts.sort((a, b) =>
    a.blockNumber === b.blockNumber
      ? a.logIndex - b.logIndex
      : a.blockNumber < b.blockNumber
        ? -1
        : 1,
  )
  return { drafts: sorted, operators }
}

/**
 * The router's `Deposited` and `Withdrawn` events of one wallet, in one `eth_getLogs`: both carry the
 * wallet as their first indexed argument, and a topic filter can ask for either event with it (viem's
 * `getLogs` takes an argument filter only for a single event).
 */
async function walletRouterEvents(ctx: VaultContext, wallet: Address, range: BlockRange) {
  const topics = routerEvents.map(
    (event) => encodeEventTopics({ abi: [event], eventName: event.name })[0] as Hash,
  )
  const logs = (await ctx.publicClient.request({
    method: 'eth_getLogs',
    params: [
      {
        address: ctx.addresses.router,
        topics: [topics, pad(wallet)],
        fromBlock: numberToHex(range.fromBlock),
        toBlock: numberToHex(range.toBlock),
      },
    ],
  })) as RpcLog[]
  return parseEventLogs({
    abi: routerEvents,
    logs: logs.map((log) => formatLog(log) as Log),
    strict: true,
  })
}

/**
 * Which payments were x402 settlements, and how they were paid: `eip3009` when the same transaction holds
 * the token's `AuthorizationUsed` event from the payer, else `permit2` when x402's Permit2 proxy emitted
 * its settlement event in it. The queries cover only the blocks of the payments, and the payers'
 * authorizations.
 */
async function x402Methods<log extends MinedLog & { args: { from?: Address | undefined } }>(
  ctx: VaultContext,
  payments: log[],
): Promise<Map<log, 'eip3009' | 'permit2'>> {
  const methods = new Map<log, 'eip3009' | 'permit2'>()
  if (payments.length === 0) return methods
  const client = ctx.publicClient
  const key = (tx: Hash | null, token: Address, payer: Address) =>
    `${tx}:${token.toLowerCase()}:${payer.toLowerCase()}`
  const payers = [...new Set(payments.map((log) => (log.args.from as Address).toLowerCase()))]
  const tokens = [...new Set(payments.map((log) => log.address.toLowerCase()))] as Address[]
  const authorizations = (
    await Promise.all(
      chunks(payers, payersPerQuery).map((group) =>
        getLogs(client, {
          address: tokens,
          event: authorizationUsedEvent,
          args: { authorizer: group as Address[] },
          ...blocksOf(payments),
        }),
      ),
    )
  ).flat()
  const authorized = new Set(
    authorizations
      .filter(isLive)
      .map((log) => key(log.transactionHash, log.address, log.args.authorizer as Address)),
  )
  const rest: log[] = []
  for (const payment of payments) {
    if (authorized.has(key(payment.transactionHash, payment.address, payment.args.from as Address)))
      methods.set(payment, 'eip3009')
    else rest.push(payment)
  }
  if (rest.length === 0) return methods
  const settlements = await getLogs(client, {
    address: [...x402Permit2Proxies],
    events: x402ProxyEvents,
    ...blocksOf(rest),
  })
  const settledTxs = new Set<Hash | null>(
    settlements.filter(isLive).map((log) => log.transactionHash),
  )
  for (const payment of rest) {
    if (settledTxs.has(payment.transactionHash)) methods.set(payment, 'permit2')
  }
  return methods
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}
