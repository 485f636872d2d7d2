import { type Hex, type MulticallResponse, zeroAddress, zeroHash } from 'viem'
import { multicall } from 'viem/actions'
import { usdcAbi } from '../abis/index.js'
import type { VaultContext } from '../context.js'
import { VaultConfigError } from '../errors/classes.js'
import { toVaultError } from '../errors/toVaultError.js'
import { tokenDomainOf } from '../internal/permitDomain.js'
import { guard, multicallOptions } from '../internal/read.js'
import type { X402UsdcAsset } from './x402UsdcPrice.js'

/**
 * Reads how x402 buyers can pay in the client's configured USDC, in one RPC round trip: whether it has
 * EIP-3009 (probed with `authorizationState`), and its EIP-712 domain: `name()`, and the version whose
 * domain hashes to its `DOMAIN_SEPARATOR()` (`version()` when it has one; Aave's test USDC has none and
 * signs in version "1"). A token with EIP-3009 is paid with `transferWithAuthorization`; one without,
 * through Permit2, where the domain lets a buyer who never approved Permit2 sign an EIP-2612 permit
 * instead (x402's gas sponsoring).
 *
 * On Base this gives `{ name: 'USD Coin', version: '2', assetTransferMethod: 'eip3009' }`; on Base Sepolia
 * (Aave's test USDC) `{ name: 'USDC', version: '1', assetTransferMethod: 'permit2' }`. Pass the result to
 * `x402UsdcPrice({ asset })`; `createPaywall` does.
 *
 * @param ctx - The vault client.
 * @returns The asset: address, `name` and `version` (omitted for a Permit2 token whose domain cannot be
 *   read) and `assetTransferMethod`.
 * @throws {VaultConfigError} `NO_CONTRACT_CODE` when the USDC answers nothing; `INVALID_ARGUMENT` when it
 *   has EIP-3009 but no readable EIP-712 domain. {VaultRpcError} on RPC trouble.
 * @example
 * const asset = await readX402UsdcAsset(vault)
 * const price = x402UsdcPrice({ chain: vault.chain, amount: '0.01', asset })
 */
export async function readX402UsdcAsset(ctx: VaultContext): Promise<X402UsdcAsset> {
  const address = ctx.addresses.usdc
  const [name, version, separator, authorizationState] = await guard(
    ctx,
    'USDC metadata read',
    () =>
      multicall(ctx.publicClient, {
        ...multicallOptions,
        contracts: [
          { address, abi: usdcAbi, functionName: 'name' },
          { address, abi: usdcAbi, functionName: 'version' },
          { address, abi: usdcAbi, functionName: 'DOMAIN_SEPARATOR' },
          {
            address,
            abi: usdcAbi,
            functionName: 'authorizationState',
            args: [zeroAddress, zeroHash],
          },
        ],
      }),
  )
  if ([name, version, separator, authorizationState].every((r) => r.status === 'failure')) {
    // One failed round trip fails every call in it: then it is the RPC's failure, not the token's.
    const failure = toVaultError(name.status === 'failure' ? name.error : undefined, {
      addresses: ctx.addresses,
      action: 'USDC metadata read',
    })
    if (failure.category === 'rpc') throw failure
    throw new VaultConfigError(
      `The USDC at ${address} answers neither name(), version(), DOMAIN_SEPARATOR() nor authorizationState(): is it a token?`,
      { code: 'NO_CONTRACT_CODE', details: { usdc: address } },
    )
  }
  const domain = domainOf(ctx, name, version, separator)
  if (authorizationState.status === 'success') {
    if (!domain) {
      throw new VaultConfigError(
        `The USDC at ${address} has EIP-3009 but no EIP-712 domain x402 can sign in: name() and a version must give its DOMAIN_SEPARATOR().`,
        { code: 'INVALID_ARGUMENT', details: { usdc: address } },
      )
    }
    return { address, ...domain, assetTransferMethod: 'eip3009' }
  }
  // Permit2 needs no domain; name and version only enable x402's EIP-2612 gas-sponsoring extension.
  return { address, ...domain, assetTransferMethod: 'permit2' }
}

/**
 * The token's EIP-712 name and version: checked against its `DOMAIN_SEPARATOR()` when it has one (the
 * version may not be `version()`'s), else `name()` and `version()` as they are.
 */
function domainOf(
  ctx: VaultContext,
  name: MulticallResponse<string>,
  version: MulticallResponse<string>,
  separator: MulticallResponse<Hex>,
): { name: string; version: string } | undefined {
  if (name.status === 'failure') return undefined
  const stated = version.status === 'success' ? version.result : undefined
  if (separator.status === 'failure') {
    return stated === undefined ? undefined : { name: name.result, version: stated }
  }
  const domain = tokenDomainOf(
    { name: name.result, version: stated, domainSeparator: separator.result },
    ctx.chainId,
    ctx.addresses.usdc,
  )
  return domain && { name: domain.name, version: domain.version }
}
