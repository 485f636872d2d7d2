// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @dev The router functions the probe calls.
interface IVaultRouterWithdraw {
    function DV_USDC() external view returns (address);
    function previewRedeem(uint256 shares, address wallet) external view returns (uint256);
    function previewWithdrawNet(uint256 desiredNetUsdc, address wallet) external view returns (uint256);
    function withdraw(uint256 shares, address wallet, uint256 minUsdcOut) external returns (uint256);
}

/// @dev The share token's balance.
interface IShareBalance {
    function balanceOf(address account) external view returns (uint256);
}

/// @notice Never deployed. A withdrawal plan puts this code at the wallet's address for one simulation
///         (an `eth_simulateV1` state override), so the shares for a net USDC amount and the withdrawal of
///         those shares run in one call, as the wallet, without a round trip between.
/// @dev The shares are the SDK's (`sharesDeliveringNet`): every share when `net` is everything the position
///      pays; else the router's quote, one share up or every share when the quote pays less than `net`,
///      then down, share by share, while one fewer still pays `net`. The SDK bisects where this steps, so
///      past `MAX_STEPS_DOWN` the two differ and the SDK simulates its own shares instead.
contract WithdrawProbe {
    /// @dev The closed form quotes 1–2 shares more than the fewest that pay.
    uint256 private constant MAX_STEPS_DOWN = 4;

    /// @return shares The shares the withdrawal burnt.
    /// @return usdcOut The USDC the withdrawal paid the wallet.
    function withdrawNet(address router, uint256 net) external returns (uint256 shares, uint256 usdcOut) {
        IVaultRouterWithdraw vault = IVaultRouterWithdraw(router);
        uint256 held = IShareBalance(vault.DV_USDC()).balanceOf(address(this));
        shares = vault.previewWithdrawNet(net, address(this));
        if (net == vault.previewRedeem(held, address(this))) {
            shares = held;
        } else {
            if (vault.previewRedeem(shares, address(this)) < net) {
                shares = shares < held && vault.previewRedeem(shares + 1, address(this)) >= net ? shares + 1 : held;
            }
            for (uint256 step; step < MAX_STEPS_DOWN && shares > 1; ++step) {
                if (vault.previewRedeem(shares - 1, address(this)) < net) break;
                --shares;
            }
        }
        usdcOut = vault.withdraw(shares, address(this), 0);
    }
}
