import type { Account, Address, Chain } from 'viem'
import { type VaultChainName, vaultChains, type X402UsdcAsset } from '../index.js'
import { circleTestUsdc } from '../sdk/shared.js'
import { AaveTestUSDCArtifact, TestUSDCArtifact } from './artifacts/index.js'
import { type DeployerClient, installAt } from './deploy.js'
import { DevnetError } from './errors.js'

/** Circle's test USDC on Base Sepolia ("USDC", version "2", EIP-3009): x402's default asset there. */
export const circleTestUsdcAddress: Address = circleTestUsdc.address

/**
 * The devnet's tokens, each at its live address: the vault's USDC is Circle's USDC ("USD Coin", version "2",
 * EIP-2612 and EIP-3009) on `base`, and Aave's test USDC (EIP-2612 with version "1", no EIP-3009, so x402 buyers pay
 * it through Permit2) on `base-sepolia`.
 */
export type DevnetTokens = {
  /** The vault's USDC (the same as `addresses.usdc`). */
  usdc: Address
  /**
   * Circle's test USDC at its live Base Sepolia address: x402's default asset there, not the vault's. Only on
   * `base-sepolia`.
   */
  circleTestUsdc?: Address
}

/**
 * Installs the vault's USDC at its live address, as the chain table describes it: a token with EIP-3009 is
 * Circle-style USDC in its EIP-712 domain ("USD Coin" on `base`); one paid through Permit2 is Aave's test USDC (on
 * `base-sepolia`). Either way the deployer's first nonce goes to the USDC, so the rest of the stack gets the same
 * addresses on every chain.
 *
 * @param client - The deployer client, connected to anvil.
 * @param chain - The chain the devnet imitates.
 * @returns Its address.
 * @example
 * const usdc = await installVaultUsdc(client, 'base-sepolia') // '0xba50…4D5f'
 * const addresses = await deployVaultStack({ client, usdc })
 */
export async function installVaultUsdc<chain extends Chain | undefined, account extends Account>(
  client: DeployerClient<chain, account>,
  chain: VaultChainName,
): Promise<Address> {
  const { addresses, usdcPayment } = vaultChains[chain]
  return usdcPayment.assetTransferMethod === 'eip3009'
    ? installCircleStyleUsdc(client, { address: addresses.usdc, ...usdcPayment })
    : installAt(client, { artifact: AaveTestUSDCArtifact, args: [], at: addresses.usdc })
}

/**
 * Installs x402's default USDC of the chain where it is not the vault's: Circle's test USDC ("USDC", version "2",
 * EIP-2612 and EIP-3009) at its live Base Sepolia address.
 *
 * @param client - The deployer client, connected to anvil.
 * @param chain - The chain the devnet imitates.
 * @returns Its address, or `undefined` on a chain where x402's default USDC is the vault's.
 * @example
 * await installX402DefaultUsdc(client, 'base-sepolia') // circleTestUsdcAddress
 */
export async function installX402DefaultUsdc<
  chain extends Chain | undefined,
  account extends Account,
>(client: DeployerClient<chain, account>, chain: VaultChainName): Promise<Address | undefined> {
  const stock = vaultChains[chain].x402DefaultUsdc
  return stock && installCircleStyleUsdc(client, stock)
}

/** Installs the devnet's Circle-style USDC (EIP-2612 and EIP-3009, version "2") under the token's name. */
async function installCircleStyleUsdc<chain extends Chain | undefined, account extends Account>(
  client: DeployerClient<chain, account>,
  token: X402UsdcAsset,
): Promise<Address> {
  // The stand-in signs in version "2" only: a token of another domain would take signatures the live one refuses.
  if (token.name === undefined || token.version !== testUsdcVersion) {
    throw new DevnetError(`The devnet has no stand-in for the USDC at ${token.address}.`, {
      code: 'INVALID_OPTIONS',
      details: { usdc: token.address, name: token.name, version: token.version },
      metaMessages: [`Its stand-in, TestUSDC, signs in EIP-712 version "${testUsdcVersion}".`],
    })
  }
  return installAt(client, { artifact: TestUSDCArtifact, args: [token.name], at: token.address })
}

/** The EIP-712 domain version of `contracts/TestUSDC.sol`, as Circle's USDC. */
const testUsdcVersion = '2'
