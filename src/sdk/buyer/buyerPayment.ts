import { type Address, getAddress, isAddressEqual } from 'viem'
import type { VaultContext } from '../context.js'

/**
 * What x402 hands a client hook (`PaymentCreationContext` of `@x402/core/client`), reduced to the fields
 * the buyer side reads. Structural, so any x402 2.x context fits and nothing from x402 is imported at
 * run time.
 */
export type PaymentCreationHookContext = {
  readonly paymentRequired: {
    readonly x402Version: number
    readonly resource?: { readonly url?: string } | undefined
  }
  readonly selectedRequirements: {
    readonly scheme: string
    readonly network: string
    readonly asset: string
    readonly amount: string
    readonly payTo: string
  }
}

/**
 * A payment this vault can fund: x402 v2, `exact`, `upto` or `batch-settlement`, the vault's network and
 * USDC.
 */
export type BuyerPayment = {
  /**
   * USDC the payment may take from the wallet, in base units: for `upto`, its maximum; for
   * `batch-settlement`, the price of one request (what the wallet gives is the channel deposit x402
   * signs, when the channel needs one).
   */
  amount: bigint
  payTo: Address
  scheme: 'exact' | 'upto' | 'batch-settlement'
}

/** Why a payment is not one for the vault: x402 signs it as if the vault were not attached. */
export type IgnoredPaymentReason =
  | 'other-version'
  | 'other-scheme'
  | 'other-network'
  | 'other-asset'
  | 'malformed'

const addressPattern = /^0x[0-9a-fA-F]{40}$/
const amountPattern = /^[0-9]{1,78}$/

/**
 * Decides whether a payment x402 is about to sign is one the vault funds: x402 version 2, scheme `exact`,
 * `upto` or `batch-settlement`, the client's network, and the vault's USDC as the asset (compared case-insensitively). A
 * payment with a malformed amount or `payTo` is ignored too: x402 refuses it on its own terms.
 *
 * @param ctx - The vault client (network and USDC).
 * @param context - What x402's `onBeforePaymentCreation` hook receives.
 * @returns The payment, or why it is ignored.
 * @example
 * const payment = buyerPaymentOf(vault, context)
 * if ('ignored' in payment) return
 */
export function buyerPaymentOf(
  ctx: VaultContext,
  context: PaymentCreationHookContext,
): BuyerPayment | { ignored: IgnoredPaymentReason } {
  const requirements = context.selectedRequirements
  if (context.paymentRequired.x402Version !== 2) return { ignored: 'other-version' }
  const { scheme } = requirements
  if (scheme !== 'exact' && scheme !== 'upto' && scheme !== 'batch-settlement') {
    return { ignored: 'other-scheme' }
  }
  if (requirements.network !== ctx.network) return { ignored: 'other-network' }
  if (!addressPattern.test(requirements.asset)) return { ignored: 'other-asset' }
  if (!isAddressEqual(requirements.asset as Address, ctx.addresses.usdc)) {
    return { ignored: 'other-asset' }
  }
  if (!amountPattern.test(requirements.amount) || !addressPattern.test(requirements.payTo)) {
    return { ignored: 'malformed' }
  }
  return {
    amount: BigInt(requirements.amount),
    payTo: getAddress(requirements.payTo),
    scheme,
  }
}

/**
 * The channel deposit an x402 `batch-settlement` payment x402 signed carries: its `deposit.amount`, in
 * base units, or `undefined` for a voucher (which moves no money: the seller claims vouchers later from
 * the deposit) or a payload of another shape.
 *
 * @param paymentPayload - What x402's `onAfterPaymentCreation` hook receives as `paymentPayload`.
 * @returns The deposit, or `undefined`.
 */
export function channelDepositOf(paymentPayload: {
  readonly payload?: Readonly<Record<string, unknown>> | undefined
}): bigint | undefined {
  const payload = paymentPayload?.payload
  if (payload?.type !== 'deposit') return undefined
  const amount = (payload.deposit as { amount?: unknown } | undefined)?.amount
  return typeof amount === 'string' && amountPattern.test(amount) ? BigInt(amount) : undefined
}
