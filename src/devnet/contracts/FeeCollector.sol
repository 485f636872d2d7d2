// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";

/// @title FeeCollector
/// @notice Takes the protocol fee (10 % of realised yield, rounded up) and forwards it to the treasury.
/// @dev Flow: on a withdrawal the router transfers exactly `calculateFee(yield)` USDC here, then calls
///      `collectFee`, which forwards that amount to the treasury in the same transaction; nothing stays here.
///      The treasury is rotated by the router (driven by its emergency multisig) behind a 2-day delay.
contract FeeCollector {
    using SafeERC20 for IERC20;

    uint256 public constant FEE_BPS = 1000;
    uint256 public constant BPS_DENOMINATOR = 10_000;
    uint256 public constant TREASURY_ROTATION_DELAY = 2 days;

    // solhint-disable var-name-mixedcase
    address public immutable USDC;
    address public immutable VAULT_ROUTER;
    // solhint-enable var-name-mixedcase

    address public treasury;
    address public pendingTreasury;
    uint96 public treasuryRotationEffectiveAt;

    event FeeCollected(address indexed wallet, uint256 yieldEarned, uint256 fee, address indexed treasury);
    event TreasuryRotationProposed(address indexed newTreasury, uint256 effectiveAt);
    event TreasuryRotated(address indexed previousTreasury, address indexed newTreasury);
    event TreasuryRotationCancelled(address indexed cancelledTreasury);

    error NotVaultRouter();
    error ZeroAddress();
    error NoPendingRotation();
    error RotationNotReady(uint256 effectiveAt);

    modifier onlyRouter() {
        if (msg.sender != VAULT_ROUTER) revert NotVaultRouter();
        _;
    }

    constructor(address usdc, address vaultRouter, address initialTreasury) {
        if (usdc == address(0) || vaultRouter == address(0) || initialTreasury == address(0)) revert ZeroAddress();
        USDC = usdc;
        VAULT_ROUTER = vaultRouter;
        treasury = initialTreasury;
    }

    /// @notice The fee on `yieldEarned`: ceil(yieldEarned × FEE_BPS / 10 000).
    function calculateFee(uint256 yieldEarned) public pure returns (uint256) {
        return Math.mulDiv(yieldEarned, FEE_BPS, BPS_DENOMINATOR, Math.Rounding.Ceil);
    }

    /// @notice Forwards the fee on `yieldEarned`, which the router has just transferred here, to the treasury.
    /// @return fee The amount forwarded.
    function collectFee(address wallet, uint256 yieldEarned) external onlyRouter returns (uint256 fee) {
        fee = calculateFee(yieldEarned);
        if (fee > 0) IERC20(USDC).safeTransfer(treasury, fee);
        emit FeeCollected(wallet, yieldEarned, fee, treasury);
    }

    function proposeTreasuryRotation(address newTreasury) external onlyRouter {
        if (newTreasury == address(0)) revert ZeroAddress();
        uint256 effectiveAt = block.timestamp + TREASURY_ROTATION_DELAY;
        pendingTreasury = newTreasury;
        treasuryRotationEffectiveAt = uint96(effectiveAt);
        emit TreasuryRotationProposed(newTreasury, effectiveAt);
    }

    function executeTreasuryRotation() external onlyRouter {
        address newTreasury = pendingTreasury;
        if (newTreasury == address(0)) revert NoPendingRotation();
        if (block.timestamp < treasuryRotationEffectiveAt) revert RotationNotReady(treasuryRotationEffectiveAt);
        emit TreasuryRotated(treasury, newTreasury);
        treasury = newTreasury;
        pendingTreasury = address(0);
        treasuryRotationEffectiveAt = 0;
    }

    function cancelTreasuryRotation() external onlyRouter {
        address cancelled = pendingTreasury;
        if (cancelled == address(0)) revert NoPendingRotation();
        pendingTreasury = address(0);
        treasuryRotationEffectiveAt = 0;
        emit TreasuryRotationCancelled(cancelled);
    }
}
