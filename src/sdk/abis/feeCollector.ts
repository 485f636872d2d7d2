import { parseAbi } from 'viem'

/**
 * The fee collector (`DivigentFeeCollector`): the treasury and its timelocked rotation, the fee on
 * realised yield (`FEE_BPS` = 1000, 10 %), its back-pointers and errors.
 */
export const feeCollectorAbi = parseAbi([
  'function treasury() view returns (address)',
  'function pendingTreasury() view returns (address)',
  'function treasuryRotationEffectiveAt() view returns (uint96)',
  'function FEE_BPS() view returns (uint256)',
  'function calculateFee(uint256 yieldEarned) pure returns (uint256 fee)',
  'function USDC() view returns (address)',
  'function VAULT_ROUTER() view returns (address)',
  'function collectFee(address wallet, uint256 yieldEarned) returns (uint256 feeAmount)',
  'event FeeCollected(address indexed wallet, uint256 yieldEarned, uint256 feeAmount)',
  'event TreasuryRotationProposed(address indexed currentTreasury, address indexed pendingTreasury, uint256 effectiveAt)',
  'event TreasuryRotationCancelled(address indexed cancelledPendingTreasury)',
  'event TreasuryUpdated(address indexed oldTreasury, address indexed newTreasury)',
  'error OnlyVaultRouter(address caller)',
  'error InvalidNewTreasury()',
  'error RotationAlreadyPending(address pendingTreasury)',
  'error RotationExpired(uint256 currentTime, uint256 expiredAt)',
  'error RotationNotProposed()',
  'error RotationNotReady(uint256 currentTime, uint256 effectiveAt)',
  'error SafeCastOverflowedUintDowncast(uint8 bits, uint256 value)',
  'error SafeERC20FailedOperation(address token)',
  'error ZeroRouter()',
  'error ZeroTreasury()',
  'error ZeroUsdc()',
])
