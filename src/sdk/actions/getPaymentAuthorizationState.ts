import { multicall } from 'viem/actions'
import { usdcAbi } from '../abis/usdc.js'
import { permit2Abi } from '../abis/x402.js'
import { permit2Address } from '../chains.js'
import type { VaultContext } from '../context.js'
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
import {
  type PaymentAuthorization,
  paymentAuthorizationOn,
  type X402PaymentPayload,
} from './paymentAuthorization.js'

/**
 * Where an x402 payment's authorisation stands on chain:
 * - `used`: the token (EIP-3009) or Permit2 has marked its nonce used: the payment was settled, or the payer
 *   cancelled the authorisation (`findPaymentSettlement` tells which);
 * - `unused`: not used, and still valid: it can be settled until `validBefore`;
 * - `expired`: not used, and the chain's time has reached `validBefore`: it can never move the money.
 */
export type PaymentAuthorizationStatus = 'used' | 'unused' | 'expired'

/** What `getPaymentAuthorizationState` read: the state, the authorisation, and the block it read them at. */
export type PaymentAuthorizationState = {
  state: PaymentAuthorizationStatus
  authorization: PaymentAuthorization
  blockNumber: bigint
  /** The block's time, Unix seconds. */
  blockTimestamp: bigint
}

/** What `getPaymentAuthorizationState` takes: the payment. */
export type GetPaymentAuthorizationStateParameters = {
  /** The x402 payment payload (`accepted` and `payload`), as x402's hooks hand it or its client made it. */
  paymentPayload: X402PaymentPayload
}

/**
 * Reads whether an x402 `exact` payment's authorisation has been used on chain, in one RPC round trip: the
 * token's EIP-3009 `authorizationState(payer, nonce)`, or the bit of Permit2's `nonceBitmap(payer, nonce >> 8)`,
 * with the block's number and time (one `eth_call`). An unused authorisation is `expired` once the block's
 * time has reached its `validBefore`: block times never go back, so it can never be settled.
 *
 * @param ctx - The vault client (no wallet client needed); its chain must be the payment's.
 * @param params - `paymentPayload`.
 * @returns `{ state, authorization, blockNumber, blockTimestamp }`.
 * @throws {VaultValidationError} `INVALID_ARGUMENT` for a payment that is not x402 `exact` on this chain;
 *   {VaultRpcError} when the RPC fails; {VaultConfigError} `CHAIN_MISMATCH` when it serves another chain.
 * @example
 * const { state } = await vault.getPaymentAuthorizationState({ paymentPayload: context.paymentPayload })
 * if (state === 'used') console.log('settled (or cancelled): do not pay again')
 */
export async function getPaymentAuthorizationState(
  ctx: VaultContext,
  params: GetPaymentAuthorizationStateParameters,
): Promise<PaymentAuthorizationState> {
  return readAuthorizationState(ctx, paymentAuthorizationOn(ctx, params?.paymentPayload))
}

/**
 * {@link getPaymentAuthorizationState} of an authorisation already read from its payment (an `exact`
 * one, or an `upto` one: its Permit2 nonce and deadline, as `signedAuthorizationOf` reads them).
 *
 * @param ctx - The vault client; its chain must be the authorisation's (not checked here).
 * @param authorization - The authorisation.
 */
export async function readAuthorizationState(
  ctx: VaultContext,
  authorization: PaymentAuthorization,
): Promise<PaymentAuthorizationState> {
  const action = 'Payment authorisation read'
  const stateCall =
    authorization.method === 'eip3009'
      ? ({
          address: authorization.asset,
          abi: usdcAbi,
          functionName: 'authorizationState',
          args: [authorization.payer, authorization.nonce],
        } as const)
      : ({
          address: permit2Address,
          abi: permit2Abi,
          functionName: 'nonceBitmap',
          args: [authorization.payer, BigInt(authorization.nonce) >> 8n],
        } as const)
  const [numberResult, timestampResult, chainIdResult, stateResult] = await guard(ctx, action, () =>
    multicall(ctx.publicClient, {
      ...multicallOptions,
      contracts: [blockNumberCall, blockTimestampCall, chainIdCall, stateCall],
    }),
  )
  const { blockNumber, blockTimestamp } = blockOf(ctx, numberResult, timestampResult, action)
  assertReadChain(ctx, chainIdResult, action)
  const raw = resultValue(ctx, stateResult, action) as boolean | bigint
  const used =
    typeof raw === 'boolean' ? raw : ((raw >> (BigInt(authorization.nonce) & 255n)) & 1n) === 1n
  const state: PaymentAuthorizationStatus = used
    ? 'used'
    : blockTimestamp >= authorization.validBefore
      ? 'expired'
      : 'unused'
  return { state, authorization, blockNumber, blockTimestamp }
}
