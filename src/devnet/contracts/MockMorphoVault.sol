// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {ERC4626} from "@openzeppelin/contracts/token/ERC20/extensions/ERC4626.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";
import {TestUSDC} from "./TestUSDC.sol";

/// @title MockMorphoVault
/// @notice Devnet stand-in for a Morpho ERC-4626 USDC vault: 18-decimal shares over 6-decimal USDC (OpenZeppelin's
///         virtual offset of 12 decimals), paying a fixed rate that accrues with block time.
/// @dev Interest: `rateRay` is an annual rate (ray); assets grow linearly in time between two interactions and
///      compound at each one. `totalAssets` includes the pending interest; every deposit, mint, withdraw or redeem
///      (and `accrue`) first mints the test USDC that backs it, so the interest is really payable.
///      Owner test knobs: the rate, a reverting or gas-hungry `convertToAssets`, caps on (or reverting)
///      `maxDeposit` and `maxWithdraw`, and a loss that pushes the share price below peg.
contract MockMorphoVault is ERC4626, Ownable {
    using SafeERC20 for IERC20;

    uint256 private constant RAY = 1e27;
    uint256 private constant SECONDS_PER_YEAR = 365 days;
    /// @dev Lost assets go here, so nobody (not even the owner) ends up holding them.
    address private constant LOSS_SINK = 0x000000000000000000000000000000000000dEaD;

    /// @notice The fixed annual rate paid to depositors, in ray (read by the devnet oracle).
    uint256 public rateRay;
    /// @notice When pending interest was last minted into the vault.
    uint256 public lastAccrual;
    /// @notice Whether `convertToAssets` reverts (simulates the venue's view failing).
    bool public convertToAssetsReverts;
    /// @notice Upper bound on `maxWithdraw` for every owner; `type(uint256).max` = no cap.
    uint256 public maxWithdrawCap = type(uint256).max;
    /// @notice Whether `maxWithdraw` (and so the vault's own `withdraw`) reverts.
    bool public maxWithdrawReverts;
    /// @notice Upper bound on `maxDeposit`; `type(uint256).max` = no cap.
    uint256 public maxDepositCap = type(uint256).max;
    /// @notice Whether `maxDeposit` (and so the vault's own `deposit`) reverts.
    bool public maxDepositReverts;
    /// @notice Gas `convertToAssets` burns before answering, to exercise callers' gas limits.
    uint256 public convertToAssetsGasBurn;

    event RateSet(uint256 rateRay);
    event ConvertToAssetsRevertsSet(bool reverts);
    event MaxWithdrawCapSet(uint256 cap);
    event MaxWithdrawRevertsSet(bool reverts);
    event MaxDepositCapSet(uint256 cap);
    event MaxDepositRevertsSet(bool reverts);
    event ConvertToAssetsGasBurnSet(uint256 gasAmount);
    event LossSimulated(uint256 assets);

    error ConvertToAssetsDisabled();
    error MaxWithdrawDisabled();
    error MaxDepositDisabled();

    /// @param usdc The test USDC (its open `mint` backs accrued interest).
    /// @param initialRateRay The annual rate, in ray.
    constructor(TestUSDC usdc, uint256 initialRateRay)
        ERC20("Morpho Devnet USDC", "mdUSDC")
        ERC4626(IERC20(address(usdc)))
        Ownable(msg.sender)
    {
        rateRay = initialRateRay;
        lastAccrual = block.timestamp;
    }

    // ------------------------------------------------------------ ERC-4626

    /// @notice USDC held plus interest accrued since the last interaction.
    function totalAssets() public view override returns (uint256) {
        return IERC20(asset()).balanceOf(address(this)) + pendingInterest();
    }

    /// @notice Interest accrued since the last interaction, not yet minted.
    function pendingInterest() public view returns (uint256) {
        uint256 held = IERC20(asset()).balanceOf(address(this));
        return Math.mulDiv(held, rateRay * (block.timestamp - lastAccrual), RAY * SECONDS_PER_YEAR);
    }

    /// @dev Reverts while the `convertToAssets` knob is on; the vault's own accounting keeps working.
    function convertToAssets(uint256 shares) public view override returns (uint256) {
        if (convertToAssetsReverts) revert ConvertToAssetsDisabled();
        uint256 burnUntil = gasleft() > convertToAssetsGasBurn ? gasleft() - convertToAssetsGasBurn : 0;
        while (gasleft() > burnUntil) {}
        return super.convertToAssets(shares);
    }

    function maxWithdraw(address owner) public view override returns (uint256) {
        if (maxWithdrawReverts) revert MaxWithdrawDisabled();
        return Math.min(previewRedeem(balanceOf(owner)), maxWithdrawCap);
    }

    function maxDeposit(address) public view override returns (uint256) {
        if (maxDepositReverts) revert MaxDepositDisabled();
        return maxDepositCap;
    }

    function maxRedeem(address owner) public view override returns (uint256) {
        uint256 shares = balanceOf(owner);
        if (maxWithdrawCap == type(uint256).max) return shares;
        return Math.min(shares, _convertToShares(maxWithdrawCap, Math.Rounding.Floor));
    }

    function deposit(uint256 assets, address receiver) public override returns (uint256) {
        accrue();
        return super.deposit(assets, receiver);
    }

    function mint(uint256 shares, address receiver) public override returns (uint256) {
        accrue();
        return super.mint(shares, receiver);
    }

    function withdraw(uint256 assets, address receiver, address owner) public override returns (uint256) {
        accrue();
        return super.withdraw(assets, receiver, owner);
    }

    function redeem(uint256 shares, address receiver, address owner) public override returns (uint256) {
        accrue();
        return super.redeem(shares, receiver, owner);
    }

    /// @notice Mints the pending interest into the vault. Permissionless; `totalAssets` is unchanged by it.
    function accrue() public {
        uint256 interest = pendingInterest();
        lastAccrual = block.timestamp;
        if (interest > 0) TestUSDC(asset()).mint(address(this), interest);
    }

    // ------------------------------------------------------ owner test knobs

    /// @notice Sets the annual rate (ray); interest so far is accrued at the old rate first.
    function setRateRay(uint256 newRateRay) external onlyOwner {
        accrue();
        rateRay = newRateRay;
        emit RateSet(newRateRay);
    }

    function setConvertToAssetsReverts(bool reverts) external onlyOwner {
        convertToAssetsReverts = reverts;
        emit ConvertToAssetsRevertsSet(reverts);
    }

    function setMaxWithdrawCap(uint256 cap) external onlyOwner {
        maxWithdrawCap = cap;
        emit MaxWithdrawCapSet(cap);
    }

    function setMaxWithdrawReverts(bool reverts) external onlyOwner {
        maxWithdrawReverts = reverts;
        emit MaxWithdrawRevertsSet(reverts);
    }

    function setMaxDepositCap(uint256 cap) external onlyOwner {
        maxDepositCap = cap;
        emit MaxDepositCapSet(cap);
    }

    function setMaxDepositReverts(bool reverts) external onlyOwner {
        maxDepositReverts = reverts;
        emit MaxDepositRevertsSet(reverts);
    }

    function setConvertToAssetsGasBurn(uint256 gasAmount) external onlyOwner {
        convertToAssetsGasBurn = gasAmount;
        emit ConvertToAssetsGasBurnSet(gasAmount);
    }

    /// @notice Removes `assets` USDC from the vault (a bad-debt loss), pushing the share price down, below peg
    ///         once the loss exceeds the interest earned so far.
    function simulateLoss(uint256 assets) external onlyOwner {
        accrue();
        IERC20(asset()).safeTransfer(LOSS_SINK, assets);
        emit LossSimulated(assets);
    }

    function _decimalsOffset() internal pure override returns (uint8) {
        return 12;
    }
}
