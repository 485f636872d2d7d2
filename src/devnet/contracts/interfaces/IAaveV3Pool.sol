// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice The subset of Aave V3's pool interface that the vault uses, with Aave's own shapes.
interface IAaveV3Pool {
    /// @dev Aave V3's legacy `ReserveData` (the return shape of `getReserveData` on Base).
    struct ReserveDataLegacy {
        uint256 configuration;
        uint128 liquidityIndex;
        uint128 currentLiquidityRate;
        uint128 variableBorrowIndex;
        uint128 currentVariableBorrowRate;
        uint128 currentStableBorrowRate;
        uint40 lastUpdateTimestamp;
        uint16 id;
        address aTokenAddress;
        address stableDebtTokenAddress;
        address variableDebtTokenAddress;
        address interestRateStrategyAddress;
        uint128 accruedToTreasury;
        uint128 unbacked;
        uint128 isolationModeTotalDebt;
    }

    /// @dev Aave wraps the configuration bitmap in a one-field struct.
    struct ReserveConfigurationMap {
        uint256 data;
    }

    function supply(address asset, uint256 amount, address onBehalfOf, uint16 referralCode) external;

    function withdraw(address asset, uint256 amount, address to) external returns (uint256);

    function getReserveData(address asset) external view returns (ReserveDataLegacy memory);

    function getConfiguration(address asset) external view returns (ReserveConfigurationMap memory);

    function getReserveNormalizedIncome(address asset) external view returns (uint256);
}
