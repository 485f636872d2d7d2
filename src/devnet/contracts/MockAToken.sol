// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Metadata} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Metadata.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";
import {IAaveV3Pool} from "./interfaces/IAaveV3Pool.sol";

/// @title MockAToken
/// @notice Devnet stand-in for Aave V3's aUSDC: a rebasing ERC-20 whose balances are scaled balances times the
///         pool's liquidity index. Like the real aToken it holds the supplied USDC, so the USDC it holds is the
///         reserve's idle liquidity and caps what can be withdrawn.
/// @dev Rounding always favours the reserve (balances floor, mints floor, burns ceil), so the USDC held stays
///      at or above the sum of balances unless the pool's owner lends it out on purpose.
contract MockAToken is IERC20Metadata {
    using SafeERC20 for IERC20;

    uint256 private constant RAY = 1e27;

    // solhint-disable var-name-mixedcase
    /// @notice The pool that mints, burns and moves the underlying.
    address public immutable POOL;
    /// @notice The reserve's asset (test USDC).
    address public immutable UNDERLYING_ASSET_ADDRESS;
    // solhint-enable var-name-mixedcase

    mapping(address => uint256) private _scaledBalances;
    mapping(address => mapping(address => uint256)) private _allowances;
    uint256 private _scaledTotalSupply;

    error OnlyPool();
    error InsufficientBalance(address account, uint256 balance, uint256 needed);
    error InsufficientAllowance(address spender, uint256 allowance, uint256 needed);

    modifier onlyPool() {
        if (msg.sender != POOL) revert OnlyPool();
        _;
    }

    constructor(address pool, address underlyingAsset) {
        POOL = pool;
        UNDERLYING_ASSET_ADDRESS = underlyingAsset;
    }

    function name() external pure returns (string memory) {
        return "Aave Base USDC";
    }

    function symbol() external pure returns (string memory) {
        return "aBasUSDC";
    }

    function decimals() external pure returns (uint8) {
        return 6;
    }

    /// @notice Balance including interest accrued up to this block.
    function balanceOf(address account) public view returns (uint256) {
        return Math.mulDiv(_scaledBalances[account], _index(), RAY);
    }

    function totalSupply() public view returns (uint256) {
        return Math.mulDiv(_scaledTotalSupply, _index(), RAY);
    }

    function scaledBalanceOf(address account) external view returns (uint256) {
        return _scaledBalances[account];
    }

    function scaledTotalSupply() external view returns (uint256) {
        return _scaledTotalSupply;
    }

    function allowance(address owner, address spender) external view returns (uint256) {
        return _allowances[owner][spender];
    }

    function approve(address spender, uint256 amount) external returns (bool) {
        _allowances[msg.sender][spender] = amount;
        emit Approval(msg.sender, spender, amount);
        return true;
    }

    function transfer(address to, uint256 amount) external returns (bool) {
        _transfer(msg.sender, to, amount);
        return true;
    }

    function transferFrom(address from, address to, uint256 amount) external returns (bool) {
        uint256 allowed = _allowances[from][msg.sender];
        if (allowed != type(uint256).max) {
            if (allowed < amount) revert InsufficientAllowance(msg.sender, allowed, amount);
            _allowances[from][msg.sender] = allowed - amount;
        }
        _transfer(from, to, amount);
        return true;
    }

    // ------------------------------------------------------------- pool only

    /// @notice Credits `scaledAmount` to `account`; `amount` is only for the event.
    function mint(address account, uint256 scaledAmount, uint256 amount) external onlyPool {
        _scaledBalances[account] += scaledAmount;
        _scaledTotalSupply += scaledAmount;
        emit Transfer(address(0), account, amount);
    }

    /// @notice Debits `scaledAmount` from `account`; `amount` is only for the event.
    function burn(address account, uint256 scaledAmount, uint256 amount) external onlyPool {
        uint256 scaledBalance = _scaledBalances[account];
        if (scaledBalance < scaledAmount) revert InsufficientBalance(account, scaledBalance, scaledAmount);
        _scaledBalances[account] = scaledBalance - scaledAmount;
        _scaledTotalSupply -= scaledAmount;
        emit Transfer(account, address(0), amount);
    }

    /// @notice Sends underlying USDC held by this token (withdrawals, and the pool's lend-out knob).
    function transferUnderlyingTo(address to, uint256 amount) external onlyPool {
        IERC20(UNDERLYING_ASSET_ADDRESS).safeTransfer(to, amount);
    }

    // -------------------------------------------------------------- internal

    function _index() private view returns (uint256) {
        return IAaveV3Pool(POOL).getReserveNormalizedIncome(UNDERLYING_ASSET_ADDRESS);
    }

    function _transfer(address from, address to, uint256 amount) private {
        // Round the scaled amount up so a transfer never moves less value than asked.
        uint256 scaledAmount = Math.mulDiv(amount, RAY, _index(), Math.Rounding.Ceil);
        uint256 scaledBalance = _scaledBalances[from];
        if (scaledBalance < scaledAmount) revert InsufficientBalance(from, balanceOf(from), amount);
        _scaledBalances[from] = scaledBalance - scaledAmount;
        _scaledBalances[to] += scaledAmount;
        emit Transfer(from, to, amount);
    }
}
