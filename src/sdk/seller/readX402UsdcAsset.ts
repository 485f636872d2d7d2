import { zeroAddress, zeroHash } from 'viem'
import { multicall } from 'viem/actions'
import { usdcAbi } from '../abis/index.js'
import type { VaultContext } from '../context.js'
import { VaultConfigError } from '../errors/classes.js'
import { guard, multicallOptions } from '../internal/read.js'
import type { X402UsdcAsset } from './x402UsdcPrice.js'

/**
 * Reads how x402 buyers can pay in the client's configured USDC, in one RPC round trip: its EIP-712 domain
 * `name()` and `version()`, and whether it has EIP-3009 (probed with `authorizationState`). A token with
 * EIP-3009 is paid with `transferWithAuthorization`; one without, through Permit2.
 *
 * This is how a private deployment or the devnet (whose test USDC has EIP-3009, "USD Coin"/"2") gets the
 * right `extra` for its payment requirements; pass the result to `x402UsdcPrice({ asset })`.
 *
 * @param ctx - The vault client.
 * @returns The asset: address, `name`, `version` and `assetTransferMethod`.
 * @throws {VaultConfigError} `NO_CONTRACT_CODE` when the USDC answers nothing; `INVALID_ARGUMENT` when it
 *   has EIP-3009 but no readable EIP-712 name or version. {VaultRpcError} on RPC trouble.
 * @example
 * const asset = await readX402UsdcAsset(vault)
 * const price = x402UsdcPrice({ chain: vault.chain, amount: '0.01', asset })
 */
export async function readX402UsdcAsset(ctx: VaultContext): Promise<X402UsdcAsset> {
  const address = ctx.addresses.usdc
  const [name, version, authorizationState] = await guard(ctx, 'USDC metadata read', () =>
    multicall(ctx.publicClient, {
      ...multicallOptions,
      contracts: [
        { address, abi: usdcAbi, functionName: 'name' },
        { address, abi: usdcAbi, functionName: 'version' },
        {
          address,
          abi: usdcAbi,
          functionName: 'authorizationState',
          args: [zeroAddress, zeroHash],
        },
      ],
    }),
  )
  if ([name, version, authorizationState].every((result) => result.status === 'failure')) {
    throw new VaultConfigError(
      `The USDC at ${address} answers neither name(), version() nor authorizationState(): is it a token?`,
      { code: 'NO_CONTRACT_CODE', details: { usdc: address } },
    )
  }
  if (authorizationState.status === 'success') {
    if (name.status === 'failure' || version.status === 'failure') {
      throw new VaultConfigError(
        `The USDC at ${address} has EIP-3009 but no readable EIP-712 name() and version(), which x402 needs.`,
        { code: 'INVALID_ARGUMENT', details: { usdc: address } },
      )
    }
    return {
      address,
      name: name.result,
      version: version.result,
      assetTransferMethod: 'eip3009',
    }
  }
  // Permit2 needs no domain; name and version only enable x402's EIP-2612 gas-sponsoring extension.
  return {
    address,
    ...(name.status === 'success' && version.status === 'success'
      ? { name: name.result, version: version.result }
      : {}),
    assetTransferMethod: 'permit2',
  }
}
