// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice The vault oracle's interface. Rates are annualised, in ray (1e27 = 100 %).
interface IVaultOracle {
    /// @dev One venue's rates; `getAllRates` returns Aave at index 0 and Morpho at index 1.
    struct VaultRate {
        address vault;
        uint8 vaultType;
        uint256 spotRate;
        uint256 twarRate;
        bool isSafe;
    }

    function getOptimalVault() external view returns (address vault, uint8 vaultType, uint256 twarRate);

    function getAllRates() external view returns (VaultRate[] memory);

    function isVaultSafe(uint8 vaultType) external view returns (bool);

    function isFresh() external view returns (bool);

    function lastObservationTime() external view returns (uint256);

    function lastGoodObservationAge() external view returns (uint256);

    function recordObservation() external;
}
