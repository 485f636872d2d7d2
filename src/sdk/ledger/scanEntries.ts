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
  parseEventLogs,
  type RpcLog,
} from 'viem'
import { getLogs } from 'viem/actions'
import { routerAbi, usdcAbi } from '../abis/index.js'
import { x402BatchSettlementAbi, x402ExactPermit2ProxyAbi } from '../abis/x402.js'
import {
  x402BatchSettlementAddress,
  x402Erc3009DepositCollectorAddress,
  x402ExactPermit2ProxyAddress,
  x402Permit2DepositCollectorAddress,
  x402UptoPermit2ProxyAddress,
} from '../chains.js'
import type { VaultContext } from '../context.js'
import { guard } from '../internal/read.js'
import { type BlockRange, DEFAULT_LOG_SPAN, readInRanges } from '../logRanges.js'
import { blocksOf, isLive, type MinedLog, position } from './minedLogs.js'
import { type Draft, type LedgerX402Scheme, ledgerAction, type Scan } from './types.js'

/**
 * x402's Permit2 proxies, `exact` and `upto`, at the same address on every chain. Each emits
 * `Settled()` or `SettledWithPermit()` when it pays a seller; which one emitted it tells the scheme.
 */
const x402Permit2Proxies: readonly Address[] = [
  x402ExactPermit2ProxyAddress,
  x402UptoPermit2ProxyAddress,
]
/** `Settled()` and `SettledWithPermit()`: the `upto` proxy's are the same events. */
const x402ProxyEvents = x402ExactPermit2ProxyAbi.filter((item) => item.type === 'event')

/**
 * Where the wallet's money goes into an x402 payment channel: the batch-settlement contract itself (a
 * Permit2 deposit pays it directly) or x402's EIP-3009 deposit collector, which forwards it there.
 */
const channelDepositPayees: readonly Address[] = [
  x402BatchSettlementAddress,
  x402Erc3009DepositCollectorAddress,
  x402Permit2DepositCollectorAddress,
]
/** The batch-settlement contract's events of money moving to or from a wallet. */
const channelMoneyEvents = x402BatchSettlementAbi.filter(
  (item) =>
    item.type === 'event' &&
    ['Deposited', 'Settled', 'Refunded', 'WithdrawFinalized'].includes(item.name),
)

/** How an x402 payment to the wallet was paid, as its transaction shows. */
type X402Payment = {
  method: 'eip3009' | 'permit2' | null
  scheme: LedgerX402Scheme
}

/** What tells one entry from another; the fields left out are a plain transfer's (null, 0). */
type DraftFields = Pick<Draft, 'kind' | 'direction' | 'token' | 'counterparty' | 'amount'> &
  Partial<
    Pick<
      Draft,
      'x402Method' | 'x402Scheme' | 'authorizedAmount' | 'shares' | 'fee' | 'yieldRealised'
    >
  >

/**
 * The draft of an entry at `at`. Every kind of entry is built here, so that each has every field;
 * `vouchers` is counted later, over the whole scan (`batchVouchers.ts`).
 */
function draftOf(at: ReturnType<typeof position>, fields: DraftFields): Draft {
  return {
    ...at,
    kind: fields.kind,
    direction: fields.direction,
    token: fields.token,
    counterparty: fields.counterparty,
    amount: fields.amount,
    x402Method: fields.x402Method ?? null,
    x402Scheme: fields.x402Scheme ?? null,
    authorizedAmount: fields.authorizedAmount ?? null,
    vouchers: null,
    shares: fields.shares ?? 0n,
    fee: fields.fee ?? 0n,
    yieldRealised: fields.yieldRealised ?? 0n,
  }
}

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
  /**
   * A sweep's or a withdrawal's entry: the USDC the router moved, pointed at its Transfer (the router's
   * event is beside it) when one matches.
   */
  const vaultDraft = (
    log: (typeof vaultEvents)[number],
    kind: 'sweep' | 'withdrawal',
    amount: bigint,
    fields: Pick<DraftFields, 'shares' | 'fee' | 'yieldRealised'>,
  ) => {
    const at = position(log)
    const transfer =
      kind === 'sweep'
        ? takeTransfer(outs, wallet, router, amount, at.txHash)
        : takeTransfer(ins, router, wallet, amount, at.txHash)
    return draftOf(
      { ...at, logIndex: transfer?.logIndex ?? at.logIndex },
      {
        kind,
        direction: kind === 'sweep' ? 'out' : 'in',
        token: ctx.addresses.usdc,
        counterparty: router,
        amount,
        ...fields,
      },
    )
  }
  const operators: Address[] = []
  for (const log of vaultEvents.filter(isLive)) {
    if (log.eventName === 'OperatorSet') {
      operators.push((log.args as { operator: Address }).operator)
    } else if (log.eventName === 'Deposited') {
      const { usdcAmount, dvUsdcMinted } = log.args as { usdcAmount: bigint; dvUsdcMinted: bigint }
      drafts.push(vaultDraft(log, 'sweep', usdcAmount, { shares: dvUsdcMinted }))
    } else {
      const { dvUsdcBurned, usdcReturned, yieldEarned, feePaid } = log.args as {
        dvUsdcBurned: bigint
        usdcReturned: bigint
        yieldEarned: bigint
        feePaid: bigint
      }
      drafts.push(
        vaultDraft(log, 'withdrawal', usdcReturned, {
          shares: dvUsdcBurned,
          fee: feePaid,
          yieldRealised: yieldEarned,
        }),
      )
    }
  }
  const payments = ins.filter((log) => !used.has(log))
  const unmatchedOuts = outs.filter((log) => !used.has(log))
  const [x402Payments, channelMoves] = await Promise.all([
    x402PaymentsOf(ctx, payments),
    channelMovesOf(ctx, wallet, payments, unmatchedOuts),
  ])
  for (const log of payments) {
    const channel = channelMoves.get(log)
    const payment: X402Payment | undefined =
      channel === 'batch-settle'
        ? { method: null, scheme: 'batch-settlement' }
        : x402Payments.get(log)
    const amount = log.args.value as bigint
    drafts.push(
      draftOf(position(log), {
        kind: payment ? 'x402' : channel === 'channel-refund' ? channel : 'transfer-in',
        direction: 'in',
        token: getAddress(log.address),
        counterparty: log.args.from as Address,
        amount,
        ...(payment && {
          x402Method: payment.method,
          x402Scheme: payment.scheme,
          // An `exact` payment moves what was authorized; an `upto` one's maximum is in its calldata.
          authorizedAmount: payment.scheme === 'exact' ? amount : null,
        }),
      }),
    )
  }
  for (const log of unmatchedOuts) {
    drafts.push(
      draftOf(position(log), {
        kind: channelMoves.get(log) === 'channel-deposit' ? 'channel-deposit' : 'transfer-out',
        direction: 'out',
        token: getAddress(log.address),
        counterparty: log.args.to as Address,
        amount: log.args.value as bigint,
      }),
    )
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
 * Which payments were x402 settlements, and how they were paid: `eip3009` (scheme `exact`) when the same
 * transaction holds the token's `AuthorizationUsed` event from the payer, else `permit2` when one of
 * x402's Permit2 proxies emitted its settlement event in it (the `exact` or the `upto` one: the scheme).
 * The queries cover only the blocks of the payments, and the payers' authorizations.
 */
async function x402PaymentsOf<log extends MinedLog & { args: { from?: Address | undefined } }>(
  ctx: VaultContext,
  payments: log[],
): Promise<Map<log, X402Payment>> {
  const found = new Map<log, X402Payment>()
  if (payments.length === 0) return found
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
      found.set(payment, { method: 'eip3009', scheme: 'exact' })
    else rest.push(payment)
  }
  if (rest.length === 0) return found
  const settlements = await getLogs(client, {
    address: [...x402Permit2Proxies],
    events: x402ProxyEvents,
    ...blocksOf(rest),
  })
  const settledBy = new Map<Hash | null, Address>(
    settlements.filter(isLive).map((log) => [log.transactionHash, log.address]),
  )
  for (const payment of rest) {
    const proxy = settledBy.get(payment.transactionHash)
    if (!proxy) continue
    found.set(payment, {
      method: 'permit2',
      scheme: isAddressEqual(proxy, x402UptoPermit2ProxyAddress) ? 'upto' : 'exact',
    })
  }
  return found
}

/**
 * Which transfers were x402 payment-channel money, from the batch-settlement contract's events in the
 * same transactions (one query over their blocks, none when no transfer involves the contract or a
 * deposit collector): a transfer from the contract is a settle to the wallet (`Settled` with the
 * wallet as receiver, the token and the amount) or a channel's refund or timed withdrawal to it
 * (`Refunded` or `WithdrawFinalized` of the amount); a transfer from the wallet to the contract or a
 * collector is a channel deposit (`Deposited` of the amount).
 */
async function channelMovesOf<
  log extends MinedLog & {
    args: { from?: Address | undefined; to?: Address | undefined; value?: bigint | undefined }
  },
>(
  ctx: VaultContext,
  wallet: Address,
  ins: log[],
  outs: log[],
): Promise<Map<log, 'batch-settle' | 'channel-refund' | 'channel-deposit'>> {
  const moves = new Map<log, 'batch-settle' | 'channel-refund' | 'channel-deposit'>()
  const fromContract = ins.filter((log) =>
    isAddressEqual(log.args.from as Address, x402BatchSettlementAddress),
  )
  const intoChannels = outs.filter((log) =>
    channelDepositPayees.some((payee) => isAddressEqual(log.args.to as Address, payee)),
  )
  const candidates = [...fromContract, ...intoChannels]
  if (candidates.length === 0) return moves
  const events = (
    await getLogs(ctx.publicClient, {
      address: x402BatchSettlementAddress,
      events: channelMoneyEvents,
      ...blocksOf(candidates),
    })
  ).filter(isLive)
  const taken = new Set<object>()
  const take = (tx: Hash | null, matches: (event: (typeof events)[number]) => boolean) => {
    const event = events.find((e) => !taken.has(e) && e.transactionHash === tx && matches(e))
    if (event) taken.add(event)
    return event !== undefined
  }
  for (const log of fromContract) {
    const amount = log.args.value
    const settled = take(log.transactionHash, (e) => {
      if (e.eventName !== 'Settled') return false
      const args = e.args as { receiver: Address; token: Address; amount: bigint }
      return (
        isAddressEqual(args.receiver, wallet) &&
        isAddressEqual(args.token, log.address) &&
        args.amount === amount
      )
    })
    if (settled) moves.set(log, 'batch-settle')
    else if (
      take(
        log.transactionHash,
        (e) =>
          (e.eventName === 'Refunded' || e.eventName === 'WithdrawFinalized') &&
          (e.args as { amount: bigint }).amount === amount,
      )
    )
      moves.set(log, 'channel-refund')
  }
  for (const log of intoChannels) {
    if (
      take(
        log.transactionHash,
        (e) =>
          e.eventName === 'Deposited' && (e.args as { amount: bigint }).amount === log.args.value,
      )
    )
      moves.set(log, 'channel-deposit')
  }
  return moves
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}
