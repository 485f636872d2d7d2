import { type Address, getAddress, type Hex, isAddress, isAddressEqual, numberToHex } from 'viem'
import { x402ExactPermit2ProxyAddress } from '../chains.js'
import type { VaultContext } from '../context.js'
import { VaultValidationError } from '../errors/classes.js'

/** How an x402 `exact` EVM payment moves the money: the token's EIP-3009, or Permit2 through x402's proxy. */
export type PaymentAuthorizationMethod = 'eip3009' | 'permit2'

/**
 * An x402 payment as its payment payload carries it (`PaymentPayload` of `@x402/core`, version 2): the
 * requirements the buyer accepted, and the scheme's signed payload. Structural, so any x402 2.x object fits.
 */
export type X402PaymentPayload = {
  readonly accepted: {
    readonly scheme: string
    readonly network: string
    readonly asset: string
    readonly payTo: string
    readonly amount: string
  }
  readonly payload: Readonly<Record<string, unknown>>
}

/** What an x402 `exact` EVM payment's signature authorises, as read from its payment payload. */
export type PaymentAuthorization = {
  method: PaymentAuthorizationMethod
  /** The x402 network, `eip155:<chain id>`. */
  network: string
  /** The token paid in. */
  asset: Address
  /** Who pays: the signer (EIP-3009's `from`, Permit2's owner). */
  payer: Address
  /** Who is paid, as signed (EIP-3009's `to`, the Permit2 witness's `to`). */
  payTo: Address
  /** Base units. */
  amount: bigint
  /** The authorisation's nonce, as 32 bytes (a Permit2 nonce is a uint256). */
  nonce: Hex
  /**
   * The first block time (Unix seconds) at which it can no longer be settled: EIP-3009's `validBefore`,
   * Permit2's `deadline` + 1. Past it, an unused authorisation can never move the money.
   */
  validBefore: bigint
}

/** A nonce Permit2 accepts: a uint256. */
const maxUint256 = 2n ** 256n - 1n

/**
 * Reads what an x402 `exact` EVM payment authorises from its payment payload: the method (EIP-3009 or
 * Permit2), the payer, the payee, the token, the amount, the nonce and until when it can be settled.
 * Nothing is read from the chain, and nothing of x402 is imported.
 *
 * @param paymentPayload - The x402 payment payload (`accepted` and `payload`), as x402's hooks hand it.
 * @returns The authorisation.
 * @throws {VaultValidationError} `INVALID_ARGUMENT` for a payment of another scheme or shape (such as
 *   `upto`, or a payload without an EIP-3009 or Permit2 authorisation).
 * @example
 * const { payer, nonce, validBefore } = paymentAuthorizationOf(context.paymentPayload)
 */
export function paymentAuthorizationOf(paymentPayload: X402PaymentPayload): PaymentAuthorization {
  const accepted = paymentPayload?.accepted
  const payload = paymentPayload?.payload
  if (accepted?.scheme !== 'exact' || typeof payload !== 'object' || payload === null) {
    throw invalid('it is not an x402 `exact` payment with a payload')
  }
  const network = accepted.network
  if (typeof network !== 'string' || !/^eip155:\d+$/.test(network)) {
    throw invalid('its network is not an EVM network (eip155:<chain id>)')
  }
  const eip3009 = payload.authorization as Record<string, unknown> | undefined
  if (typeof eip3009 === 'object' && eip3009 !== null) {
    return {
      method: 'eip3009',
      network,
      asset: address(accepted.asset, 'accepted.asset'),
      payer: address(eip3009.from, 'authorization.from'),
      payTo: address(eip3009.to, 'authorization.to'),
      amount: integer(eip3009.value, 'authorization.value'),
      nonce: bytes32(eip3009.nonce, 'authorization.nonce'),
      validBefore: integer(eip3009.validBefore, 'authorization.validBefore'),
    }
  }
  const permit2 = payload.permit2Authorization as Record<string, unknown> | undefined
  if (typeof permit2 === 'object' && permit2 !== null) {
    const permitted = (permit2.permitted ?? {}) as Record<string, unknown>
    const witness = (permit2.witness ?? {}) as Record<string, unknown>
    const spender = address(permit2.spender, 'permit2Authorization.spender')
    if (!isAddressEqual(spender, x402ExactPermit2ProxyAddress)) {
      throw invalid(`its Permit2 spender ${spender} is not x402's exact Permit2 proxy`)
    }
    const nonce = integer(permit2.nonce, 'permit2Authorization.nonce')
    if (nonce > maxUint256) throw invalid('permit2Authorization.nonce does not fit in uint256')
    return {
      method: 'permit2',
      network,
      asset: address(permitted.token, 'permit2Authorization.permitted.token'),
      payer: address(permit2.from, 'permit2Authorization.from'),
      payTo: address(witness.to, 'permit2Authorization.witness.to'),
      amount: integer(permitted.amount, 'permit2Authorization.permitted.amount'),
      nonce: numberToHex(nonce, { size: 32 }),
      validBefore: integer(permit2.deadline, 'permit2Authorization.deadline') + 1n,
    }
  }
  throw invalid('its payload has neither an EIP-3009 `authorization` nor a `permit2Authorization`')
}

/**
 * {@link paymentAuthorizationOf}, checked to be on the vault client's chain.
 *
 * @throws {VaultValidationError} `INVALID_ARGUMENT` for a payment of another shape, or on another network.
 */
export function paymentAuthorizationOn(
  ctx: Pick<VaultContext, 'network'>,
  paymentPayload: X402PaymentPayload,
): PaymentAuthorization {
  const authorization = paymentAuthorizationOf(paymentPayload)
  if (authorization.network !== ctx.network) {
    throw new VaultValidationError(
      `The payment is on ${authorization.network}, not on this vault client's ${ctx.network}.`,
      { code: 'INVALID_ARGUMENT', details: { field: 'paymentPayload.accepted.network' } },
    )
  }
  return authorization
}

function invalid(why: string): VaultValidationError {
  return new VaultValidationError(`Not an x402 exact EVM payment: ${why}.`, {
    code: 'INVALID_ARGUMENT',
    details: { field: 'paymentPayload' },
  })
}

function address(value: unknown, field: string): Address {
  if (typeof value !== 'string' || !isAddress(value, { strict: false })) {
    throw invalid(`${field} is not an address`)
  }
  return getAddress(value)
}

function integer(value: unknown, field: string): bigint {
  if (typeof value === 'string' && /^\d{1,78}$/.test(value)) return BigInt(value)
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value)
  throw invalid(`${field} is not a whole number`)
}

function bytes32(value: unknown, field: string): Hex {
  if (typeof value !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(value)) {
    throw invalid(`${field} is not 32 bytes of hex`)
  }
  return value.toLowerCase() as Hex
}
