import { parseAbi } from 'viem'

/**
 * The yield oracle (`DivigentYieldOracle`): venue rates in ray (1e27 = 100 %, annualised), safety,
 * freshness, the selected venue, and its errors.
 *
 * `getAllRates()` returns index 0 = Aave, 1 = Morpho. The Base Sepolia oracle is an older revision
 * without `owner()`/`minDifferentialRay()`: the SDK only reads what both revisions have; the optional
 * getters are listed for completeness.
 */
export const oracleAbi = parseAbi([
  'struct VaultRate { address vault; uint8 vaultType; uint256 spotRate; uint256 twarRate; bool isSafe; }',
  'function getOptimalVault() view returns (address vault, uint8 vaultType, uint256 twarRate)',
  'function getAllRates() view returns (VaultRate[] rates)',
  'function isVaultSafe(uint8 vaultType) view returns (bool)',
  'function isFresh() view returns (bool)',
  'function lastObservationTime() view returns (uint256)',
  'function lastGoodObservationAge() view returns (uint256)',
  'function MAX_STALENESS() view returns (uint256)',
  'function recordObservation()',
  // optional: absent on the Base Sepolia revision
  'function owner() view returns (address)',
  'function minDifferentialRay() view returns (uint256)',
  'event ObservationRecorded(uint256 indexed timestamp, uint256 aaveRate, uint256 morphoRate)',
  'error NoSafeVault()',
  'error NoChange()',
  'error NoPendingMinDifferentialRay()',
  'error MinDifferentialRayOutOfBounds(uint256 provided, uint256 min, uint256 max)',
  'error MinDifferentialRayTimelockActive(uint256 effectiveAt)',
  'error OwnershipRenouncementDisabled()',
  'error OwnableInvalidOwner(address owner)',
  'error OwnableUnauthorizedAccount(address account)',
  'error ZeroAToken()',
  'error ZeroAavePool()',
  'error ZeroMorphoVault()',
  'error ZeroUsdc()',
])
