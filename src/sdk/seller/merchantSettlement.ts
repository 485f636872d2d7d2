import { type Address, type Hash, isAddressEqual } from 'viem'
import type { VaultContext } from '../context.js'
import type { MerchantSettlement } from '../sweep/settlementRecord.js'

/**
 * What x402 hands an after-settle hook (`SettleResultContext` of `@x402/core/server`), reduced to the fields
 * the sweeper reads. Structural, so any x402 2.x context fits and nothing from x402 is imported at run time.
 */
export type SettlementHookContext = {
  readonly requirements: {
    readonly scheme: string
    readonly network: string
    readonly asset: string
    readonly amount: string
    readonly payTo: string
  }
  readonly result: {
    readonly success: boolean
    readonly transaction: string
    readonly network?: string
    readonly payer?: string
    readonly amount?: string
  }
  /** The payment x402 settled: for `batch-settlement`, its `payload.type` says which operation it was. */
  readonly paymentPayload?:
    | { readonly payload?: { readonly type?: unknown } | undefined }
    | undefined
}

/** Why a settlement is not income for this merchant. */
export type IgnoredSettlementReason =
  | 'not-successful'
  | 'no-transaction'
  | 'other-scheme'
  | 'other-payee'
  | 'other-network'
  | 'other-asset'

const transactionHashPattern = /^0x[0-9a-fA-F]{64}$/
const addressPattern = /^0x[0-9a-fA-F]{40}$/

/**
 * Decides whether an x402 settlement paid `wallet` in the vault's USDC: a success with a
 * well-formed transaction hash, scheme `exact`, `upto` or a `batch-settlement` settle, and `payTo`,
 * network and asset matching the client (addresses compared case-insensitively). Of x402's `batch-settlement`, only a settlement (`payload.type`
 * `settle`, the escrow's transfer to `payTo`) is income: a voucher reports success with an empty hash and
 * moves nothing, and a deposit (or a refund) moves the buyer's money into (or out of) the escrow.
 *
 * @param ctx - The vault client (its network and USDC).
 * @param wallet - The merchant wallet.
 * @param context - The after-settle hook context.
 * @returns The settlement, or `{ ignored }` with the reason.
 * @example
 * const settlement = merchantSettlementOf(vault, merchant, context)
 * if (!('ignored' in settlement)) console.log(settlement.txHash)
 */
export function merchantSettlementOf(
  ctx: Pick<VaultContext, 'network' | 'addresses'>,
  wallet: Address,
  context: SettlementHookContext,
): MerchantSettlement | { ignored: IgnoredSettlementReason } {
  const { requirements, result } = context
  if (result?.success !== true) return { ignored: 'not-successful' }
  if (typeof result.transaction !== 'string' || !transactionHashPattern.test(result.transaction)) {
    return { ignored: 'no-transaction' }
  }
  const scheme = requirements?.scheme
  const batchSettle =
    scheme === 'batch-settlement' && context.paymentPayload?.payload?.type === 'settle'
  if (scheme !== 'exact' && scheme !== 'upto' && !batchSettle) return { ignored: 'other-scheme' }
  if (!sameAddress(requirements.payTo, wallet)) return { ignored: 'other-payee' }
  if (requirements.network !== ctx.network) return { ignored: 'other-network' }
  if (!sameAddress(requirements.asset, ctx.addresses.usdc)) return { ignored: 'other-asset' }
  const settled = result.amount ?? requirements.amount
  return {
    txHash: result.transaction.toLowerCase() as Hash,
    amount: typeof settled === 'string' && /^\d+$/.test(settled) ? BigInt(settled) : 0n,
    payer:
      typeof result.payer === 'string' && addressPattern.test(result.payer)
        ? (result.payer as Address)
        : undefined,
    scheme,
  }
}

function sameAddress(value: unknown, expected: Address): boolean {
  return (
    typeof value === 'string' &&
    addressPattern.test(value) &&
    isAddressEqual(value as Address, expected)
  )
}
