import type { Address, Hash } from 'viem'
import type { VaultChainName } from '../chains.js'

/**
 * What a ledger entry is: an x402 settlement received (revenue: an `exact` or `upto` payment, or a
 * `batch-settlement` settle paying out claimed vouchers), a self-payment (an x402 settlement whose payer
 * is the wallet itself, one of its operators or an address named in `selfPayers`: not revenue), another
 * transfer received, a sweep into the vault, a withdrawal from it, the wallet's deposit into an x402
 * payment channel (as a buyer), what a channel gave back to it (a refund or a timed withdrawal), or
 * another transfer sent.
 */
export type LedgerEntryKind =
  | 'x402'
  | 'self-payment'
  | 'transfer-in'
  | 'sweep'
  | 'withdrawal'
  | 'channel-deposit'
  | 'channel-refund'
  | 'transfer-out'

/** The x402 scheme an x402 settlement (or self-payment) was paid with. */
export type LedgerX402Scheme = 'exact' | 'upto' | 'batch-settlement'

/** One movement of USDC into or out of the wallet, read from the chain's logs. Amounts are base units. */
export type LedgerEntry = {
  kind: LedgerEntryKind
  /**
   * `in` for x402 settlements, self-payments, other transfers in, withdrawals and channel refunds; `out`
   * for sweeps, channel deposits and transfers out. A payment from the wallet to itself is two entries of one `Transfer`: the
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
  /**
   * The payer (money in), the payee (money out), the vault router (sweeps and withdrawals), or x402's
   * batch-settlement contract (its settles, and the wallet's channel deposits and refunds).
   */
  counterparty: Address
  /** USDC into or out of the wallet (withdrawals: after the fee). */
  amount: bigint
  /**
   * How an x402 settlement (or self-payment) was paid, as its transaction shows: `eip3009` (the token's
   * `AuthorizationUsed` event from the payer) or `permit2` (x402's Permit2 proxy, `exact` or `upto`,
   * settled it). `null` for every other entry, a `batch-settlement` settle too (the contract pays it).
   */
  x402Method: 'eip3009' | 'permit2' | null
  /**
   * The scheme of an x402 settlement (or self-payment), as its transaction shows: `exact` (EIP-3009, or
   * x402's `exact` Permit2 proxy), `upto` (x402's `upto` Permit2 proxy) or `batch-settlement` (the
   * contract's `Settled` event to the wallet). `null` for every other entry.
   */
  x402Scheme: LedgerX402Scheme | null
  /**
   * The most the buyer authorized: for `upto`, the amount of the permit it signed, read from the settle
   * transaction's calldata (`null` when that transaction is not a direct call of x402's `upto` proxy);
   * for `exact`, the amount itself. `null` for every other entry.
   */
  authorizedAmount: bigint | null
  /**
   * For a `batch-settlement` settle: how many vouchers it paid, the `Claimed` events of the wallet's
   * channels in this token since the previous settle to the wallet (a claim takes a channel's latest
   * voucher, which covers every request since the channel's last claim). `null` when some of the amount
   * was claimed before the first block scanned (scan from an earlier block to count them), and for every
   * other entry.
   */
  vouchers: number | null
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
  /** Deposited into x402 payment channels by the wallet as a buyer. */
  channelDeposits: bigint
  /** Given back to the wallet by x402 payment channels (refunds and timed withdrawals). */
  channelRefunds: bigint
  /** Sent to other addresses. */
  sentOther: bigint
  /** The position's value at the closing block (before the fee on its yield), as `getPosition` names it. */
  currentValue: bigint
  /** The yield the position earned over the blocks scanned (before fees; negative for a loss). */
  yieldEarned: bigint
}

/**
 * One token's flows and balances, reconciled: `openingBalance + receivedX402 + receivedSelf +
 * receivedOther + withdrawn + channelRefunds − deposited − channelDeposits − sentSelf − sentOther =
 * closingBalance`.
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
  channelDeposits: bigint
  channelRefunds: bigint
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

/** Names the ledger's reads in errors: "Ledger (balances at block 12)". */
export const ledgerAction = 'Ledger'

/** An entry before its balance is known, and perhaps its time. */
export type Draft = Omit<LedgerEntry, 'balanceAfter' | 'timestamp'> & {
  timestamp: bigint | undefined
}

/** What a scan found: the entries, and the addresses the wallet made or unmade its operators. */
export type Scan = { drafts: Draft[]; operators: Address[] }

/** The wallet's balances and position at the end of one block. */
export type Balances = {
  blockNumber: bigint
  timestamp: bigint
  balances: bigint[]
  symbols: string[]
  position: { shares: bigint; value: bigint; costBasis: bigint }
}
