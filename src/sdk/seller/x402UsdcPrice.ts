import type { Address } from 'viem'
import {
  chainChoices,
  isVaultChainName,
  type VaultChainName,
  vaultChains,
  type X402AssetTransferMethod,
  type X402UsdcAsset,
} from '../chains.js'
import { VaultValidationError } from '../errors/classes.js'
import { validateAmount } from '../internal/validate.js'
import { evmAddress, parseUsdc } from '../money.js'

export type { X402AssetTransferMethod, X402UsdcAsset }

/** The price entry of an x402 payment requirement for an amount of USDC. */
export type X402UsdcPrice = {
  /** The amount in base units, as a decimal string (x402's atomic amount). */
  amount: string
  asset: Address
  extra: { name?: string; version?: string; assetTransferMethod: X402AssetTransferMethod }
}

export type X402UsdcPriceParameters = {
  chain: VaultChainName
  /** A bigint in base units, or a decimal USDC string such as `'0.01'`. Must be above zero. */
  amount: bigint | string
  /**
   * The USDC to be paid in, as `readX402UsdcAsset` reads it from the chain: a private deployment's, or
   * the public one with its EIP-712 domain (on Base Sepolia, where it is paid through Permit2, x402's
   * gas sponsoring needs the domain). Default: the chain's public USDC as listed in this package.
   */
  asset?: X402UsdcAsset | undefined
}

/** The public deployments' USDC as x402 assets, from the chain table. */
export const x402UsdcAssets: Readonly<Record<VaultChainName, X402UsdcAsset>> = Object.fromEntries(
  Object.values(vaultChains).map((entry) => [
    entry.name,
    { address: entry.addresses.usdc, ...entry.usdcPayment },
  ]),
) as Record<VaultChainName, X402UsdcAsset>

/**
 * Builds the price of an x402 payment requirement in USDC: `{ amount, asset, extra }`.
 *
 * A money price such as `'$0.01'` needs a default asset that x402 does not have for the vault's USDC
 * (and has none at all for a local chain), so sellers give an asset amount; this builds it.
 *
 * @param parameters - `chain`, `amount` (bigint base units or a decimal USDC string) and an optional `asset`.
 * @returns The price, ready for a route's `price`.
 * @throws {VaultValidationError} `INVALID_AMOUNT` for zero, negative or malformed amounts; `INVALID_ARGUMENT`
 *   for an unknown chain or a malformed asset.
 * @example
 * x402UsdcPrice({ chain: 'base', amount: '0.01' })
 * // { amount: '10000', asset: '0x8335…2913', extra: { name: 'USD Coin', version: '2', assetTransferMethod: 'eip3009' } }
 */
export function x402UsdcPrice(parameters: X402UsdcPriceParameters): X402UsdcPrice {
  const { chain, amount } = parameters ?? ({} as X402UsdcPriceParameters)
  if (!isVaultChainName(chain)) {
    // A string first: turning any other value into a message can itself throw.
    const shown =
      typeof chain === 'string' ? ` ${JSON.stringify(chain)}` : ` (${typeof chain}, not a string)`
    throw new VaultValidationError(`Unknown chain${shown}: use ${chainChoices()}.`, {
      code: 'INVALID_ARGUMENT',
      details: { field: 'chain' },
    })
  }
  const baseUnits = validateAmount(typeof amount === 'string' ? parseUsdc(amount) : amount)
  const asset =
    parameters.asset === undefined ? x402UsdcAssets[chain] : checkAsset(parameters.asset)
  return {
    amount: baseUnits.toString(),
    asset: asset.address,
    extra: {
      ...(asset.name === undefined ? {} : { name: asset.name }),
      ...(asset.version === undefined ? {} : { version: asset.version }),
      assetTransferMethod: asset.assetTransferMethod,
    },
  }
}

function checkAsset(asset: X402UsdcAsset): X402UsdcAsset {
  if (typeof asset !== 'object' || asset === null) {
    throw new VaultValidationError('`asset` must be an object.', {
      code: 'INVALID_ARGUMENT',
      details: { field: 'asset' },
    })
  }
  const method = asset.assetTransferMethod
  if (method !== 'eip3009' && method !== 'permit2') {
    throw new VaultValidationError("asset.assetTransferMethod must be 'eip3009' or 'permit2'.", {
      code: 'INVALID_ARGUMENT',
      details: { field: 'asset.assetTransferMethod' },
    })
  }
  for (const key of ['name', 'version'] as const) {
    const value = asset[key]
    if (value !== undefined && (typeof value !== 'string' || value === '')) {
      throw new VaultValidationError(`asset.${key} must be a non-empty string.`, {
        code: 'INVALID_ARGUMENT',
        details: {
          field: `asset.${key}`,
        },
      })
    }
  }
  if (method === 'eip3009' && (asset.name === undefined || asset.version === undefined)) {
    throw new VaultValidationError(
      'An EIP-3009 asset needs its EIP-712 domain name and version (asset.name, asset.version).',
      { code: 'INVALID_ARGUMENT', details: { field: 'asset' } },
    )
  }
  return { ...asset, address: evmAddress(asset.address) }
}
