import {
  type Address,
  type ContractFunctionParameters,
  encodeEventTopics,
  formatLog,
  getAbiItem,
  getAddress,
  type Hash,
  isAddressEqual,
  type Log,
  type MulticallResponse,
  numberToHex,
  pad,
  parseAbi,
  parseEventLogs,
  type RpcLog,
} from 'viem'
import { getBlock, getBlockNumber, getLogs, multicall } from 'viem/actions'
import { routerAbi, shareTokenAbi, usdcAbi } from '../abis/index.js'
import {
  type VaultChainName,
  vaultChains,
  x402ExactPermit2ProxyAddress,
  x402UptoPermit2ProxyAddress,
} from '../chains.js'
import type { VaultContext } from '../context.js'
import { VaultError, VaultRpcError, VaultValidationError } from '../errors/classes.js'
import { findError } from '../errors/find.js'
import { blockTimestampCall, guard, multicallOptions, resultValue } from '../internal/read.js'
import { validateWallet } from '../internal/validate.js'
import { type BlockRange, DEFAULT_LOG_SPAN, readInRanges } from '../logRanges.js'

/**
 * What a ledger entry is: an x402 settlement received (revenue), a self-payment (an x402 settlement whose
 * payer is the wallet itself, one of its operators or an address named in `selfPayers`: not revenue),
 * another transfer received, a sweep into the vault, a withdrawal from it, or another transfer sent.
 */
export type LedgerEntryKind =
  | 'x402'
  | 'self-payment'
  | 'transfer-in'
  | 'sweep'
  | 'withdrawal'
  | 'transfer-out'

/** One movement of USDC into or out of the wallet, read from the chain's logs. Amounts are base units. */
export type LedgerEntry = {
  kind: LedgerEntryKind
  /**
   * `in` for x402 settlements, self-payments, other transfers in and withdrawals; `out` for sweeps and
   * transfers out. A payment from the wallet to itself is two entries of one `Transfer`: the
   * self-payment in, and the same amount out (a `self-payment` entry with direction `out`).
   */
  direction: 'in' | 'out'
  /** The token moved: the vault's USDC, or another USDC (such as Circle's test USDC), listed under its own. */
  token: Address
  blockNumber: bigint
  /** The block's time, in seconds since the epoch. */
  timestamp: bigint
  txHash: Hash
  /**
   * The index in its block of the token's `Transfer` log that moved the amount (for sweeps and
   * withdrawals too, not the router's event beside it).
   */
  logIndex: number
  /** The payer (money in), the payee (money out), or the vault router (sweeps and withdrawals). */
  counterparty: Address
  /** USDC into or out of the wallet (withdrawals: after the fee). */
  amount: bigint
  /**
   * How an x402 settlement (or self-payment) was paid, as its transaction shows: `eip3009` (the token's
   * `AuthorizationUsed` event from the payer) or `permit2` (x402's Permit2 proxy, `exact` or `upto`,
   * settled it). `null` for every other entry.
   */
  x402Method: 'eip3009' | 'permit2' | null
  /** Shares minted by a sweep, or burnt by a withdrawal; 0 otherwise. */
  shares: bigint
  /** The fee on the yield a withdrawal paid to the treasury; 0 otherwise. */
  fee: bigint
  /** The yield a withdrawal realised, before the fee; 0 otherwise. */
  yieldRealised: bigint
  /** The wallet's balance of `token` after this entry. */
  balanceAfter: bigint
}

/**
 * The headline totals over the blocks scanned, in the vault's USDC (base units, exact). The yield earned is
 * `position value now + withdrawn + fees − deposited − position value at the opening`.
 */
export type LedgerTotals = {
  /** Received through x402 settlements from payers other than the wallet's own: the revenue. */
  receivedX402: bigint
  /** Received through x402 settlements from the wallet itself, its operators or `selfPayers`. */
  receivedSelf: bigint
  /** The wallet's x402 payments to itself, out again (each is also in `receivedSelf`). */
  sentSelf: bigint
  /** Received otherwise (plain transfers; withdrawals are not counted here). */
  receivedOther: bigint
  /** Swept into the vault. */
  deposited: bigint
  /** Received from the vault by withdrawals, after the fee. */
  withdrawn: bigint
  /** Fees on yield paid by withdrawals. */
  feesPaid: bigint
  /** Sent to other addresses. */
  sentOther: bigint
  /** The position's value at the closing block (before the fee on its yield), as `getPosition` names it. */
  currentValue: bigint
  /** The yield the position earned over the blocks scanned (before fees; negative for a loss). */
  yieldEarned: bigint
}

/**
 * One token's flows and balances, reconciled: `openingBalance + receivedX402 + receivedSelf +
 * receivedOther + withdrawn − deposited − sentSelf − sentOther = closingBalance`.
 */
export type LedgerTokenSummary = {
  token: Address
  /** The token's `symbol()`. */
  symbol: string
  /** Whether this is the vault's USDC (the only one swept and withdrawn). */
  vaultUsdc: boolean
  /** The wallet's balance at the block before the first one scanned. */
  openingBalance: bigint
  /** The wallet's balance at the last block scanned. */
  closingBalance: bigint
  receivedX402: bigint
  receivedSelf: bigint
  receivedOther: bigint
  deposited: bigint
  withdrawn: bigint
  sentSelf: bigint
  sentOther: bigint
  /** Whether the flows explain the change in balance to the base unit. */
  balanced: boolean
}

/**
 * The position over the blocks scanned. Its shares reconcile (`openingShares + sharesMinted − sharesBurned =
 * closingShares`), and so does its value, with the yield as the figure that balances it: `openingValue +
 * deposited + yieldEarned − withdrawn − feesPaid = closingValue`.
 */
export type LedgerPosition = {
  openingValue: bigint
  closingValue: bigint
  openingShares: bigint
  closingShares: bigint
  sharesMinted: bigint
  sharesBurned: bigint
  /** The cost basis (USDC deposited and not yet withdrawn) at the closing block. */
  closingCostBasis: bigint
  deposited: bigint
  withdrawn: bigint
  feesPaid: bigint
  yieldEarned: bigint
  /** The part of `yieldEarned` that withdrawals realised (before their fees). */
  yieldRealised: bigint
  /** Whether the share mints and burns explain the change in shares exactly. */
  balanced: boolean
}

/** The position at the end of one block. */
export type LedgerPositionPoint = {
  blockNumber: bigint
  timestamp: bigint
  shares: bigint
  /** What the shares were worth (before the fee on yield). */
  value: bigint
}

/** A wallet's ledger over a range of blocks: every movement, the totals, and both reconciliations. */
export type VaultLedger = {
  chain: VaultChainName
  chainId: number
  wallet: Address
  /** The vault's USDC. */
  usdc: Address
  /** The block before the first one scanned, where the opening balances are read, and its time. */
  opening: { blockNumber: bigint; timestamp: bigint }
  /** The last block scanned, where the closing balances are read, and its time. */
  closing: { blockNumber: bigint; timestamp: bigint }
  /** Every movement, oldest first. */
  entries: LedgerEntry[]
  totals: LedgerTotals
  /** The vault's USDC first, then each other USDC scanned. */
  tokens: LedgerTokenSummary[]
  position: LedgerPosition
  /**
   * The position at the opening block, after each block with a sweep or a withdrawal (at most 100 of them,
   * spread evenly), and at the closing block; empty unless `positionHistory` was asked for.
   */
  positionHistory: LedgerPositionPoint[]
  /** Whether every token and the position reconcile. */
  reconciled: boolean
}

export type GetLedgerParameters = {
  /** The wallet whose money is listed. */
  wallet: Address
  /** The first block to scan (at least 1: the opening balances are read at the block before it). */
  fromBlock: bigint
  /** The last block to scan. Default: the latest block when the call starts. */
  toBlock?: bigint | undefined
  /** Also read the position after each sweep and withdrawal, for a chart: one `eth_call` per such block. */
  positionHistory?: boolean | undefined
  /**
   * Addresses whose x402 payments to the wallet are the merchant's own money (its other wallets, a
   * test buyer): listed and totalled as `self-payment`, not as revenue. The wallet itself and its
   * operators (on the router, at the last block, or set or revoked within the blocks) always count.
   */
  selfPayers?: readonly Address[] | undefined
  /**
   * The most blocks to ask the RPC for in one `eth_getLogs` (default 10,000). The scan asks for less
   * where the RPC refuses a range as too large.
   */
  maxBlockRange?: bigint | undefined
  /** Called as the scan advances: blocks scanned so far, of the total. */
  onProgress?: ((progress: { scannedBlocks: bigint; totalBlocks: bigint }) => void) | undefined
}

/**
 * x402's Permit2 proxies, `exact` and `upto`, at the same address on every chain. Each emits
 * `Settled()` or `SettledWithPermit()` when it pays a seller.
 */
const x402Permit2Proxies: readonly Address[] = [
  x402ExactPermit2ProxyAddress,
  x402UptoPermit2ProxyAddress,
]
const x402ProxyEvents = parseAbi(['event Settled()', 'event SettledWithPermit()'])

/**
 * The USDC tokens besides the vault's that x402 buyers pay merchants in: x402's default USDC where it
 * is not the vault's (Circle's test USDC on Base Sepolia).
 */
function otherUsdcTokens(chain: VaultChainName): readonly Address[] {
  const stock = vaultChains[chain].x402DefaultUsdc
  return stock ? [stock.address] : []
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
/** The most position reads `positionHistory` makes between the opening and the closing one. */
const maxHistoryReads = 100
/** Reads of blocks or positions sent at once. */
const readConcurrency = 8

const action = 'Ledger'

/**
 * Lists a wallet's money over a range of blocks, from the chain's logs alone, oldest first: x402
 * settlements received (marked by the transaction: the token's EIP-3009 `AuthorizationUsed` event from the
 * payer, or a settlement through x402's Permit2 proxy), other transfers in, sweeps into the vault,
 * withdrawals (with their fee and the shares burnt), and transfers out. Payments in another USDC (Circle's
 * test USDC on Base Sepolia) are listed under their own token.
 *
 * The totals are exact to the base unit and reconcile: for each token, the balance at the block before
 * `fromBlock` plus everything in minus everything out is the balance at `toBlock`; for the position, the
 * same with its shares, and its value with the yield earned as the balancing figure. Opening and closing
 * balances are read at those blocks, so an RPC that keeps no state that old (not an archive node) cannot
 * serve an old `fromBlock`.
 *
 * Logs are read in ranges the RPC accepts: up to `maxBlockRange` blocks at once, fewer after a "range too
 * large" answer. Each range costs three `eth_getLogs` (transfers in, transfers out, the router's events),
 * and one or two more when it holds payments to classify; block times come with the logs where the RPC
 * sends them (else one `eth_getBlockByNumber` per block with entries).
 *
 * @param ctx - The vault client (no wallet client needed).
 * @param params - `wallet`, `fromBlock`, and optionally `toBlock`, `positionHistory`, `maxBlockRange`, `onProgress`.
 * @returns The entries, the totals, each token's and the position's reconciliation.
 * @throws {VaultValidationError} `INVALID_ADDRESS`, `INVALID_ARGUMENT` (the blocks); {VaultRpcError} when
 *   the RPC fails, or cannot read the state at the opening block.
 * @example
 * const latest = await publicClient.getBlockNumber()
 * const ledger = await vault.getLedger({ wallet, fromBlock: latest - 43_200n }) // about a day on Base
 * console.log(formatUsdc(ledger.totals.receivedX402), formatUsdc(ledger.totals.yieldEarned))
 */
export async function getLedger(
  ctx: VaultContext,
  params: GetLedgerParameters,
): Promise<VaultLedger> {
  const wallet = validateWallet(params.wallet)
  const fromBlock = blockParameter(params.fromBlock, 'fromBlock')
  if (fromBlock < 1n) {
    throw new VaultValidationError(
      'fromBlock must be at least 1: the opening balances are read at the block before it.',
      { code: 'INVALID_ARGUMENT', details: { field: 'fromBlock' } },
    )
  }
  const toBlock =
    params.toBlock === undefined
      ? await guard(ctx, action, () => getBlockNumber(ctx.publicClient, { cacheTime: 0 }))
      : blockParameter(params.toBlock, 'toBlock')
  if (toBlock < fromBlock) {
    throw new VaultValidationError(`toBlock (${toBlock}) is before fromBlock (${fromBlock}).`, {
      code: 'INVALID_ARGUMENT',
      details: { field: 'toBlock' },
    })
  }
  const selfPayers = (params.selfPayers ?? []).map((address, i) =>
    validateWallet(address, `selfPayers[${i}]`),
  )
  const usdc = ctx.addresses.usdc
  const tokens = [
    usdc,
    ...otherUsdcTokens(ctx.chain).filter((token) => !isAddressEqual(token, usdc)),
  ]
  const [opening, closing, scanned] = await Promise.all([
    readBalances(ctx, wallet, tokens, fromBlock - 1n, { opening: true }),
    readBalances(ctx, wallet, tokens, toBlock),
    scanEntries(ctx, wallet, tokens, { fromBlock, toBlock }, params),
  ])
  const [timed, operators] = await Promise.all([
    withTimestamps(ctx, scanned.drafts),
    readOperators(ctx, wallet, scanned, toBlock),
  ])
  const drafts = markSelfPayments(timed, wallet, [wallet, ...selfPayers, ...operators])

  const running = new Map(tokens.map((token, i) => [token, opening.balances[i] ?? 0n]))
  const entries: LedgerEntry[] = drafts.map((draft) => {
    const before = running.get(draft.token) ?? 0n
    const balanceAfter = draft.direction === 'in' ? before + draft.amount : before - draft.amount
    running.set(draft.token, balanceAfter)
    return { ...draft, balanceAfter }
  })

  const tokenSummaries = tokens.map((token, i): LedgerTokenSummary => {
    const of = (kind: LedgerEntryKind, direction?: 'in' | 'out') =>
      sum(
        entries
          .filter(
            (e) =>
              e.kind === kind &&
              e.token === token &&
              (direction === undefined || e.direction === direction),
          )
          .map((e) => e.amount),
      )
    const summary = {
      token,
      symbol: closing.symbols[i] ?? '',
      vaultUsdc: token === usdc,
      openingBalance: opening.balances[i] ?? 0n,
      closingBalance: closing.balances[i] ?? 0n,
      receivedX402: of('x402'),
      receivedSelf: of('self-payment', 'in'),
      receivedOther: of('transfer-in'),
      deposited: of('sweep'),
      withdrawn: of('withdrawal'),
      sentSelf: of('self-payment', 'out'),
      sentOther: of('transfer-out'),
    }
    const expected =
      summary.openingBalance +
      summary.receivedX402 +
      summary.receivedSelf +
      summary.receivedOther +
      summary.withdrawn -
      summary.deposited -
      summary.sentSelf -
      summary.sentOther
    return { ...summary, balanced: expected === summary.closingBalance }
  })
  const vaultToken = tokenSummaries[0] as LedgerTokenSummary
  const withdrawals = entries.filter((e) => e.kind === 'withdrawal')
  const feesPaid = sum(withdrawals.map((e) => e.fee))
  const sharesMinted = sum(entries.filter((e) => e.kind === 'sweep').map((e) => e.shares))
  const sharesBurned = sum(withdrawals.map((e) => e.shares))
  const yieldEarned =
    closing.position.value +
    vaultToken.withdrawn +
    feesPaid -
    vaultToken.deposited -
    opening.position.value
  const position: LedgerPosition = {
    openingValue: opening.position.value,
    closingValue: closing.position.value,
    openingShares: opening.position.shares,
    closingShares: closing.position.shares,
    sharesMinted,
    sharesBurned,
    closingCostBasis: closing.position.costBasis,
    deposited: vaultToken.deposited,
    withdrawn: vaultToken.withdrawn,
    feesPaid,
    yieldEarned,
    yieldRealised: sum(withdrawals.map((e) => e.yieldRealised)),
    balanced: opening.position.shares + sharesMinted - sharesBurned === closing.position.shares,
  }
  const positionHistory = params.positionHistory
    ? await readPositionHistory(ctx, wallet, entries, opening, closing)
    : []
  return {
    chain: ctx.chain,
    chainId: ctx.chainId,
    wallet,
    usdc,
    opening: { blockNumber: opening.blockNumber, timestamp: opening.timestamp },
    closing: { blockNumber: closing.blockNumber, timestamp: closing.timestamp },
    entries,
    totals: {
      receivedX402: vaultToken.receivedX402,
      receivedSelf: vaultToken.receivedSelf,
      sentSelf: vaultToken.sentSelf,
      receivedOther: vaultToken.receivedOther,
      deposited: vaultToken.deposited,
      withdrawn: vaultToken.withdrawn,
      feesPaid,
      sentOther: vaultToken.sentOther,
      currentValue: closing.position.value,
      yieldEarned,
    },
    tokens: tokenSummaries,
    position,
    positionHistory,
    reconciled: position.balanced && tokenSummaries.every((t) => t.balanced),
  }
}

/** An entry before its balance is known, and perhaps its time. */
type Draft = Omit<LedgerEntry, 'balanceAfter' | 'timestamp'> & { timestamp: bigint | undefined }

/** What a scan found: the entries, and the addresses the wallet made or unmade its operators. */
type Scan = { drafts: Draft[]; operators: Address[] }

/** The wallet's balances and position at the end of one block. */
type Balances = {
  blockNumber: bigint
  timestamp: bigint
  balances: bigint[]
  symbols: string[]
  position: { shares: bigint; value: bigint; costBasis: bigint }
}

function blockParameter(value: unknown, field: string): bigint {
  if (typeof value !== 'bigint' || value < 0n) {
    throw new VaultValidationError(`${field} must be a block number (a bigint, 0 or more).`, {
      code: 'INVALID_ARGUMENT',
      details: { field },
    })
  }
  return value
}

const sum = (values: bigint[]) => values.reduce((total, value) => total + value, 0n)

/** Every entry in the blocks, oldest first, read in ranges the RPC accepts. */
async function scanEntries(
  ctx: VaultContext,
  wallet: Address,
  tokens: Address[],
  blocks: BlockRange,
  params: GetLedgerParameters,
): Promise<Scan> {
  const totalBlocks = blocks.toBlock - blocks.fromBlock + 1n
  let scannedBlocks = 0n
  // viem's `getLogs({ blockRange })` splits one filter's range on any failure; a ledger range is
  // several filters read together, and only a "range too large" answer is a reason to split it.
  const limit = { maxRange: params.maxBlockRange ?? DEFAULT_LOG_SPAN }
  return guard(ctx, action, async () => {
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
 * The x402 payers that are the wallet's operators on the router at the last block, in one `eth_call`
 * (none when every settlement's payer is already known to be the merchant's own), and those the
 * wallet made or unmade its operators within the blocks.
 */
async function readOperators(
  ctx: VaultContext,
  wallet: Address,
  scan: Scan,
  blockNumber: bigint,
): Promise<Address[]> {
  const known = new Set([wallet, ...scan.operators].map((a) => a.toLowerCase()))
  const payers = [
    ...new Set(
      scan.drafts
        .filter((draft) => draft.kind === 'x402')
        .map((draft) => draft.counterparty.toLowerCase())
        .filter((payer) => !known.has(payer)),
    ),
  ] as Address[]
  if (payers.length === 0) return scan.operators
  const what = `${action} (operators at block ${blockNumber})`
  const results = await atBlock(ctx, blockNumber, what, () =>
    multicall(ctx.publicClient, {
      ...multicallOptions,
      blockNumber,
      contracts: payers.map((payer) => ({
        address: ctx.addresses.router,
        abi: routerAbi,
        functionName: 'isOperator',
        args: [wallet, payer],
      })),
    }),
  )
  return [
    ...scan.operators,
    ...payers.filter((_, i) => resultValue(ctx, results[i] as MulticallResponse<boolean>, what)),
  ]
}

/**
 * Marks the x402 settlements from the merchant's own addresses as self-payments, and the other leg of a
 * payment from the wallet to itself (the same `Transfer`, listed out as well as in).
 */
function markSelfPayments<entry extends Omit<LedgerEntry, 'balanceAfter'>>(
  drafts: entry[],
  wallet: Address,
  own: Address[],
): entry[] {
  const self = new Set(own.map((a) => a.toLowerCase()))
  const at = (d: entry) => `${d.txHash}:${d.logIndex}`
  const toItself = new Set(
    drafts
      .filter((d) => d.kind === 'x402' && isAddressEqual(d.counterparty, wallet))
      .map((d) => at(d)),
  )
  return drafts.map((draft) => {
    if (draft.kind === 'x402' && self.has(draft.counterparty.toLowerCase()))
      return { ...draft, kind: 'self-payment' }
    if (
      draft.kind === 'transfer-out' &&
      isAddressEqual(draft.counterparty, wallet) &&
      toItself.has(at(draft))
    ) {
      // The payment's own out leg carries its method, as its in leg does.
      const payment = drafts.find((d) => d.kind === 'x402' && at(d) === at(draft))
      return { ...draft, kind: 'self-payment', x402Method: payment?.x402Method ?? null }
    }
    return draft
  })
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

type MinedLog = {
  address: Address
  blockNumber: bigint | null
  blockTimestamp?: bigint | null | undefined
  transactionHash: Hash | null
  logIndex: number | null
  removed: boolean
}

/** A log of a mined block that no reorganisation removed. */
const isLive = (log: MinedLog) => !log.removed && log.blockNumber !== null

/** Where a log sits, and its block's time when the RPC sent it with the log. */
function position(log: MinedLog) {
  return {
    blockNumber: log.blockNumber as bigint,
    timestamp: log.blockTimestamp ?? undefined,
    txHash: log.transactionHash as Hash,
    logIndex: log.logIndex ?? 0,
  }
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

/** The smallest range that holds every log. */
function blocksOf(logs: MinedLog[]): BlockRange {
  let fromBlock = logs[0]?.blockNumber as bigint
  let toBlock = fromBlock
  for (const log of logs) {
    const block = log.blockNumber as bigint
    if (block < fromBlock) fromBlock = block
    if (block > toBlock) toBlock = block
  }
  return { fromBlock, toBlock }
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

/** The entries with their block times: from the logs where the RPC sent them, else from the blocks. */
async function withTimestamps(
  ctx: VaultContext,
  drafts: Draft[],
): Promise<Omit<LedgerEntry, 'balanceAfter'>[]> {
  const missing = [
    ...new Set(drafts.filter((d) => d.timestamp === undefined).map((d) => d.blockNumber)),
  ]
  const times = new Map<bigint, bigint>()
  await forEachLimited(missing, async (blockNumber) => {
    const block = await guard(ctx, `${action} (block ${blockNumber})`, () =>
      getBlock(ctx.publicClient, { blockNumber }),
    )
    times.set(blockNumber, block.timestamp)
  })
  return drafts.map((draft) => ({
    ...draft,
    timestamp: draft.timestamp ?? (times.get(draft.blockNumber) as bigint),
  }))
}

async function forEachLimited<T>(items: T[], run: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < items.length) await run(items[next++] as T)
  }
  await Promise.all(Array.from({ length: Math.min(readConcurrency, items.length) }, worker))
}

/**
 * The wallet's token balances, shares, position value and cost basis at the end of one block, in one
 * `eth_call`; the token symbols too.
 */
async function readBalances(
  ctx: VaultContext,
  wallet: Address,
  tokens: Address[],
  blockNumber: bigint,
  options: { opening?: boolean } = {},
): Promise<Balances> {
  const { router, shareToken } = ctx.addresses
  const what = `${action} (balances at block ${blockNumber})`
  const contracts: ContractFunctionParameters[] = [
    blockTimestampCall,
    { address: shareToken, abi: shareTokenAbi, functionName: 'balanceOf', args: [wallet] },
    { address: router, abi: routerAbi, functionName: 'getPosition', args: [wallet] },
    ...tokens.map((token) => ({
      address: token,
      abi: usdcAbi,
      functionName: 'balanceOf',
      args: [wallet],
    })),
    ...tokens.map((token) => ({ address: token, abi: usdcAbi, functionName: 'symbol' })),
  ]
  const results = (await atBlock(ctx, blockNumber, what, () =>
    multicall(ctx.publicClient, { ...multicallOptions, blockNumber, contracts }),
  )) as MulticallResponse<unknown>[]
  const value = <T>(result: MulticallResponse<unknown> | undefined) =>
    resultValue(ctx, result as MulticallResponse<T>, what)
  // A ledger that opens before the vault (or a token) was deployed reads nothing there: no contract
  // means no balance and no position. Only at the opening block: at the closing one it is a mistake.
  const amount = <T>(result: MulticallResponse<unknown> | undefined, none: T): T =>
    options.opening && result?.status === 'failure' && noContract(result.error)
      ? none
      : value<T>(result)
  const [timestamp, shares, held, ...rest] = results
  const [costBasis, positionValue] = amount<readonly [bigint, bigint, bigint]>(held, [0n, 0n, 0n])
  return {
    blockNumber,
    timestamp: value<bigint>(timestamp),
    balances: rest.slice(0, tokens.length).map((result) => amount(result, 0n)),
    symbols: rest
      .slice(tokens.length)
      .map((result) => (result.status === 'success' ? String(result.result) : '')),
    position: { shares: amount(shares, 0n), value: positionValue, costBasis },
  }
}

/** Whether a call failed because nothing answered it: no contract at the address at that block. */
function noContract(error: unknown): boolean {
  return findError(error, 'ContractFunctionZeroDataError', 'AbiDecodingZeroDataError') !== undefined
}

/** The position after each block with a sweep or a withdrawal (at most `maxHistoryReads`), between the ends. */
async function readPositionHistory(
  ctx: VaultContext,
  wallet: Address,
  entries: LedgerEntry[],
  opening: Balances,
  closing: Balances,
): Promise<LedgerPositionPoint[]> {
  const moves = [
    ...new Set(
      entries
        .filter((e) => e.kind === 'sweep' || e.kind === 'withdrawal')
        .map((e) => e.blockNumber)
        .filter((block) => block !== closing.blockNumber),
    ),
  ]
  const picked =
    moves.length <= maxHistoryReads
      ? moves
      : Array.from(
          { length: maxHistoryReads },
          (_, i) => moves[Math.floor((i * moves.length) / maxHistoryReads)] as bigint,
        )
  const points = new Map<bigint, LedgerPositionPoint>()
  await forEachLimited(picked, async (blockNumber) => {
    const what = `${action} (position at block ${blockNumber})`
    const [timestamp, shares, held] = await atBlock(ctx, blockNumber, what, () =>
      multicall(ctx.publicClient, {
        ...multicallOptions,
        blockNumber,
        contracts: [
          blockTimestampCall,
          {
            address: ctx.addresses.shareToken,
            abi: shareTokenAbi,
            functionName: 'balanceOf',
            args: [wallet],
          },
          {
            address: ctx.addresses.router,
            abi: routerAbi,
            functionName: 'getPosition',
            args: [wallet],
          },
        ],
      }),
    )
    points.set(blockNumber, {
      blockNumber,
      timestamp: resultValue(ctx, timestamp, what),
      shares: resultValue(ctx, shares, what),
      value: resultValue(ctx, held, what)[1],
    })
  })
  const point = (b: Balances): LedgerPositionPoint => ({
    blockNumber: b.blockNumber,
    timestamp: b.timestamp,
    shares: b.position.shares,
    value: b.position.value,
  })
  return [
    point(opening),
    ...picked.map((b) => points.get(b) as LedgerPositionPoint),
    point(closing),
  ]
}

/**
 * Runs a read pinned to a block. An RPC that keeps no state that old (not an archive node) answers with
 * its own words ("missing trie node", "header not found", …): that becomes a message saying so.
 */
async function atBlock<T>(
  ctx: VaultContext,
  blockNumber: bigint,
  what: string,
  read: () => Promise<T>,
): Promise<T> {
  try {
    return await guard(ctx, what, read)
  } catch (error) {
    if (error instanceof VaultError && error.category === 'rpc' && noStateAt(error)) {
      throw new VaultRpcError(
        `${what}: the RPC cannot read the chain's state at block ${blockNumber}; it keeps no state that old. Use an archive RPC, or scan from a later block.`,
        { code: 'RPC_ERROR', retryable: false, details: { blockNumber }, cause: error },
      )
    }
    throw error
  }
}

function noStateAt(error: Error): boolean {
  const text = [error.message, String((error.cause as Error | undefined)?.message ?? '')].join(' ')
  return /missing trie node|historical state|state (is )?not available|header not found|pruned|unknown block|block not found/i.test(
    text,
  )
}
