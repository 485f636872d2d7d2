import { type Address, getAddress, type Hex, isAddress, isAddressEqual, numberToHex } from 'viem'
import { x402ExactPermit2ProxyAddress, x402UptoPermit2ProxyAddress } from '../chains.js'
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
  return signedAuthorizationOf(paymentPayload, ['exact'])
}

/** The x402 schemes whose EVM payment is one signed transfer authorisation. */
export type SignedTransferScheme = 'exact' | 'upto'

/** The Permit2 spender of each scheme: x402's proxy that settles it. */
const permit2SpenderOf: Record<SignedTransferScheme, Address> = {
  exact: x402ExactPermit2ProxyAddress,
  upto: x402UptoPermit2ProxyAddress,
}

/**
 * {@link paymentAuthorizationOf} for the schemes given: with `upto`, also an x402 `upto` payment, a
 * Permit2 `permitWitnessTransferFrom` to x402's upto proxy whose `amount` is the maximum it may take
 * (the seller settles up to it, once: its nonce is then used).
 *
 * @throws {VaultValidationError} `INVALID_ARGUMENT` for a payment of another scheme or shape.
 */
export function signedAuthorizationOf(
  paymentPayload: X402PaymentPayload,
  schemes: readonly SignedTransferScheme[],
): PaymentAuthorization {
  const accepted = paymentPayload?.accepted
  const payload = paymentPayload?.payload
  const scheme = schemes.find((known) => known === accepted?.scheme)
  const named = schemes.map((known) => `\`${known}\``).join(' or ')
  const invalid = (why: string) =>
    new VaultValidationError(`Not an x402 ${schemes.join(' or ')} EVM payment: ${why}.`, {
      code: 'INVALID_ARGUMENT',
      details: { field: 'paymentPayload' },
    })
  if (scheme === undefined || typeof payload !== 'object' || payload === null) {
    throw invalid(`it is not an x402 ${named} payment with a payload`)
  }
  const network = accepted.network
  if (typeof network !== 'string' || !/^eip155:\d+$/.test(network)) {
    throw invalid('its network is not an EVM network (eip155:<chain id>)')
  }
  const eip3009 = payload.authorization as Record<string, unknown> | undefined
  // upto moves the money through Permit2 only.
  if (scheme === 'exact' && typeof eip3009 === 'object' && eip3009 !== null) {
    return {
      method: 'eip3009',
      network,
      asset: address(accepted.asset, 'accepted.asset', invalid),
      payer: address(eip3009.from, 'authorization.from', invalid),
      payTo: address(eip3009.to, 'authorization.to', invalid),
      amount: integer(eip3009.value, 'authorization.value', invalid),
      nonce: bytes32(eip3009.nonce, 'authorization.nonce', invalid),
      validBefore: integer(eip3009.validBefore, 'authorization.validBefore', invalid),
    }
  }
  const permit2 = payload.permit2Authorization as Record<string, unknown> | undefined
  if (typeof permit2 === 'object' && permit2 !== null) {
    const permitted = (permit2.permitted ?? {}) as Record<string, unknown>
    const witness = (permit2.witness ?? {}) as Record<string, unknown>
    const spender = address(permit2.spender, 'permit2Authorization.spender', invalid)
    if (!isAddressEqual(spender, permit2SpenderOf[scheme])) {
      throw invalid(`its Permit2 spender ${spender} is not x402's ${scheme} Permit2 proxy`)
    }
    const nonce = integer(permit2.nonce, 'permit2Authorization.nonce', invalid)
    if (nonce > maxUint256) throw invalid('permit2Authorization.nonce does not fit in uint256')
    return {
      method: 'permit2',
      network,
      asset: address(permitted.token, 'permit2Authorization.permitted.token', invalid),
      payer: address(permit2.from, 'permit2Authorization.from', invalid),
      payTo: address(witness.to, 'permit2Authorization.witness.to', invalid),
      amount: integer(permitted.amount, 'permit2Authorization.permitted.amount', invalid),
      nonce: numberToHex(nonce, { size: 32 }),
      validBefore: integer(permit2.deadline, 'permit2Authorization.deadline', invalid) + 1n,
    }
  }
  throw invalid(
    scheme === 'exact'
      ? 'its payload has neither an EIP-3009 `authorization` nor a `permit2Authorization`'
      : 'its payload has no `permit2Authorization`',
  )
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

type Invalid = (why: string) => VaultValidationError

function address(value: unknown, field: string, invalid: Invalid): Address {
  if (typeof value !== 'string' || !isAddress(value, { strict: false })) {
    throw invalid(`${field} is not an address`)
  }
  return getAddress(value)
}

function integer(value: unknown, field: string, invalid: Invalid): bigint {
  if (typeof value === 'string' && /^\d{1,78}$/.test(value)) return BigInt(value)
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value)
  throw invalid(`${field} is not a whole number`)
}

function bytes32(value: unknown, field: string, invalid: Invalid): Hex {
  if (typeof value !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(value)) {
    throw invalid(`${field} is not 32 bytes of hex`)
  }
  return value.toLowerCase() as Hex
}
