// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";
import {IAaveV3Pool} from "./interfaces/IAaveV3Pool.sol";
import {MockAToken} from "./MockAToken.sol";
import {TestUSDC} from "./TestUSDC.sol";

/// @title MockAavePool
/// @notice Devnet stand-in for the Aave V3 pool with a single reserve (test USDC), answering with Aave's shapes.
/// @dev Interest: the liquidity index grows linearly in time at `currentLiquidityRate` between two updates and
///      compounds at each update, which is how Aave V3 accrues its liquidity index. Every update mints the test
///      USDC that backs the interest into the aToken, so accrued interest can really be withdrawn.
///      The owner (the deployer) has test knobs: the liquidity rate, the configuration bitmap, a reverting
///      `getConfiguration`, and the idle liquidity (USDC is moved out of the aToken to this pool to play
///      "borrowed", and back).
contract MockAavePool is IAaveV3Pool, Ownable {
    using SafeERC20 for IERC20;

    uint256 private constant RAY = 1e27;
    uint256 private constant SECONDS_PER_YEAR = 365 days;

    /// @dev Aave's configuration bits: decimals (48..55), active (56), frozen (57), borrowing (58), paused (60).
    uint256 public constant DECIMALS_SHIFT = 48;
    uint256 public constant ACTIVE_MASK = 1 << 56;
    uint256 public constant FROZEN_MASK = 1 << 57;
    uint256 public constant BORROWING_MASK = 1 << 58;
    uint256 public constant PAUSED_MASK = 1 << 60;

    // solhint-disable-next-line var-name-mixedcase
    TestUSDC public immutable USDC;
    // solhint-disable-next-line var-name-mixedcase
    MockAToken public immutable A_TOKEN;

    uint256 private _configuration;
    uint128 private _liquidityIndex;
    uint128 private _currentLiquidityRate;
    uint40 private _lastUpdateTimestamp;
    /// @notice Whether `getConfiguration` reverts (the router then treats the reserve as unavailable).
    bool public configurationReverts;

    event Supply(
        address indexed reserve, address user, address indexed onBehalfOf, uint256 amount, uint16 indexed referralCode
    );
    event Withdraw(address indexed reserve, address indexed user, address indexed to, uint256 amount);
    event LiquidityRateSet(uint256 rateRay);
    event ConfigurationSet(uint256 data);
    event IdleLiquiditySet(uint256 amount);
    event ConfigurationRevertsSet(bool reverts);

    error UnsupportedAsset(address asset);
    error InvalidAmount();
    error ReserveInactive();
    error ReserveFrozen();
    error ReservePaused();
    error InsufficientBalance(uint256 requested, uint256 balance);
    error InsufficientLiquidity(uint256 requested, uint256 available);
    error ConfigurationUnavailable();

    /// @param usdc The test USDC (its open `mint` backs accrued interest).
    /// @param aToken The aToken of the reserve, deployed with this pool as its `POOL`.
    /// @param liquidityRateRay The initial supply rate, annualised, in ray.
    constructor(TestUSDC usdc, MockAToken aToken, uint256 liquidityRateRay) Ownable(msg.sender) {
        USDC = usdc;
        A_TOKEN = aToken;
        _configuration = (6 << DECIMALS_SHIFT) | ACTIVE_MASK | BORROWING_MASK;
        _liquidityIndex = uint128(RAY);
        _currentLiquidityRate = uint128(liquidityRateRay);
        _lastUpdateTimestamp = uint40(block.timestamp);
    }

    // ------------------------------------------------------------ Aave API

    function supply(address asset, uint256 amount, address onBehalfOf, uint16 referralCode) external {
        _requireUsdc(asset);
        if (amount == 0) revert InvalidAmount();
        uint256 configuration = _configuration;
        if (configuration & ACTIVE_MASK == 0) revert ReserveInactive();
        if (configuration & PAUSED_MASK != 0) revert ReservePaused();
        if (configuration & FROZEN_MASK != 0) revert ReserveFrozen();

        uint256 index = _updateState();
        // Floor: the supplier is credited at most what it brought.
        uint256 scaledAmount = Math.mulDiv(amount, RAY, index);
        if (scaledAmount == 0) revert InvalidAmount();
        IERC20(address(USDC)).safeTransferFrom(msg.sender, address(A_TOKEN), amount);
        A_TOKEN.mint(onBehalfOf, scaledAmount, amount);
        emit Supply(asset, msg.sender, onBehalfOf, amount, referralCode);
    }

    /// @notice Withdraws `amount` (`type(uint256).max` = the whole balance), limited by the USDC the aToken holds.
    function withdraw(address asset, uint256 amount, address to) external returns (uint256) {
        _requireUsdc(asset);
        uint256 configuration = _configuration;
        if (configuration & ACTIVE_MASK == 0) revert ReserveInactive();
        if (configuration & PAUSED_MASK != 0) revert ReservePaused();

        uint256 index = _updateState();
        uint256 balance = A_TOKEN.balanceOf(msg.sender);
        if (amount == type(uint256).max) amount = balance;
        if (amount == 0) revert InvalidAmount();
        if (amount > balance) revert InsufficientBalance(amount, balance);
        uint256 available = USDC.balanceOf(address(A_TOKEN));
        if (amount > available) revert InsufficientLiquidity(amount, available);

        // Ceil: the withdrawer gives up at least the value it takes; a full exit burns everything.
        uint256 scaledAmount = amount == balance
            ? A_TOKEN.scaledBalanceOf(msg.sender)
            : Math.mulDiv(amount, RAY, index, Math.Rounding.Ceil);
        A_TOKEN.burn(msg.sender, scaledAmount, amount);
        A_TOKEN.transferUnderlyingTo(to, amount);
        emit Withdraw(asset, msg.sender, to, amount);
        return amount;
    }

    function getReserveData(address asset) external view returns (ReserveDataLegacy memory data) {
        if (asset != address(USDC)) return data; // Aave answers an empty struct for unknown assets
        data.configuration = _configuration;
        data.liquidityIndex = _liquidityIndex;
        data.currentLiquidityRate = _currentLiquidityRate;
        data.variableBorrowIndex = uint128(RAY);
        data.lastUpdateTimestamp = _lastUpdateTimestamp;
        data.aTokenAddress = address(A_TOKEN);
    }

    function getConfiguration(address asset) external view returns (ReserveConfigurationMap memory) {
        if (configurationReverts) revert ConfigurationUnavailable();
        return ReserveConfigurationMap(asset == address(USDC) ? _configuration : 0);
    }

    /// @notice The liquidity index as of this block (what aToken balances are scaled by).
    function getReserveNormalizedIncome(address asset) public view returns (uint256) {
        if (asset != address(USDC)) return 0;
        uint256 elapsed = block.timestamp - _lastUpdateTimestamp;
        if (elapsed == 0) return _liquidityIndex;
        return Math.mulDiv(_liquidityIndex, RAY + (uint256(_currentLiquidityRate) * elapsed) / SECONDS_PER_YEAR, RAY);
    }

    // ------------------------------------------------------ owner test knobs

    /// @notice Sets the supply rate (annualised, ray); interest so far is accrued at the old rate first.
    function setLiquidityRate(uint256 rateRay) external onlyOwner {
        _updateState();
        _currentLiquidityRate = uint128(rateRay);
        emit LiquidityRateSet(rateRay);
    }

    /// @notice Overwrites the configuration bitmap (e.g. set FROZEN_MASK or PAUSED_MASK, clear ACTIVE_MASK).
    function setConfiguration(uint256 data) external onlyOwner {
        _configuration = data;
        emit ConfigurationSet(data);
    }

    /// @notice Makes `getConfiguration` revert (true) or answer again (false).
    function setConfigurationReverts(bool reverts) external onlyOwner {
        configurationReverts = reverts;
        emit ConfigurationRevertsSet(reverts);
    }

    /// @notice Sets the USDC the aToken holds, i.e. what can be withdrawn right now. Lowering it simulates
    ///         borrowers taking liquidity (the USDC parks in this pool); raising it brings it back (minting
    ///         any shortfall). Utilisation = 1 - idle / aToken totalSupply.
    function setIdleLiquidity(uint256 amount) external onlyOwner {
        _updateState();
        uint256 idle = USDC.balanceOf(address(A_TOKEN));
        if (idle > amount) {
            A_TOKEN.transferUnderlyingTo(address(this), idle - amount);
        } else if (amount > idle) {
            uint256 needed = amount - idle;
            uint256 parked = Math.min(needed, USDC.balanceOf(address(this)));
            if (parked > 0) IERC20(address(USDC)).safeTransfer(address(A_TOKEN), parked);
            if (needed > parked) USDC.mint(address(A_TOKEN), needed - parked);
        }
        emit IdleLiquiditySet(amount);
    }

    // -------------------------------------------------------------- internal

    function _requireUsdc(address asset) private view {
        if (asset != address(USDC)) revert UnsupportedAsset(asset);
    }

    /// @dev Moves the stored index to now and mints the USDC that backs the interest accrued since the last update.
    function _updateState() private returns (uint256 index) {
        index = getReserveNormalizedIncome(address(USDC));
        if (_lastUpdateTimestamp == block.timestamp) return index;
        uint256 scaledSupply = A_TOKEN.scaledTotalSupply();
        uint256 interest = Math.mulDiv(scaledSupply, index, RAY) - Math.mulDiv(scaledSupply, _liquidityIndex, RAY);
        _liquidityIndex = uint128(index);
        _lastUpdateTimestamp = uint40(block.timestamp);
        if (interest > 0) USDC.mint(address(A_TOKEN), interest);
    }
}
