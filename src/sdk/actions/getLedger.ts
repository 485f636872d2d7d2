import { type Address, isAddressEqual } from 'viem'
import { getBlockNumber } from 'viem/actions'
import { type VaultChainName, vaultChains } from '../chains.js'
import type { VaultContext } from '../context.js'
import { VaultValidationError } from '../errors/classes.js'
import { guard } from '../internal/read.js'
import { validateWallet } from '../internal/validate.js'
import { readAuthorizedAmounts } from '../ledger/authorizedAmounts.js'
import { readBalances, readPositionHistory, withTimestamps } from '../ledger/balances.js'
import { countVouchers } from '../ledger/batchVouchers.js'
import { reconcileLedger } from '../ledger/reconcile.js'
import { scanEntries } from '../ledger/scanEntries.js'
import { markSelfPayments, readOperators } from '../ledger/selfPayments.js'
import { type Draft, ledgerAction, type VaultLedger } from '../ledger/types.js'

export type {
  LedgerEntry,
  LedgerEntryKind,
  LedgerPosition,
  LedgerPositionPoint,
  LedgerTokenSummary,
  LedgerTotals,
  LedgerX402Scheme,
  VaultLedger,
} from '../ledger/types.js'

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
 * The USDC tokens besides the vault's that x402 buyers pay merchants in: x402's default USDC where it
 * is not the vault's (Circle's test USDC on Base Sepolia).
 */
function otherUsdcTokens(chain: VaultChainName): readonly Address[] {
  const stock = vaultChains[chain].x402DefaultUsdc
  return stock ? [stock.address] : []
}

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
      ? await guard(ctx, ledgerAction, () => getBlockNumber(ctx.publicClient, { cacheTime: 0 }))
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
  const [timed, operators, maximums, vouchers] = await Promise.all([
    withTimestamps(ctx, scanned.drafts),
    readOperators(ctx, wallet, scanned, toBlock),
    readAuthorizedAmounts(ctx, wallet, scanned.drafts),
    countVouchers(ctx, wallet, scanned.drafts, { fromBlock, toBlock }, params.maxBlockRange),
  ])
  // withTimestamps keeps the drafts' order.
  const detailed = timed.map((entry, i) => {
    const draft = scanned.drafts[i] as Draft
    return {
      ...entry,
      authorizedAmount: maximums.has(draft)
        ? (maximums.get(draft) as bigint | null)
        : entry.authorizedAmount,
      vouchers: vouchers.has(draft) ? (vouchers.get(draft) as number | null) : entry.vouchers,
    }
  })
  const drafts = markSelfPayments(detailed, wallet, [wallet, ...selfPayers, ...operators])

  const books = reconcileLedger({ tokens, opening, closing, entries: drafts })
  const positionHistory = params.positionHistory
    ? await readPositionHistory(ctx, wallet, books.entries, opening, closing)
    : []
  return {
    chain: ctx.chain,
    chainId: ctx.chainId,
    wallet,
    usdc,
    opening: { blockNumber: opening.blockNumber, timestamp: opening.timestamp },
    closing: { blockNumber: closing.blockNumber, timestamp: closing.timestamp },
    entries: books.entries,
    totals: books.totals,
    tokens: books.tokens,
    position: books.position,
    positionHistory,
    reconciled: books.reconciled,
  }
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
