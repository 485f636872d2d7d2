import {
  type ApproveTransaction,
  type DepositTransaction,
  type Field,
  formatRayPercent,
  formatUsdc,
  type InitializeTransaction,
  mapField,
  type PlanWarning,
  type VaultContext,
  type WalletCalls,
  type WithdrawTransaction,
} from '../index.js'

/** A USDC amount in tool output: the decimal string and its base-unit (atomic) twin. */
export type UsdcAmount = { usdc: string; atomic: string }

/** A rate in tool output: the APY percentage and the ray it comes from (1e27 = 100 %). */
export type Rate = { apy: string; ray: string }

/** An unsigned transaction of a plan. */
export type PlannedTransaction =
  | InitializeTransaction
  | ApproveTransaction
  | DepositTransaction
  | WithdrawTransaction

/** An unsigned transaction in a plan tool's output: bigints become decimal strings. */
export type TransactionJson = {
  chain: VaultContext['chain']
  chainId: number
  to: string
  data: string
  value: '0'
  functionName: PlannedTransaction['functionName']
  args: string[]
}

/** The warning every plan carries, word for word: the client shows it to the user. */
export const planWarning =
  'Unsigned transaction plan only: this server cannot sign or broadcast. Review it and send it from your own wallet.' as const

/**
 * Shows a USDC amount in base units as `{ usdc, atomic }`.
 *
 * @param amount - Base units (6 decimals).
 * @returns `{ usdc: '12.5', atomic: '12500000' }` for `12_500_000n`.
 * @example
 * usdcAmount(12_500_000n) // { usdc: '12.5', atomic: '12500000' }
 */
export function usdcAmount(amount: bigint): UsdcAmount {
  return { usdc: formatUsdc(amount), atomic: amount.toString() }
}

/** {@link usdcAmount} of a read field, keeping `Unavailable` as it is. */
export function usdcField(field: Field<bigint>): Field<UsdcAmount> {
  return mapField(field, usdcAmount)
}

/** A bigint read field as a decimal string, keeping `Unavailable` as it is. */
export function integerField(field: Field<bigint>): Field<string> {
  return mapField(field, String)
}

/** A rate in ray as `{ apy: '4.50%', ray }`. */
export function rate(ray: bigint): Rate {
  return { apy: formatRayPercent(ray), ray: ray.toString() }
}

/**
 * Shows an SDK transaction as a plan tool answers it, every bigint as a decimal string.
 *
 * @param transaction - An unsigned transaction from an SDK plan.
 * @returns `{ chain, chainId, to, data, value: '0', functionName, args }`.
 * @example
 * transactionJson(plan.transaction).value // '0'
 */
export function transactionJson(transaction: PlannedTransaction): TransactionJson {
  // No vault call carries ETH; a plan that did would be a bug to stop on, not to pass along.
  if (transaction.value !== 0n) throw new Error(`${transaction.functionName} plan carries ETH`)
  return {
    chain: transaction.chain,
    chainId: transaction.chainId,
    to: transaction.to,
    data: transaction.data,
    value: '0',
    functionName: transaction.functionName,
    args: transaction.args.map((arg) => String(arg)),
  }
}

/** A plan's EIP-5792 batch in tool output: the chain id and values in hex, as `wallet_sendCalls` takes them. */
export type WalletCallsJson = {
  version: '2.0.0'
  chainId: `0x${string}`
  from: string
  atomicRequired: true
  calls: { to: string; data: string; value: '0x0' }[]
}

/**
 * Shows a plan's EIP-5792 batch as `wallet_sendCalls` takes it.
 *
 * @param calls - The SDK plan's `calls`.
 * @returns `{ version: '2.0.0', chainId: '0x14a34', from, atomicRequired: true, calls: [{ to, data, value: '0x0' }] }`.
 * @example
 * walletCallsJson(plan.calls).chainId // '0x14a34' on Base Sepolia
 */
export function walletCallsJson(calls: WalletCalls): WalletCallsJson {
  return {
    version: calls.version,
    chainId: `0x${calls.chainId.toString(16)}`,
    from: calls.from,
    atomicRequired: true,
    calls: calls.calls.map((call) => {
      // As in transactionJson: no vault call carries ETH.
      if (call.value !== 0n) throw new Error('a planned call carries ETH')
      return { to: call.to, data: call.data, value: '0x0' as const }
    }),
  }
}

/** The fields every plan starts with: chain, chain id, the warnings, the transaction and its batch. */
export function planEnvelope(
  vault: VaultContext,
  plan: { transaction: PlannedTransaction; calls: WalletCalls; warnings: readonly PlanWarning[] },
) {
  return {
    chain: vault.chain,
    chainId: vault.chainId,
    warning: planWarning,
    warnings: [...plan.warnings],
    transaction: transactionJson(plan.transaction),
    calls: walletCallsJson(plan.calls),
  }
}
