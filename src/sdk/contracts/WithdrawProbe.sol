// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @dev The two router functions the probe calls.
interface IVaultRouterWithdraw {
    function previewWithdrawNet(uint256 desiredNetUsdc, address wallet) external view returns (uint256);
    function withdraw(uint256 shares, address wallet, uint256 minUsdcOut) external returns (uint256);
}

/// @notice Never deployed. A withdrawal plan puts this code at the wallet's address for one simulation
///         (an `eth_simulateV1` state override), so the router's quote for a net USDC amount and the
///         withdrawal of the quoted shares run in one call, as the wallet, without a round trip between.
contract WithdrawProbe {
    /// @return shares The shares `previewWithdrawNet(net, wallet)` quoted and the withdrawal burnt.
    /// @return usdcOut The USDC the withdrawal paid the wallet.
    function withdrawNet(address router, uint256 net) external returns (uint256 shares, uint256 usdcOut) {
        shares = IVaultRouterWithdraw(router).previewWithdrawNet(net, address(this));
        usdcOut = IVaultRouterWithdraw(router).withdraw(shares, address(this), 0);
    }
}
