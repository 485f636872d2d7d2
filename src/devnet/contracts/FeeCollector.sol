// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";

/// @title FeeCollector
/// @notice Takes the protocol fee (10 % of realised yield, rounded up) for the treasury, as the live fee collector
///         does: on a withdrawal the router approves the fee and calls `collectFee`,
///         which pulls it from the router straight to the treasury.
/// @dev The treasury is rotated by the router (driven by its emergency multisig): a proposal becomes executable
///      after 7 days and expires 14 days after that.
contract FeeCollector {
    using SafeERC20 for IERC20;

    uint256 public constant FEE_BPS = 1000;
    uint256 public constant BPS_DENOMINATOR = 10_000;
    uint256 public constant TREASURY_ROTATION_DELAY = 7 days;
    uint256 public constant TREASURY_ROTATION_GRACE_PERIOD = 14 days;

    // solhint-disable var-name-mixedcase
    address public immutable USDC;
    address public immutable VAULT_ROUTER;
    // solhint-enable var-name-mixedcase

    address public treasury;
    address public pendingTreasury;
    uint96 public treasuryRotationEffectiveAt;

    event FeeCollected(address indexed wallet, uint256 yieldEarned, uint256 feeAmount);
    event TreasuryRotationProposed(
        address indexed currentTreasury, address indexed pendingTreasury, uint256 effectiveAt
    );
    event TreasuryRotationCancelled(address indexed cancelledPendingTreasury);
    event TreasuryUpdated(address indexed oldTreasury, address indexed newTreasury);

    error OnlyVaultRouter(address caller);
    error RotationNotProposed();
    error RotationNotReady(uint256 currentTime, uint256 effectiveAt);
    error RotationExpired(uint256 currentTime, uint256 expiredAt);
    error InvalidNewTreasury();
    error RotationAlreadyPending(address pendingTreasury);
    error ZeroTreasury();
    error ZeroRouter();
    error ZeroUsdc();

    modifier onlyRouter() {
        if (msg.sender != VAULT_ROUTER) revert OnlyVaultRouter(msg.sender);
        _;
    }

    constructor(address usdc, address vaultRouter, address initialTreasury) {
        if (usdc == address(0)) revert ZeroUsdc();
        if (vaultRouter == address(0)) revert ZeroRouter();
        if (initialTreasury == address(0)) revert ZeroTreasury();
        USDC = usdc;
        VAULT_ROUTER = vaultRouter;
        treasury = initialTreasury;
    }

    /// @notice The fee on `yieldEarned`: ceil(yieldEarned × FEE_BPS / 10 000).
    function calculateFee(uint256 yieldEarned) public pure returns (uint256) {
        return Math.mulDiv(yieldEarned, FEE_BPS, BPS_DENOMINATOR, Math.Rounding.Ceil);
    }

    /// @notice Pulls the fee on `yieldEarned` from the router to the treasury. No transfer and no event for a zero fee.
    /// @return feeAmount The amount pulled.
    function collectFee(address wallet, uint256 yieldEarned) external onlyRouter returns (uint256 feeAmount) {
        feeAmount = calculateFee(yieldEarned);
        if (feeAmount == 0) return 0;
        IERC20(USDC).safeTransferFrom(VAULT_ROUTER, treasury, feeAmount);
        emit FeeCollected(wallet, yieldEarned, feeAmount);
    }

    function proposeTreasuryRotation(address newTreasury) external onlyRouter {
        if (newTreasury == address(0) || newTreasury == treasury) revert InvalidNewTreasury();
        if (pendingTreasury != address(0)) revert RotationAlreadyPending(pendingTreasury);
        uint256 effectiveAt = block.timestamp + TREASURY_ROTATION_DELAY;
        pendingTreasury = newTreasury;
        treasuryRotationEffectiveAt = uint96(effectiveAt);
        emit TreasuryRotationProposed(treasury, newTreasury, effectiveAt);
    }

    function executeTreasuryRotation() external onlyRouter {
        address newTreasury = pendingTreasury;
        if (newTreasury == address(0)) revert RotationNotProposed();
        uint256 effectiveAt = treasuryRotationEffectiveAt;
        if (block.timestamp < effectiveAt) revert RotationNotReady(block.timestamp, effectiveAt);
        uint256 expiredAt = effectiveAt + TREASURY_ROTATION_GRACE_PERIOD;
        if (block.timestamp > expiredAt) revert RotationExpired(block.timestamp, expiredAt);
        emit TreasuryUpdated(treasury, newTreasury);
        treasury = newTreasury;
        pendingTreasury = address(0);
        treasuryRotationEffectiveAt = 0;
    }

    function cancelTreasuryRotation() external onlyRouter {
        address cancelled = pendingTreasury;
        if (cancelled == address(0)) revert RotationNotProposed();
        pendingTreasury = address(0);
        treasuryRotationEffectiveAt = 0;
        emit TreasuryRotationCancelled(cancelled);
    }
}
