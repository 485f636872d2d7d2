/**
 * The vault router's share math, as pure bigint functions.
 *
 * The SDK uses it to check a `previewWithdrawNet` quote against `previewRedeem` without another round
 * trip, and the devnet tests check the contracts against it to the base unit. Notation follows the
 * spec: `A` total vault assets, `S` share supply, `W` the wallet's shares, `cb` its cost basis.
 */

/** The virtual offset added to both assets and supply (1 USDC, 1 share). */
export const VIRTUAL_OFFSET = 1_000_000n
/** The protocol fee on realised yield, in basis points (10 %), rounded up. */
export const FEE_BPS = 1_000n
export const BPS_DENOMINATOR = 10_000n

/** The vault-wide state the share math depends on. */
export type VaultTotals = {
  /** `totalVaultAssets()`: USDC across both venues. */
  totalAssets: bigint
  /** The share token's total supply. */
  totalShares: bigint
}

/** One wallet's state. */
export type WalletHoldings = {
  /** The wallet's share balance (`W`). */
  shares: bigint
  /** `costBasisUSDC(wallet)` (`cb`). */
  costBasis: bigint
}

/** Why `previewWithdrawNet` reverts, with the router's error name and arguments. */
export type WithdrawNetRevert =
  | {
      error:
        | 'ZeroAmount'
        | 'NoPositionToWithdraw'
        | 'PositionRoundsToZero'
        | 'PreviewMathDegenerate'
    }
  | { error: 'UnserviceableNet'; desired: bigint; maxDeliverable: bigint }

const ceilDiv = (numerator: bigint, denominator: bigint) =>
  (numerator + denominator - 1n) / denominator

/** `s·(A+V)/(S+V)` rounded down, then capped at `A`. */
export function sharesToAssets(shares: bigint, vault: VaultTotals): bigint {
  const assets =
    (shares * (vault.totalAssets + VIRTUAL_OFFSET)) / (vault.totalShares + VIRTUAL_OFFSET)
  return assets < vault.totalAssets ? assets : vault.totalAssets
}

/** `a·(S+V)/(A+V)` rounded down: the shares a deposit of `assets` mints. */
export function assetsToShares(assets: bigint, vault: VaultTotals): bigint {
  return (assets * (vault.totalShares + VIRTUAL_OFFSET)) / (vault.totalAssets + VIRTUAL_OFFSET)
}

/**
 * The room left under the router's TVL cap: `tvlCap − totalAssets`, 0 when the vault is at or over
 * it, `null` when there is no cap. A deposit larger than this reverts.
 */
export function tvlHeadroom(tvlCap: bigint, totalAssets: bigint): bigint
export function tvlHeadroom(tvlCap: bigint | null, totalAssets: bigint): bigint | null
export function tvlHeadroom(tvlCap: bigint | null, totalAssets: bigint): bigint | null {
  if (tvlCap === null) return null
  return tvlCap > totalAssets ? tvlCap - totalAssets : 0n
}

/** The fee on realised yield: `ceil(feeBps · yield / 10000)`, 0 for no yield. */
export function feeOnYield(yieldEarned: bigint, feeBps = FEE_BPS): bigint {
  return yieldEarned > 0n ? ceilDiv(yieldEarned * feeBps, BPS_DENOMINATOR) : 0n
}

/** The router's `previewRedeem(s, wallet)`: USDC the wallet receives for `shares`, net of the fee. */
export function previewRedeem(
  shares: bigint,
  vault: VaultTotals,
  wallet: WalletHoldings,
  feeBps = FEE_BPS,
): bigint {
  const gross = sharesToAssets(shares, vault)
  const principal = wallet.shares === 0n ? 0n : (wallet.costBasis * shares) / wallet.shares
  return gross - feeOnYield(gross > principal ? gross - principal : 0n, feeBps)
}

/**
 * The router's `previewWithdrawNet(d, wallet)`: the live contract's closed form, including its `+1`
 * target and its quirk at `d = maxDeliverable` (it can quote `W − 1` shares, 1 base unit short).
 *
 * @returns `{ shares }`, or the revert the router gives.
 */
export function previewWithdrawNet(
  desired: bigint,
  vault: VaultTotals,
  wallet: WalletHoldings,
): { shares: bigint } | WithdrawNetRevert {
  const { shares: walletShares, costBasis } = wallet
  if (desired === 0n) return { error: 'ZeroAmount' }
  if (walletShares === 0n) return { error: 'NoPositionToWithdraw' }
  const grossAll = sharesToAssets(walletShares, vault)
  if (grossAll === 0n) return { error: 'PositionRoundsToZero' }
  const assets1 = vault.totalAssets + VIRTUAL_OFFSET
  const shares1 = vault.totalShares + VIRTUAL_OFFSET
  if (grossAll <= costBasis) {
    if (desired > grossAll) {
      return { error: 'UnserviceableNet', desired, maxDeliverable: grossAll }
    }
    return { shares: ceilDiv(desired * shares1, assets1) }
  }
  const maxDeliverable = grossAll - feeOnYield(grossAll - costBasis)
  if (desired > maxDeliverable) return { error: 'UnserviceableNet', desired, maxDeliverable }
  const target = desired < maxDeliverable ? desired + 1n : desired
  const denominator = 9_000n * walletShares * assets1 + 1_000n * costBasis * shares1
  if (denominator === 0n) return { error: 'PreviewMathDegenerate' }
  const shares = ceilDiv(target * 10_000n * walletShares * shares1, denominator)
  if (shares > walletShares) return { error: 'UnserviceableNet', desired, maxDeliverable }
  return { shares }
}

/**
 * The fewest shares that pay `desired` net (`previewRedeem(shares) ≥ desired`), at or below a
 * `previewWithdrawNet` quote. The quote is the router's closed form: its target `d + 1` and its rounding
 * up make it often 1–2 shares more than the fewest that pay, and at `d = maxDeliverable` it can be
 * `W − 1` shares, 1 base unit short; then the next share up, or every share, bounds the search.
 * `previewRedeem` never falls as the shares grow, so a bisection below that bound finds the fewest.
 * Asking for everything the position pays (`desired = previewRedeem(W)`) takes every share, so no dust
 * is left behind.
 *
 * @returns The shares to burn; `undefined` when even every share pays less than `desired`.
 */
export function sharesDeliveringNet(
  quote: bigint,
  desired: bigint,
  vault: VaultTotals,
  wallet: WalletHoldings,
  feeBps = FEE_BPS,
): bigint | undefined {
  const netOf = (shares: bigint) => previewRedeem(shares, vault, wallet, feeBps)
  const pays = (shares: bigint) => netOf(shares) >= desired
  const everything = netOf(wallet.shares)
  if (everything < desired) return undefined
  if (everything === desired) return wallet.shares
  let enough = wallet.shares
  if (quote <= wallet.shares && pays(quote)) enough = quote
  else if (quote + 1n <= wallet.shares && pays(quote + 1n)) enough = quote + 1n
  // `enough` pays and `short` does not (no share pays nothing, and `desired` is above 0).
  let short = 0n
  while (enough - short > 1n) {
    const middle = (short + enough) / 2n
    if (pays(middle)) enough = middle
    else short = middle
  }
  return enough
}
