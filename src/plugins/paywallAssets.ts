import type { Address } from 'viem'
import {
  readX402UsdcAsset,
  type VaultChainName,
  type VaultClient,
  vaultChains,
  type X402UsdcAsset,
} from '../index.js'
import { gasSponsoringExtensions } from './gasSponsoring.js'

/** What the routes accept, and the extensions that go with it. */
export type PaywallAssets = {
  /** The vault's USDC, then the stock buyer's asset where there is one. */
  assets: [X402UsdcAsset, ...X402UsdcAsset[]]
  /** x402's EIP-2612 gas sponsoring on a Permit2 asset whose domain is known; else none. */
  extensions: Record<string, unknown> | undefined
}

/**
 * Reads the assets the routes accept, in one RPC round trip through the SDK (`readX402UsdcAsset`):
 * read, not assumed, as the token decides EIP-3009 or Permit2, and its EIP-712 domain (x402 needs it
 * for EIP-3009, and for gas sponsoring on Permit2). Beside it, x402's default USDC where that is not the
 * vault's, so that a stock buyer can pay.
 *
 * @param vault - The vault client.
 * @param acceptDefaultTestUsdc - The checked option: `false` accepts the vault's USDC alone.
 * @returns The assets and the routes' extensions.
 * @throws The SDK's errors of `readX402UsdcAsset`; `PEER_DEPENDENCY_MISSING` for a Permit2 asset
 *   without `@x402/extensions`.
 * @example
 * const { assets, extensions } = await readPaywallAssets(vault, undefined)
 */
export async function readPaywallAssets(
  vault: VaultClient,
  acceptDefaultTestUsdc: boolean | undefined,
): Promise<PaywallAssets> {
  const asset = await readX402UsdcAsset(vault)
  const extensions = await gasSponsoringExtensions(asset)
  const stock = stockBuyerAsset(vault.chain, vault.addresses.usdc, acceptDefaultTestUsdc)
  return { assets: stock ? [asset, stock] : [asset], extensions }
}

/**
 * The second asset a route accepts, so that a stock buyer can pay: x402's default USDC where it is
 * not the vault's (on base-sepolia only).
 *
 * @param chain - The vault's chain.
 * @param vaultUsdc - The vault's USDC.
 * @param accept - `acceptDefaultTestUsdc`: `false` turns it off; unset or `true` accept it.
 * @returns The asset, or `undefined`.
 * @example
 * stockBuyerAsset('base-sepolia', vault.addresses.usdc, undefined) // Circle's test USDC
 */
export function stockBuyerAsset(
  chain: VaultChainName,
  vaultUsdc: Address,
  accept: boolean | undefined,
): X402UsdcAsset | undefined {
  const stock = vaultChains[chain].x402DefaultUsdc
  if (stock === undefined || accept === false) return undefined
  // A private deployment whose USDC is that token already accepts it.
  if (vaultUsdc.toLowerCase() === stock.address.toLowerCase()) return undefined
  return stock
}
