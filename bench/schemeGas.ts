import {
  type Address,
  createPublicClient,
  http,
  isAddressEqual,
  keccak256,
  parseAbi,
  parseEventLogs,
  type TransactionReceipt,
  toHex,
} from 'viem'
import { receiptsFrom, usdcBalance } from '../harness/merchant.js'
import { buyerClient, buyerFetch } from '../harness/merchantApps.js'
import { formatUsdc, parseUsdc } from '../src/index.js'
import type { PaywallScheme } from '../src/plugins/express.js'
import { x402BatchSettlementAddress } from '../src/sdk/shared.js'
import type { BenchContext, Measured } from './context.js'
import { latestBlock, openShopWithoutSweeper, type Sells } from './seller.js'

/** Transactions of one kind and their gas, summed from their receipts. */
export type GasPart = { transactions: number; gas: number }

/** One scheme's gas for the run's requests: every transaction it caused, per request and in parts. */
export type SchemeGasRow = {
  /** The sum of every part's gas ÷ the requests, rounded to the nearest unit of gas. */
  gasPerRequest: number
  /** What the merchant received, decimal USDC: checked to the base unit against the charges. */
  receivedUsdc: string
}

/** The gas each scheme costs per paid request, side by side, for the same requests at the same price. */
export type SchemeGas = {
  /** Paid requests per scheme, one at a time, by one buyer. */
  requests: number
  /** The route's price, decimal USDC (for `upto`, the most a request may cost). */
  priceUsdc: string
  /** One settlement per request (Permit2 on the devnet's Base Sepolia, after the buyer's approval). */
  exact: SchemeGasRow & { settlements: GasPart }
  /** One settlement per request, of what the handler charged (`chargeUsdc`). */
  upto: SchemeGasRow & { chargeUsdc: string; settlements: GasPart }
  /**
   * The buyer's deposits into x402's escrow (x402's client deposits what the seller asks, ten times the
   * price, again when it runs out), the paywall's claim of the vouchers and its settlement to `payTo`:
   * `close()` claims and settles the whole run once, as the jobs do when the run's requests fall in one
   * claim interval (a minute by default).
   */
  batchSettlement: SchemeGasRow & {
    deposits: GasPart
    claims: GasPart
    settles: GasPart
  }
}

/** x402's batch-settlement contract's events that tell its transactions apart. */
const escrowEvents = parseAbi([
  'event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 newBalance)',
  'event Claimed(bytes32 indexed channelId, address indexed sender, uint128 claimAmount, uint128 newTotalClaimed)',
  'event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount)',
])

/** The price of every request, 0.001 USDC, as the figure asks. */
const price = '0.001'

/**
 * Measures the gas each scheme costs per paid request: the same number of requests (100; 20 in a smoke
 * run) at 0.001 USDC, one at a time, by the devnet's buyer with x402's stock client for the scheme,
 * through `createPaywall` (`sweep: false`: a sweep's gas is the sweep row's, the same whatever the
 * scheme). Every transaction the scheme causes is the facilitator's (the bench checks that the buyer
 * sends none): each settlement for `exact` and `upto`; for `batch-settlement` the buyer's deposits, and
 * the claim and the settlement that `close()` sends. Their receipts' `gasUsed`, summed, ÷ the requests.
 * Each scheme's merchant income is checked to the base unit, so a row cannot count requests that were
 * not paid.
 *
 * @param ctx - A Base Sepolia devnet with its facilitator, whose buyer has approved Permit2.
 * @returns Gas per request and its parts for each scheme.
 * @example
 * const gas = await measureSchemeGas(ctx)
 */
export async function measureSchemeGas(ctx: BenchContext): Promise<Measured<SchemeGas>> {
  const { devnet } = ctx
  const requests = ctx.smoke ? 20 : 100
  const priceUnits = parseUsdc(price)
  const charge = priceUnits / 2n

  const exact = await runScheme(ctx, requests, { scheme: 'exact' }, buyerFetch(devnet))
  expectReceived('exact', exact.received, priceUnits * BigInt(requests))
  const upto = await runScheme(
    ctx,
    requests,
    { scheme: 'upto', charge },
    buyerClient(devnet, { scheme: 'upto' }).pay,
  )
  expectReceived('upto', upto.received, charge * BigInt(requests))
  const batch = await runScheme(
    ctx,
    requests,
    // The jobs' intervals are far off: close() claims and settles the whole run, once each, however
    // long the run takes on a busy machine.
    {
      scheme: 'batch-settlement',
      batchSettlement: { claimIntervalMs: 3_600_000, settleIntervalMs: 3_600_000 },
    },
    // A channel of its own: the latency row's buyer opens another.
    buyerClient(devnet, {
      scheme: 'batch-settlement',
      batchSettlement: { salt: keccak256(toHex('x402-vault bench: scheme gas')) },
    }).pay,
  )
  expectReceived('batch-settlement', batch.received, priceUnits * BigInt(requests))

  const settlementsOf = (scheme: PaywallScheme, receipts: TransactionReceipt[]): GasPart => {
    const part = gasOf(receipts)
    if (part.transactions !== requests) {
      throw new Error(`${scheme}: ${part.transactions} transactions for ${requests} requests`)
    }
    return part
  }
  const exactSettlements = settlementsOf('exact', exact.receipts)
  const uptoSettlements = settlementsOf('upto', upto.receipts)
  const kinds = batchKinds(batch.receipts)
  const perRequest = (parts: GasPart[]) =>
    Math.round(parts.reduce((sum, part) => sum + part.gas, 0) / requests)
  return {
    value: {
      requests,
      priceUsdc: price,
      exact: {
        gasPerRequest: perRequest([exactSettlements]),
        receivedUsdc: formatUsdc(exact.received),
        settlements: exactSettlements,
      },
      upto: {
        gasPerRequest: perRequest([uptoSettlements]),
        receivedUsdc: formatUsdc(upto.received),
        chargeUsdc: formatUsdc(charge),
        settlements: uptoSettlements,
      },
      batchSettlement: {
        gasPerRequest: perRequest([kinds.deposits, kinds.claims, kinds.settles]),
        receivedUsdc: formatUsdc(batch.received),
        ...kinds,
      },
    },
  }
}

/**
 * Pays `requests` requests to a new shop that sells with `sells`, closes it (a batch-settlement
 * paywall claims and settles what is owed then), and returns what the merchant received and the
 * facilitator's receipts in between.
 */
async function runScheme(
  ctx: BenchContext,
  requests: number,
  sells: Sells & { scheme: PaywallScheme },
  pay: typeof fetch,
): Promise<{ received: bigint; receipts: TransactionReceipt[] }> {
  const { devnet } = ctx
  const merchant = devnet.accounts.merchant.address
  const buyer = devnet.accounts.buyer.address
  const firstBlock = (await latestBlock(devnet)) + 1n
  const start = await usdcBalance(devnet, merchant)
  const buyerSent = await sentBy(ctx, buyer)
  const shop = await openShopWithoutSweeper(devnet, price, sells)
  try {
    for (let request = 0; request < requests; request++) {
      if (request % 25 === 0) {
        ctx.progress(`scheme gas: ${sells.scheme}, request ${request + 1} of ${requests}`)
      }
      const response = await pay(shop.paidUrl)
      await response.arrayBuffer()
      if (response.status !== 200) {
        throw new Error(`a paid ${sells.scheme} request answered ${response.status}`)
      }
    }
  } finally {
    await shop.stop()
  }
  if ((await sentBy(ctx, buyer)) !== buyerSent) {
    throw new Error(`the buyer sent a transaction to pay with ${sells.scheme}`)
  }
  return {
    received: (await usdcBalance(devnet, merchant)) - start,
    receipts: await receiptsFrom(devnet, devnet.accounts.facilitator.address, firstBlock),
  }
}

/**
 * The facilitator's batch-settlement transactions by kind, told apart by the escrow contract's events
 * in their receipts: deposits (`Deposited`), claims (`Claimed`) and settlements (`Settled`).
 *
 * @param receipts - The facilitator's receipts over a stretch where it sent nothing else.
 * @returns Each kind's transactions and gas.
 * @throws {Error} for a transaction of no kind (a reverted one among them): the row would be wrong.
 * @example
 * const { claims, settles } = batchKinds(await receiptsFrom(devnet, facilitator, firstBlock))
 */
export function batchKinds(
  receipts: TransactionReceipt[],
): Pick<SchemeGas['batchSettlement'], 'deposits' | 'claims' | 'settles'> {
  const byKind = { deposits: [] as TransactionReceipt[], claims: [], settles: [] } as Record<
    'deposits' | 'claims' | 'settles',
    TransactionReceipt[]
  >
  for (const receipt of receipts) {
    const names = new Set(
      parseEventLogs({ abi: escrowEvents, logs: receipt.logs })
        .filter((log) => isAddressEqual(log.address, x402BatchSettlementAddress))
        .map((log) => log.eventName),
    )
    const kind = names.has('Deposited')
      ? 'deposits'
      : names.has('Claimed')
        ? 'claims'
        : names.has('Settled')
          ? 'settles'
          : undefined
    if (!kind) {
      throw new Error(
        `the facilitator sent ${receipt.transactionHash} (${receipt.status}) during the batch-settlement run, neither a deposit, a claim nor a settlement`,
      )
    }
    byKind[kind].push(receipt)
  }
  return {
    deposits: gasOf(byKind.deposits),
    claims: gasOf(byKind.claims),
    settles: gasOf(byKind.settles),
  }
}

function gasOf(receipts: TransactionReceipt[]): GasPart {
  return {
    transactions: receipts.length,
    gas: Number(receipts.reduce((sum, receipt) => sum + receipt.gasUsed, 0n)),
  }
}

function expectReceived(scheme: PaywallScheme, received: bigint, charged: bigint): void {
  if (received !== charged) {
    throw new Error(
      `${scheme}: the merchant received ${received} base units for ${charged} charged`,
    )
  }
}

function sentBy(ctx: BenchContext, account: Address): Promise<number> {
  return createPublicClient({
    chain: ctx.devnet.viemChain,
    transport: http(ctx.devnet.rpcUrl),
  }).getTransactionCount({ address: account })
}
