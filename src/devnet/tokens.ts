import type { Account, Address, Chain } from 'viem'
import { type VaultChainName, vaultChains } from '../index.js'
import { AaveTestUSDCArtifact, TestUSDCArtifact } from './artifacts/index.js'
import { circleUsdcName, type DeployerClient, installAt } from './deploy.js'

/** Circle's test USDC on Base Sepolia ("USDC", version "2", EIP-3009): x402's default asset there. */
export const circleTestUsdcAddress: Address = '0x036CbD53842c5426634e7929541eC2318f3dCF7e'
/** The name of Circle's test USDC, which is also its EIP-712 domain name. */
export const circleTestUsdcName = 'USDC'

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
 * Installs the vault's USDC at its live address: Circle-style USDC ("USD Coin") on `base`, Aave's test USDC on
 * `base-sepolia`. Either way the deployer's first nonce goes to the USDC, so the rest of the stack gets the same
 * addresses on both chains.
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
  const at = vaultChains[chain].addresses.usdc
  return chain === 'base-sepolia'
    ? installAt(client, { artifact: AaveTestUSDCArtifact, args: [], at })
    : installAt(client, { artifact: TestUSDCArtifact, args: [circleUsdcName], at })
}

/**
 * Installs Circle's test USDC ("USDC", version "2", EIP-2612 and EIP-3009) at its live Base Sepolia address.
 *
 * @param client - The deployer client, connected to anvil.
 * @returns Its address.
 * @example
 * await installCircleTestUsdc(client) // '0x036CbD53842c5426634e7929541eC2318f3dCF7e'
 */
export async function installCircleTestUsdc<
  chain extends Chain | undefined,
  account extends Account,
>(client: DeployerClient<chain, account>): Promise<Address> {
  return installAt(client, {
    artifact: TestUSDCArtifact,
    args: [circleTestUsdcName],
    at: circleTestUsdcAddress,
  })
}
