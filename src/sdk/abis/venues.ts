import { parseAbi } from 'viem'

/** The few Aave V3 pool reads the SDK uses (to check the deployment's wiring). */
export const aavePoolAbi = parseAbi([
  'function getReserveNormalizedIncome(address asset) view returns (uint256)',
  'function getReserveData(address asset) view returns (uint256 configuration, uint128 liquidityIndex, uint128 currentLiquidityRate, uint128 variableBorrowIndex, uint128 currentVariableBorrowRate, uint128 currentStableBorrowRate, uint40 lastUpdateTimestamp, uint16 id, address aTokenAddress, address stableDebtTokenAddress, address variableDebtTokenAddress, address interestRateStrategyAddress, uint128 accruedToTreasury, uint128 unbacked, uint128 isolationModeTotalDebt)',
])

/** The Aave aToken reads the SDK uses (an ERC-20). */
export const aTokenAbi = parseAbi([
  'function decimals() view returns (uint8)',
  'function totalSupply() view returns (uint256)',
  'function balanceOf(address account) view returns (uint256)',
])

/** The ERC-4626 reads the SDK uses on the lending vault (Morpho). */
export const erc4626Abi = parseAbi([
  'function asset() view returns (address)',
  'function totalAssets() view returns (uint256)',
  'function convertToAssets(uint256 shares) view returns (uint256 assets)',
  'function maxWithdraw(address owner) view returns (uint256)',
])

/** The Multicall3 functions the SDK uses: `aggregate3` plus block data from inside the same call. */
export const multicall3Abi = parseAbi([
  'struct Call3 { address target; bool allowFailure; bytes callData; }',
  'struct Result { bool success; bytes returnData; }',
  'function aggregate3(Call3[] calls) payable returns (Result[] returnData)',
  'function getBlockNumber() view returns (uint256 blockNumber)',
  'function getCurrentBlockTimestamp() view returns (uint256 timestamp)',
  'function getChainId() view returns (uint256 chainid)',
])
