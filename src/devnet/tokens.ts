import type { Account, Address, Chain } from 'viem'
import { type VaultChainName, vaultChains } from '../sdk/chains.js'
import { AaveTestUSDCArtifact, TestUSDCArtifact } from './artifacts/index.js'
import { circleUsdcName, type DeployerClient, installAt } from './deploy.js'

/**
 * Which live token the devnet's vault USDC imitates: `'circle'` is Circle-style USDC ("USD Coin", EIP-712 version
 * "2", EIP-2612 and EIP-3009); `'aave-test'` is Aave's test USDC of Base Sepolia (EIP-2612 with version "1", no
 * EIP-3009, so x402 buyers pay it through Permit2).
 */
export type DevnetUsdcFlavour = 'circle' | 'aave-test'

/** The flavours, for validating options. */
export const devnetUsdcFlavours = [
  'circle',
  'aave-test',
] as const satisfies readonly DevnetUsdcFlavour[]

/** Circle's test USDC on Base Sepolia ("USDC", version "2", EIP-3009): x402's default asset there. */
export const circleTestUsdcAddress: Address = '0x036CbD53842c5426634e7929541eC2318f3dCF7e'
/** The name of Circle's test USDC, which is also its EIP-712 domain name. */
export const circleTestUsdcName = 'USDC'

/** The devnet's tokens. */
export type DevnetTokens = {
  /** The vault's USDC (the same as `addresses.usdc`). */
  usdc: Address
  /** Which live token the vault's USDC imitates. */
  usdcFlavour: DevnetUsdcFlavour
  /**
   * Circle's test USDC at its live Base Sepolia address: x402's default asset there, not the vault's. Only on
   * `base-sepolia`.
   */
  circleTestUsdc?: Address
}

/**
 * Installs the chain's tokens at their live addresses: on `base`, Circle's USDC ("USD Coin"); on `base-sepolia`,
 * Circle's test USDC ("USDC") and, for `'aave-test'`, the vault's USDC as Aave's test token.
 *
 * The `'circle'` flavour of the vault USDC on `base-sepolia` is left to the vault stack, which deploys it at an
 * address of the devnet's own: at the live address the SDK would take it for the public test-network asset, which
 * buyers pay through Permit2, while this token is paid with EIP-3009.
 *
 * @param client - The deployer client, connected to anvil.
 * @param chain - The chain the devnet imitates.
 * @param flavour - The vault USDC's flavour (`'aave-test'` only on `base-sepolia`).
 * @returns The vault USDC's address (`undefined` when the vault stack should deploy it) and Circle's test USDC's.
 * @example
 * const tokens = await installDevnetTokens(client, 'base-sepolia', 'aave-test')
 * const addresses = await deployVaultStack({ client, ...(tokens.usdc ? { usdc: tokens.usdc } : {}) })
 */
export async function installDevnetTokens<chain extends Chain | undefined, account extends Account>(
  client: DeployerClient<chain, account>,
  chain: VaultChainName,
  flavour: DevnetUsdcFlavour,
): Promise<{ usdc?: Address; circleTestUsdc?: Address }> {
  const live = vaultChains[chain].addresses.usdc
  if (chain === 'base') {
    return {
      usdc: await installAt(client, {
        artifact: TestUSDCArtifact,
        args: [circleUsdcName],
        at: live,
      }),
    }
  }
  const circleTestUsdc = await installAt(client, {
    artifact: TestUSDCArtifact,
    args: [circleTestUsdcName],
    at: circleTestUsdcAddress,
  })
  if (flavour === 'circle') return { circleTestUsdc }
  return {
    usdc: await installAt(client, { artifact: AaveTestUSDCArtifact, args: [], at: live }),
    circleTestUsdc,
  }
}
