import type { Account, Address, Chain } from 'viem'
import { type VaultChainName, vaultChains } from '../index.js'
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
 * Installs the vault's USDC at its live address where the devnet keeps it there: Circle-style USDC ("USD Coin") on
 * `base`; Aave's test USDC on `base-sepolia` for `'aave-test'`.
 *
 * The `'circle'` flavour on `base-sepolia` is left to the vault stack, which deploys it at an address of the
 * devnet's own: at the live address the SDK would take it for the public test-network asset, which buyers pay
 * through Permit2, while this token is paid with EIP-3009. Either way the deployer's first nonce goes to the USDC,
 * so the rest of the stack gets the same addresses on both chains.
 *
 * @param client - The deployer client, connected to anvil.
 * @param chain - The chain the devnet imitates.
 * @param flavour - The vault USDC's flavour (`'aave-test'` only on `base-sepolia`).
 * @returns Its address, or `undefined` when the vault stack should deploy it.
 * @example
 * const usdc = await installVaultUsdc(client, 'base-sepolia', 'aave-test') // '0xba50…4D5f'
 * const addresses = await deployVaultStack({ client, ...(usdc ? { usdc } : {}) })
 */
export async function installVaultUsdc<chain extends Chain | undefined, account extends Account>(
  client: DeployerClient<chain, account>,
  chain: VaultChainName,
  flavour: DevnetUsdcFlavour,
): Promise<Address | undefined> {
  const at = vaultChains[chain].addresses.usdc
  if (flavour === 'aave-test')
    return installAt(client, { artifact: AaveTestUSDCArtifact, args: [], at })
  if (chain === 'base') {
    return installAt(client, { artifact: TestUSDCArtifact, args: [circleUsdcName], at })
  }
  return undefined
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
