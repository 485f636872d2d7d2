import { type Address, getAddress, type Hex, isAddress, isHex, parseAbi } from 'viem'
import { multicall } from 'viem/actions'
import { usdcAbi } from '../abis/usdc.js'
import type { VaultContext } from '../context.js'
import { VaultValidationError } from '../errors/classes.js'
import {
  assertReadChain,
  blockNumberCall,
  blockOf,
  blockTimestampCall,
  chainIdCall,
  guard,
  multicallOptions,
  resultValue,
} from '../internal/read.js'

/** Permit2, at the same address on every chain: x402's Permit2 payments spend one of its nonces. */
export const permit2Address: Address = '0x000000000022D473030F116dDEE9F6B43aC78BA3'
const permit2Abi = parseAbi([
  'function nonceBitmap(address owner, uint256 wordPosition) view returns (uint256)',
])

/**
 * The authorization an x402 `exact` or `upto` payment on EVM carries, as the chain keeps track of it:
 * - `eip3009`: the token's `transferWithAuthorization`, with a 32-byte nonce the token marks used
 *   (`authorizationState`); the chain refuses it from `validBefore` on;
 * - `permit2`: a Permit2 signature transfer through x402's proxy, with a nonce Permit2 marks used in
 *   its nonce bitmap; the chain refuses it after its `deadline`.
 */
export type PaymentAuthorization = {
  method: 'eip3009' | 'permit2'
  /** The token it moves. */
  token: Address
  /** The buyer that signed it. */
  payer: Address
  /** Its nonce: 32 bytes as hex for EIP-3009, a decimal string for Permit2. */
  nonce: string
  /**
   * The first block timestamp (unix seconds) at which the chain refuses it: EIP-3009's `validBefore`,
   * Permit2's `deadline + 1`.
   */
  expiresAt: bigint
}

/** What the chain says of a payment's authorization at one block. */
export type PaymentAuthorizationState = PaymentAuthorization & {
  /** Whether its nonce is spent: the payment was settled (or the buyer cancelled it). */
  used: boolean
  /** Whether the block is at or past `expiresAt`: no later block can settle it. */
  expired: boolean
  blockNumber: bigint
  blockTimestamp: bigint
}

/** An x402 v2 payment payload, as `x402Client.createPaymentPayload` returns it, reduced to what is read. */
export type PaymentPayloadLike = {
  readonly accepted?: { readonly network?: string; readonly asset?: string } | undefined
  readonly payload?: Readonly<Record<string, unknown>> | undefined
}

/**
 * The authorization an x402 payment payload carries (`payload.authorization` for EIP-3009,
 * `payload.permit2Authorization` for Permit2), or `undefined` when it carries neither in a form this
 * reads (another scheme's payload).
 *
 * @param paymentPayload - An x402 v2 payment payload.
 * @returns The authorization, or `undefined`.
 * @example
 * const authorization = paymentAuthorizationOf(paymentPayload)
 */
export function paymentAuthorizationOf(
  paymentPayload: PaymentPayloadLike,
): PaymentAuthorization | undefined {
  const payload = paymentPayload?.payload
  if (typeof payload !== 'object' || payload === null) return undefined
  const eip3009 = payload.authorization as Record<string, unknown> | undefined
  const asset = paymentPayload.accepted?.asset
  if (typeof eip3009 === 'object' && eip3009 !== null) {
    const { from, nonce, validBefore } = eip3009
    if (
      typeof asset !== 'string' ||
      !isAddress(asset, { strict: false }) ||
      typeof from !== 'string' ||
      !isAddress(from, { strict: false }) ||
      typeof nonce !== 'string' ||
      !isHex(nonce) ||
      nonce.length !== 66 ||
      !isUint(validBefore)
    ) {
      return undefined
    }
    return {
      method: 'eip3009',
      token: getAddress(asset),
      payer: getAddress(from),
      nonce: nonce.toLowerCase(),
      expiresAt: BigInt(validBefore),
    }
  }
  const permit2 = payload.permit2Authorization as Record<string, unknown> | undefined
  if (typeof permit2 === 'object' && permit2 !== null) {
    const { from, nonce, deadline } = permit2
    const token = (permit2.permitted as { token?: unknown } | undefined)?.token
    if (
      typeof token !== 'string' ||
      !isAddress(token, { strict: false }) ||
      typeof from !== 'string' ||
      !isAddress(from, { strict: false }) ||
      !isUint(nonce) ||
      !isUint(deadline)
    ) {
      return undefined
    }
    return {
      method: 'permit2',
      token: getAddress(token),
      payer: getAddress(from),
      nonce: BigInt(nonce).toString(),
      expiresAt: BigInt(deadline) + 1n,
    }
  }
  return undefined
}

/**
 * Reads, in one RPC round trip (one Multicall3 call, one block), whether an x402 payment's
 * authorization was used on chain and whether it can still be: EIP-3009's `authorizationState` on the
 * token, or the bit of Permit2's nonce bitmap. A used authorization was settled (or cancelled by the
 * buyer); an unused one that has not expired can still be settled by whoever holds it.
 *
 * Expiry is judged by the block's timestamp, as the chain judges it, not by this machine's clock.
 *
 * @param ctx - The vault client (any, read-only included).
 * @param params - `paymentPayload`: the x402 v2 payment payload (`accepted` and `payload`), on the
 *   vault client's network.
 * @returns The authorization and its state at the block read.
 * @throws {VaultValidationError} `INVALID_ARGUMENT` when the payload is of another network or carries
 *   no EIP-3009 or Permit2 authorization.
 * @example
 * const state = await vault.getPaymentAuthorizationState({ paymentPayload })
 * if (state.used) console.log('settled')
 */
export async function getPaymentAuthorizationState(
  ctx: VaultContext,
  params: { paymentPayload: PaymentPayloadLike },
): Promise<PaymentAuthorizationState> {
  const { paymentPayload } = params ?? {}
  const network = paymentPayload?.accepted?.network
  if (network !== ctx.network) {
    throw new VaultValidationError(
      `The payment is on ${typeof network === 'string' ? network : 'no network'}, not the vault client's ${ctx.network}.`,
      { code: 'INVALID_ARGUMENT', details: { field: 'paymentPayload' } },
    )
  }
  const authorization = paymentAuthorizationOf(paymentPayload)
  if (!authorization) {
    throw new VaultValidationError(
      'The payment payload carries no EIP-3009 authorization or Permit2 permit to look up.',
      { code: 'INVALID_ARGUMENT', details: { field: 'paymentPayload' } },
    )
  }
  const action = 'Payment authorization read'
  const stateCall =
    authorization.method === 'eip3009'
      ? ({
          address: authorization.token,
          abi: usdcAbi,
          functionName: 'authorizationState',
          args: [authorization.payer, authorization.nonce as Hex],
        } as const)
      : ({
          address: permit2Address,
          abi: permit2Abi,
          functionName: 'nonceBitmap',
          args: [authorization.payer, BigInt(authorization.nonce) >> 8n],
        } as const)
  const [bn, ts, chainId, state] = await guard(ctx, action, () =>
    multicall(ctx.publicClient, {
      ...multicallOptions,
      contracts: [blockNumberCall, blockTimestampCall, chainIdCall, stateCall],
    }),
  )
  const { blockNumber, blockTimestamp } = blockOf(ctx, bn, ts, action)
  assertReadChain(ctx, chainId, action)
  const value = resultValue(ctx, state as typeof state & { result: boolean | bigint }, action)
  const used =
    typeof value === 'boolean'
      ? value
      : ((value >> (BigInt(authorization.nonce) & 255n)) & 1n) === 1n
  return {
    ...authorization,
    used,
    expired: blockTimestamp >= authorization.expiresAt,
    blockNumber,
    blockTimestamp,
  }
}

/** A non-negative integer, as x402 writes its amounts, times and Permit2 nonces (decimal strings). */
function isUint(value: unknown): value is string {
  return typeof value === 'string' && /^[0-9]{1,78}$/.test(value)
}
