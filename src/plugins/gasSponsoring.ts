import type { X402UsdcAsset } from '../index.js'
import { importPeer } from '../sdk/shared.js'

/**
 * The route extensions that let a buyer who never approved Permit2 pay with no transaction of its own:
 * x402's EIP-2612 gas-sponsoring declaration, for an asset paid through Permit2 whose EIP-712 domain is
 * known (x402's client signs the token's permit for Permit2 in that domain, and the facilitator submits it
 * with the payment through the Permit2 proxy's `settleWithPermit`). Nothing for an EIP-3009 asset.
 *
 * `@x402/extensions` (an optional peer) is loaded here, only then: its root brings sign-in-with-x, JWT and JSON-schema code
 * that take over half a second to load, which a seller on Base (EIP-3009) never needs.
 *
 * @param asset - The route's asset, as `readX402UsdcAsset` read it.
 * @returns The extensions for the route config, or `undefined`.
 * @example
 * const extensions = await gasSponsoringExtensions(asset) // { eip2612GasSponsoring: { info, schema } }
 */
export async function gasSponsoringExtensions(
  asset: X402UsdcAsset,
): Promise<Record<string, unknown> | undefined> {
  if (asset.assetTransferMethod !== 'permit2') return undefined
  // Without the domain x402's client skips sponsoring anyway: declaring it would promise nothing.
  if (asset.name === undefined || asset.version === undefined) return undefined
  // An optional peer: a seller on Base Sepolia who lacks it is told which package to install.
  const { declareEip2612GasSponsoringExtension } = await importPeer(
    () => import('@x402/extensions'),
    {
      feature: 'Gas sponsoring for Permit2 payments (createPaywall)',
      packages: ['@x402/extensions'],
    },
  )
  return declareEip2612GasSponsoringExtension()
}
