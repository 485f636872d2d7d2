import { type Account, type Address, maxUint256 } from 'viem'
import type { VaultContext, VaultWalletClient } from '../context.js'
import { VaultConfigError, VaultValidationError } from '../errors/classes.js'
import { evmAddress, parseUsdc } from '../money.js'

/** The default slippage tolerance, in basis points. */
export const DEFAULT_SLIPPAGE_BPS = 10
/** The largest slippage tolerance accepted, in basis points (10 %). */
export const MAX_SLIPPAGE_BPS = 1000

/** Checks a slippage tolerance: an integer from 0 to 1000 bps; `undefined` means the default (10). */
export function validateSlippage(value: unknown): number {
  if (value === undefined) return DEFAULT_SLIPPAGE_BPS
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    value < 0 ||
    value > MAX_SLIPPAGE_BPS
  ) {
    throw new VaultValidationError(
      `Invalid slippageBps ${describe(value)}: use an integer from 0 to ${MAX_SLIPPAGE_BPS} (basis points; 10 = 0.1 %).`,
      { code: 'INVALID_SLIPPAGE', details: { received: describe(value) } },
    )
  }
  return value
}

/** Checks an amount in base units: a bigint above zero that fits uint256. */
export function validateAmount(value: unknown, name = 'amount'): bigint {
  if (typeof value !== 'bigint') {
    throw new VaultValidationError(
      `${name} must be a bigint in base units (6 decimals); convert decimal text with parseUsdc('12.5').`,
      { code: 'INVALID_AMOUNT', details: { field: name, received: typeof value } },
    )
  }
  if (value <= 0n) {
    throw new VaultValidationError(`${name} must be greater than zero.`, {
      code: 'INVALID_AMOUNT',
      details: {
        field: name,
        received: value,
      },
    })
  }
  if (value > maxUint256) {
    throw new VaultValidationError(`${name} does not fit in uint256.`, {
      code: 'INVALID_AMOUNT',
      details: { field: name },
    })
  }
  return value
}

/** Checks a bound or allowance in base units where zero is meaningful: a bigint from 0 to 2^256 − 1. */
export function validateUint256(value: unknown, name: string): bigint {
  if (typeof value !== 'bigint' || value < 0n || value > maxUint256) {
    throw new VaultValidationError(
      `${name} must be a bigint from 0 to 2^256 − 1, in base units (6 decimals).`,
      {
        code: 'INVALID_AMOUNT',
        details: { field: name, ...(typeof value === 'bigint' ? {} : { received: typeof value }) },
      },
    )
  }
  return value
}

/**
 * Reads a USDC amount option given as a bigint in base units or a decimal USDC string (`'12.5'`), where
 * zero is meaningful (a reserve, a threshold).
 *
 * @returns Base units, from 0 to 2^256 − 1.
 * @throws {VaultValidationError} `INVALID_AMOUNT` naming the option.
 */
export function validateUsdcOption(value: unknown, name: string): bigint {
  if (typeof value === 'bigint' && value >= 0n && value <= maxUint256) return value
  if (typeof value !== 'string') {
    throw new VaultValidationError(
      `${name} must be a decimal USDC string such as '12.5', or a bigint of base units from 0 to 2^256 − 1.`,
      {
        code: 'INVALID_AMOUNT',
        details: { field: name, ...(typeof value === 'bigint' ? {} : { received: typeof value }) },
      },
    )
  }
  try {
    return parseUsdc(value)
  } catch (error) {
    throw new VaultValidationError(`${name}: ${(error as Error).message}`, {
      code: 'INVALID_AMOUNT',
      details: (error as VaultValidationError).details,
    })
  }
}

/** Checks an account address (checksummed, non-zero). */
export function validateWallet(value: unknown, name = 'wallet'): Address {
  if (typeof value !== 'string') {
    throw new VaultValidationError(`${name} must be an address string (0x + 40 hex digits).`, {
      code: 'INVALID_ADDRESS',
      details: { field: name },
    })
  }
  return evmAddress(value)
}

/** Resolves the account that signs a write: the `account` parameter, else the wallet client's account. */
export function resolveAccount(
  ctx: VaultContext,
  account: Account | Address | undefined,
): { walletClient: VaultWalletClient; account: Account | Address; address: Address } {
  const walletClient = ctx.walletClient
  if (!walletClient) {
    throw new VaultConfigError(
      'This write needs a wallet client: pass `walletClient` to createVaultClient (or use the plan… methods, which need none).',
      { code: 'WALLET_CLIENT_REQUIRED' },
    )
  }
  const chosen = account ?? walletClient.account
  if (!chosen) {
    throw new VaultConfigError(
      'No account to sign with: create the wallet client with an `account`, or pass `account` to this call.',
      { code: 'ACCOUNT_REQUIRED' },
    )
  }
  const address = typeof chosen === 'string' ? validateWallet(chosen, 'account') : chosen.address
  return { walletClient, account: chosen, address }
}

/** Applies a slippage tolerance: `value × (10000 − bps) / 10000`, rounded down. */
export function applySlippage(value: bigint, slippageBps: number): bigint {
  return (value * BigInt(10_000 - slippageBps)) / 10_000n
}

function describe(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean')
    return String(value)
  if (typeof value === 'string')
    return JSON.stringify(value.length > 20 ? `${value.slice(0, 20)}...` : value)
  return typeof value
}
