import { MockAavePoolArtifact } from './artifacts/MockAavePool.js'
import { MockMorphoVaultArtifact } from './artifacts/MockMorphoVault.js'
import { VaultOracleArtifact } from './artifacts/VaultOracle.js'

/**
 * The ABIs of the devnet's contracts that carry test knobs, keyed like `devnet.addresses`: the Aave
 * pool and Morpho vault stand-ins (rates, liquidity, caps, reverts, losses) and the oracle
 * (`setObservationsPaused`, and the devnet-only views `checkpointCount` and `getCheckpoint`). The
 * deployer account owns the knobs. They are not part of the live contracts' interface.
 *
 * @example
 * const deployer = createWalletClient({
 *   account: privateKeyToAccount(devnet.accounts.deployer.privateKey),
 *   chain: devnet.viemChain,
 *   transport: http(devnet.rpcUrl),
 * })
 * await deployer.writeContract({
 *   address: devnet.addresses.morphoVault,
 *   abi: devnetAbis.morphoVault,
 *   functionName: 'setRateRay',
 *   args: [6n * 10n ** 25n], // 6 %
 * })
 */
export const devnetAbis = {
  aavePool: MockAavePoolArtifact.abi,
  morphoVault: MockMorphoVaultArtifact.abi,
  oracle: VaultOracleArtifact.abi,
} as const
