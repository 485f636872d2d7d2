// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC4626} from "@openzeppelin/contracts/interfaces/IERC4626.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Permit.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";
import {Nonces} from "@openzeppelin/contracts/utils/Nonces.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";
import {FeeCollector} from "./FeeCollector.sol";
import {IAaveV3Pool} from "./interfaces/IAaveV3Pool.sol";
import {IVaultOracle} from "./interfaces/IVaultOracle.sol";
import {ShareToken} from "./ShareToken.sol";

/// @title VaultRouter
/// @notice The devnet's vault router, reproducing the live contract to the wei: registered wallets
///         deposit USDC into the venue the oracle picks (Aave V3 or a Morpho ERC-4626 vault) for non-transferable
///         dvUSDC shares, and redeem shares for USDC taken pro rata from both venues, minus 10 % of the realised
///         yield. The router itself holds the aTokens and the Morpho shares.
/// @dev Share math has a virtual offset of 1e6 on both assets and supply, and share value is capped at the assets
///      held. The Morpho vault's `convertToAssets` is called only when the router holds Morpho shares; then the
///      valuing views revert with the Morpho vault's own error, while `withdrawCapacity` and
///      `getCurrentAllocation` degrade (`morphoReachable = false`).
contract VaultRouter is EIP712, Nonces, ReentrancyGuard {
    using SafeERC20 for IERC20;

    uint8 private constant VAULT_TYPE_AAVE = 0;
    uint8 private constant VAULT_TYPE_MORPHO = 1;
    uint256 private constant VIRTUAL_OFFSET = 1e6;
    uint256 private constant FEE_BPS = 1000;
    uint256 private constant BPS_DENOMINATOR = 10_000;
    uint256 private constant AAVE_ACTIVE_MASK = 1 << 56;
    uint256 private constant AAVE_FROZEN_MASK = 1 << 57;
    uint256 private constant AAVE_PAUSED_MASK = 1 << 60;

    uint256 public constant MIN_DEPOSIT = 10e6;
    uint256 public constant TVL_CAP_INITIAL = 500_000e6;
    uint256 public constant TVL_CAP_DAY_31 = 2_000_000e6;
    uint256 public constant TVL_CAP_REMOVED = type(uint256).max;
    uint256 public constant DAY_31_OFFSET = 31 days;
    uint256 public constant DAY_91_OFFSET = 91 days;
    uint256 public constant MIN_MORPHO_VIEW_GAS = 350_000;
    uint256 public constant MAX_MORPHO_VIEW_GAS = 1_000_000;
    bytes32 public constant INITIALIZE_FOR_TYPEHASH =
        keccak256("InitializeFor(address wallet,uint256 deadline,uint256 nonce)");

    // solhint-disable var-name-mixedcase
    IERC20 public immutable USDC;
    IERC20 public immutable A_TOKEN;
    IAaveV3Pool public immutable AAVE_POOL;
    IERC4626 public immutable MORPHO_VAULT;
    IVaultOracle public immutable ORACLE;
    FeeCollector public immutable FEE_COLLECTOR;
    ShareToken public immutable DV_USDC;
    address public immutable EMERGENCY_MULTISIG;
    uint256 public immutable DEPLOYMENT_TIME;
    // solhint-enable var-name-mixedcase

    mapping(address => bool) public authorizedWallets;
    mapping(address => uint256) public costBasisUSDC;
    mapping(address => mapping(address => bool)) private _operators;
    bool public depositsPaused;
    /// @notice Gas given to the Morpho vault's `convertToAssets` when planning withdrawals, so a broken venue
    ///         cannot make `withdrawCapacity` run out of gas.
    uint256 public morphoViewGas = MIN_MORPHO_VIEW_GAS;

    /// @notice What the venues can pay out right now; shared by `withdrawCapacity` and `withdraw`.
    struct VaultCapacity {
        uint256 aaveAssetsHeld;
        uint256 aaveIdleLiquidity;
        uint256 aaveWithdrawCap;
        uint256 morphoAssetsHeld;
        uint256 morphoWithdrawCap;
        bool morphoReachable;
        uint256 totalWithdrawCap;
    }

    event Deposited(address indexed wallet, uint256 usdcAmount, uint256 dvUsdcMinted, uint8 indexed vaultType);
    event Withdrawn(
        address indexed wallet, uint256 dvUsdcBurned, uint256 usdcReturned, uint256 yieldEarned, uint256 feePaid
    );
    event WalletAuthorised(address indexed wallet);
    event OperatorSet(address indexed wallet, address indexed operator, bool approved);
    event DepositsPaused(bool paused);
    event MorphoViewGasUpdated(uint256 oldGas, uint256 newGas);
    event ExitRedirected(
        address indexed wallet,
        uint256 targetAave,
        uint256 targetMorpho,
        uint256 actualAave,
        uint256 actualMorpho,
        bool shortLegMorpho
    );

    error NotAuthorised();
    error DepositsPausedError();
    error ZeroAmount();
    error ZeroAddress();
    error TVLCapExceeded(uint256 requested, uint256 cap);
    error InsufficientShares(uint256 requested, uint256 available);
    error NotEmergencyMultisig();
    error WalletAlreadyAuthorised();
    error PermitExpired();
    error InsufficientPermitAllowance(uint256 currentAllowance, uint256 required);
    error NoPositionToWithdraw();
    error PositionRoundsToZero();
    error PreviewMathDegenerate();
    error UnserviceableNet(uint256 desiredNetUSDC, uint256 maxDeliverable);
    error InvalidAmount();
    error SlippageExceeded(uint256 received, uint256 minExpected);
    error InvalidSignature();
    error NoSafeRoute(uint256 amount);
    error InsufficientVaultLiquidity(uint256 requested, uint256 available);
    error StaleOracle();
    error MorphoUnreachable();
    error MorphoViewGasOutOfBounds(uint256 provided, uint256 min, uint256 max);
    error ZeroUsdc();
    error ZeroAToken();
    error ZeroAavePool();
    error ZeroMorphoVault();
    error ZeroOracle();
    error ZeroFeeCollector();
    error ZeroDvUsdc();
    error ZeroEmergencyMultisig();

    modifier onlyEmergencyMultisig() {
        if (msg.sender != EMERGENCY_MULTISIG) revert NotEmergencyMultisig();
        _;
    }

    modifier whenDepositsNotPaused() {
        if (depositsPaused) revert DepositsPausedError();
        _;
    }

    /// @dev The wallet must be registered, and the caller must be the wallet or one of its operators.
    modifier onlyAuthorised(address wallet) {
        if (!authorizedWallets[wallet] || (msg.sender != wallet && !_operators[wallet][msg.sender])) {
            revert NotAuthorised();
        }
        _;
    }

    constructor(
        IERC20 usdc,
        IERC20 aToken,
        IAaveV3Pool aavePool,
        IERC4626 morphoVault,
        IVaultOracle oracle,
        FeeCollector feeCollector,
        ShareToken shareToken,
        address emergencyMultisig
    ) EIP712("DivigentVaultRouter", "1") {
        if (address(usdc) == address(0)) revert ZeroUsdc();
        if (address(aToken) == address(0)) revert ZeroAToken();
        if (address(aavePool) == address(0)) revert ZeroAavePool();
        if (address(morphoVault) == address(0)) revert ZeroMorphoVault();
        if (address(oracle) == address(0)) revert ZeroOracle();
        if (address(feeCollector) == address(0)) revert ZeroFeeCollector();
        if (address(shareToken) == address(0)) revert ZeroDvUsdc();
        if (emergencyMultisig == address(0)) revert ZeroEmergencyMultisig();
        USDC = usdc;
        A_TOKEN = aToken;
        AAVE_POOL = aavePool;
        MORPHO_VAULT = morphoVault;
        ORACLE = oracle;
        FEE_COLLECTOR = feeCollector;
        DV_USDC = shareToken;
        EMERGENCY_MULTISIG = emergencyMultisig;
        DEPLOYMENT_TIME = block.timestamp;
    }

    // ========================================================= registration

    /// @notice Registers `msg.sender`.
    function initialize() external {
        if (authorizedWallets[msg.sender]) revert WalletAlreadyAuthorised();
        _authorise(msg.sender);
    }

    /// @notice Registers `wallet` with its EIP-712 signature over `InitializeFor(wallet, deadline, nonce)`, so a
    ///         relayer can pay the gas. Plain ECDSA: smart-contract (ERC-1271) signatures are not accepted.
    function initializeFor(address wallet, uint256 deadline, bytes calldata sig) external {
        if (block.timestamp > deadline) revert PermitExpired();
        if (authorizedWallets[wallet]) revert WalletAlreadyAuthorised();
        bytes32 digest =
            _hashTypedDataV4(keccak256(abi.encode(INITIALIZE_FOR_TYPEHASH, wallet, deadline, _useNonce(wallet))));
        if (ECDSA.recover(digest, sig) != wallet) revert InvalidSignature();
        _authorise(wallet);
    }

    /// @notice Lets `operator` deposit and withdraw for `msg.sender` (USDC still only moves to and from the wallet).
    function setOperator(address operator, bool approved) external {
        if (!authorizedWallets[msg.sender]) revert NotAuthorised();
        if (operator == address(0)) revert ZeroAddress();
        _operators[msg.sender][operator] = approved;
        emit OperatorSet(msg.sender, operator, approved);
    }

    function isOperator(address wallet, address operator) public view returns (bool) {
        return _operators[wallet][operator];
    }

    // =========================================================== money in

    function deposit(uint256 amount, address wallet, uint256 minSharesOut)
        external
        nonReentrant
        whenDepositsNotPaused
        onlyAuthorised(wallet)
        returns (uint256 sharesMinted)
    {
        return _deposit(amount, wallet, minSharesOut);
    }

    /// @notice Tries the USDC permit (a failed permit is swallowed, e.g. when it was front-run), then requires the
    ///         allowance and deposits.
    function depositWithPermit(
        uint256 amount,
        address wallet,
        uint256 deadline,
        uint8 v,
        bytes32 r,
        bytes32 s,
        uint256 minSharesOut
    ) external nonReentrant whenDepositsNotPaused onlyAuthorised(wallet) returns (uint256) {
        if (block.timestamp > deadline) revert PermitExpired();
        try IERC20Permit(address(USDC)).permit(wallet, address(this), amount, deadline, v, r, s) {} catch {}
        uint256 currentAllowance = USDC.allowance(wallet, address(this));
        if (currentAllowance < amount) revert InsufficientPermitAllowance(currentAllowance, amount);
        return _deposit(amount, wallet, minSharesOut);
    }

    // ========================================================== money out

    /// @notice Redeems `shares` of `wallet` for USDC sent to `wallet`, net of the fee on realised yield. Never paused.
    function withdraw(uint256 shares, address wallet, uint256 minUsdcOut)
        external
        nonReentrant
        onlyAuthorised(wallet)
        returns (uint256 usdcReturned)
    {
        if (shares == 0) revert ZeroAmount();
        uint256 walletShares = DV_USDC.balanceOf(wallet);
        if (shares > walletShares) revert InsufficientShares(shares, walletShares);
        uint256 costBasis = costBasisUSDC[wallet];
        uint256 principal = Math.mulDiv(costBasis, shares, walletShares);
        costBasisUSDC[wallet] = costBasis - principal;
        DV_USDC.burn(wallet, shares);

        uint256 received = _exitVenues(wallet, shares);
        uint256 yieldEarned = received > principal ? received - principal : 0;
        uint256 fee = _fee(yieldEarned);
        usdcReturned = received - fee;
        if (usdcReturned < minUsdcOut) revert SlippageExceeded(usdcReturned, minUsdcOut);

        if (fee > 0) {
            USDC.forceApprove(address(FEE_COLLECTOR), fee);
            FEE_COLLECTOR.collectFee(wallet, yieldEarned);
        }
        USDC.safeTransfer(wallet, usdcReturned);
        emit Withdrawn(wallet, shares, usdcReturned, yieldEarned, fee);
    }

    // ================================================================ views

    function previewDeposit(uint256 assets) external view returns (uint256 shares) {
        return convertToShares(assets);
    }

    /// @notice USDC `wallet` would receive for `shares`, net of the fee.
    function previewRedeem(uint256 shares, address wallet) external view returns (uint256 usdcOut) {
        uint256 gross = _sharesToAssets(shares, totalVaultAssets(), DV_USDC.totalSupply());
        uint256 walletShares = DV_USDC.balanceOf(wallet);
        uint256 principal = walletShares == 0 ? 0 : Math.mulDiv(costBasisUSDC[wallet], shares, walletShares);
        return gross - _fee(gross > principal ? gross - principal : 0);
    }

    /// @notice Shares to burn so that `wallet` receives at least `desiredNetUsdc` after the fee, in the live
    ///         contract's closed form. It can quote one share too few at `maxDeliverable`.
    function previewWithdrawNet(uint256 desiredNetUsdc, address wallet) external view returns (uint256 shares) {
        if (desiredNetUsdc == 0) revert ZeroAmount();
        uint256 walletShares = DV_USDC.balanceOf(wallet);
        if (walletShares == 0) revert NoPositionToWithdraw();
        uint256 assets1 = totalVaultAssets() + VIRTUAL_OFFSET;
        uint256 supply1 = DV_USDC.totalSupply() + VIRTUAL_OFFSET;
        uint256 grossAll = _sharesToAssets(walletShares, assets1 - VIRTUAL_OFFSET, supply1 - VIRTUAL_OFFSET);
        if (grossAll == 0) revert PositionRoundsToZero();
        uint256 costBasis = costBasisUSDC[wallet];

        if (grossAll <= costBasis) {
            if (desiredNetUsdc > grossAll) revert UnserviceableNet(desiredNetUsdc, grossAll);
            return Math.mulDiv(desiredNetUsdc, supply1, assets1, Math.Rounding.Ceil);
        }
        uint256 maxDeliverable = grossAll - _fee(grossAll - costBasis);
        if (desiredNetUsdc > maxDeliverable) revert UnserviceableNet(desiredNetUsdc, maxDeliverable);
        uint256 target = desiredNetUsdc < maxDeliverable ? desiredNetUsdc + 1 : desiredNetUsdc;
        uint256 denominator = 9000 * walletShares * assets1 + 1000 * costBasis * supply1;
        if (denominator == 0) revert PreviewMathDegenerate();
        shares = Math.mulDiv(target * 10_000, walletShares * supply1, denominator, Math.Rounding.Ceil);
        if (shares > walletShares) revert UnserviceableNet(desiredNetUsdc, maxDeliverable);
    }

    function convertToShares(uint256 assets) public view returns (uint256) {
        return Math.mulDiv(assets, DV_USDC.totalSupply() + VIRTUAL_OFFSET, totalVaultAssets() + VIRTUAL_OFFSET);
    }

    function convertToAssets(uint256 shares) external view returns (uint256) {
        return _sharesToAssets(shares, totalVaultAssets(), DV_USDC.totalSupply());
    }

    /// @notice USDC per whole share, 1e18-scaled.
    function pricePerShare() external view returns (uint256) {
        return Math.mulDiv(totalVaultAssets() + VIRTUAL_OFFSET, 1e18, DV_USDC.totalSupply() + VIRTUAL_OFFSET);
    }

    /// @notice aUSDC held plus the value of the Morpho shares held (0, without asking Morpho, when none are held).
    ///         Reverts with the Morpho vault's error when its `convertToAssets` does.
    function totalVaultAssets() public view returns (uint256) {
        uint256 morphoShares = MORPHO_VAULT.balanceOf(address(this));
        uint256 morphoAssets = morphoShares == 0 ? 0 : MORPHO_VAULT.convertToAssets(morphoShares);
        return A_TOKEN.balanceOf(address(this)) + morphoAssets;
    }

    /// @notice 500 000 USDC until day 31, 2 000 000 until day 91, then `type(uint256).max` (no cap).
    function currentTVLCap() public view returns (uint256) {
        uint256 elapsed = block.timestamp - DEPLOYMENT_TIME;
        if (elapsed >= DAY_91_OFFSET) return TVL_CAP_REMOVED;
        if (elapsed >= DAY_31_OFFSET) return TVL_CAP_DAY_31;
        return TVL_CAP_INITIAL;
    }

    /// @return depositedUSDC The cost basis.
    /// @return currentValue What the wallet's shares are worth (before fee).
    /// @return accruedYield currentValue - depositedUSDC, floored at 0.
    function getPosition(address wallet)
        external
        view
        returns (uint256 depositedUSDC, uint256 currentValue, uint256 accruedYield)
    {
        depositedUSDC = costBasisUSDC[wallet];
        uint256 walletShares = DV_USDC.balanceOf(wallet);
        uint256 supply = DV_USDC.totalSupply();
        if (walletShares == 0 || supply == 0) return (depositedUSDC, 0, 0);
        currentValue = _sharesToAssets(walletShares, totalVaultAssets(), supply);
        accruedYield = currentValue > depositedUSDC ? currentValue - depositedUSDC : 0;
    }

    /// @notice Assets held in each venue; Morpho counts as 0 while its `convertToAssets` fails.
    function getCurrentAllocation() external view returns (uint256 aaveAssets, uint256 morphoAssets) {
        VaultCapacity memory capacity = _capacity();
        return (capacity.aaveAssetsHeld, capacity.morphoAssetsHeld);
    }

    /// @notice The venue a deposit of `amount` would go to; reverts like the deposit's routing step.
    function getRecommendedRoute(uint256 amount) external view returns (uint8) {
        return _selectVenue(amount);
    }

    function oracleStatus() external view returns (uint256 lastObservationTime, bool fresh) {
        return (ORACLE.lastObservationTime(), ORACLE.isFresh());
    }

    /// @notice What could be withdrawn right now, per venue. Never reverts.
    function withdrawCapacity() external view returns (VaultCapacity memory) {
        return _capacity();
    }

    // ================================================= emergency multisig

    function pauseDeposits() external onlyEmergencyMultisig {
        depositsPaused = true;
        emit DepositsPaused(true);
    }

    function unpauseDeposits() external onlyEmergencyMultisig {
        depositsPaused = false;
        emit DepositsPaused(false);
    }

    function setMorphoViewGas(uint256 newGas) external onlyEmergencyMultisig {
        if (newGas < MIN_MORPHO_VIEW_GAS || newGas > MAX_MORPHO_VIEW_GAS) {
            revert MorphoViewGasOutOfBounds(newGas, MIN_MORPHO_VIEW_GAS, MAX_MORPHO_VIEW_GAS);
        }
        emit MorphoViewGasUpdated(morphoViewGas, newGas);
        morphoViewGas = newGas;
    }

    function proposeTreasuryRotation(address newTreasury) external onlyEmergencyMultisig {
        FEE_COLLECTOR.proposeTreasuryRotation(newTreasury);
    }

    function executeTreasuryRotation() external onlyEmergencyMultisig {
        FEE_COLLECTOR.executeTreasuryRotation();
    }

    function cancelTreasuryRotation() external onlyEmergencyMultisig {
        FEE_COLLECTOR.cancelTreasuryRotation();
    }

    // ============================================================= internal

    function _authorise(address wallet) private {
        authorizedWallets[wallet] = true;
        emit WalletAuthorised(wallet);
    }

    /// @dev The live deposit's steps after its modifiers, in this order.
    function _deposit(uint256 amount, address wallet, uint256 minSharesOut) private returns (uint256 shares) {
        if (amount < MIN_DEPOSIT) revert InvalidAmount();
        uint256 assetsBefore = totalVaultAssets();
        uint256 cap = currentTVLCap();
        if (assetsBefore + amount > cap) revert TVLCapExceeded(amount, cap);
        uint256 supplyBefore = DV_USDC.totalSupply();

        // Pulled before the oracle is consulted: a failed pull reverts with the token's own reason string.
        USDC.safeTransferFrom(wallet, address(this), amount);
        try ORACLE.recordObservation() {} catch {}
        if (!ORACLE.isFresh()) revert StaleOracle();
        uint8 vaultType = _selectVenue(amount);

        if (vaultType == VAULT_TYPE_AAVE) {
            USDC.forceApprove(address(AAVE_POOL), amount);
            AAVE_POOL.supply(address(USDC), amount, address(this), 0);
        } else {
            USDC.forceApprove(address(MORPHO_VAULT), amount);
            MORPHO_VAULT.deposit(amount, address(this));
        }

        shares = Math.mulDiv(amount, supplyBefore + VIRTUAL_OFFSET, assetsBefore + VIRTUAL_OFFSET);
        if (shares == 0) revert ZeroAmount();
        if (shares < minSharesOut) revert SlippageExceeded(shares, minSharesOut);
        DV_USDC.mint(wallet, shares);
        costBasisUSDC[wallet] += amount;
        emit Deposited(wallet, amount, shares, vaultType);
    }

    /// @dev The oracle's venue if it can take `amount`, else the other one, else `NoSafeRoute`. The oracle is asked
    ///      without a try, so `NoSafeVault` and a Morpho revert come out unchanged.
    function _selectVenue(uint256 amount) private view returns (uint8) {
        (, uint8 recommended,) = ORACLE.getOptimalVault();
        if (_canTake(recommended, amount)) return recommended;
        uint8 other = recommended == VAULT_TYPE_AAVE ? VAULT_TYPE_MORPHO : VAULT_TYPE_AAVE;
        if (_canTake(other, amount)) return other;
        revert NoSafeRoute(amount);
    }

    function _canTake(uint8 vaultType, uint256 amount) private view returns (bool) {
        bool capacity;
        if (vaultType == VAULT_TYPE_AAVE) {
            try AAVE_POOL.getConfiguration(address(USDC)) returns (IAaveV3Pool.ReserveConfigurationMap memory config) {
                capacity = config.data & AAVE_ACTIVE_MASK != 0 && config.data & AAVE_FROZEN_MASK == 0
                    && config.data & AAVE_PAUSED_MASK == 0 && USDC.balanceOf(address(A_TOKEN)) >= amount;
            } catch {}
        } else {
            try MORPHO_VAULT.maxDeposit(address(this)) returns (uint256 maxIn) {
                capacity = maxIn >= amount;
            } catch {}
        }
        if (!capacity) return false;
        try ORACLE.isVaultSafe(vaultType) returns (bool safe) {
            return safe;
        } catch {
            return false;
        }
    }

    /// @dev The live withdrawal's venue steps: takes the gross value of `shares` (already burnt) from the venues, pro rata
    ///      to holdings, redirecting a leg its venue cannot pay, and returns the USDC actually received.
    function _exitVenues(address wallet, uint256 shares) private returns (uint256 received) {
        VaultCapacity memory capacity = _capacity();
        if (!capacity.morphoReachable) revert MorphoUnreachable();
        uint256 held = capacity.aaveAssetsHeld + capacity.morphoAssetsHeld;
        // Shares left while the venues hold nothing (dust after the last full exit) are not a liquidity shortage.
        if (held == 0) revert ZeroAmount();
        uint256 gross = _sharesToAssets(shares, held, DV_USDC.totalSupply() + shares);

        uint256 targetAave;
        if (capacity.morphoAssetsHeld == 0) targetAave = gross;
        else if (capacity.aaveAssetsHeld != 0) targetAave = Math.mulDiv(gross, capacity.aaveAssetsHeld, held);
        uint256 targetMorpho = gross - targetAave;
        if (capacity.totalWithdrawCap < gross) revert InsufficientVaultLiquidity(gross, capacity.totalWithdrawCap);

        uint256 fromAave = targetAave;
        uint256 fromMorpho = targetMorpho;
        if (targetAave > capacity.aaveWithdrawCap) {
            fromAave = capacity.aaveWithdrawCap;
            fromMorpho = gross - fromAave;
        } else if (targetMorpho > capacity.morphoWithdrawCap) {
            fromMorpho = capacity.morphoWithdrawCap;
            fromAave = gross - fromMorpho;
        }
        if (fromAave != targetAave) {
            emit ExitRedirected(
                wallet, targetAave, targetMorpho, fromAave, fromMorpho, targetMorpho > capacity.morphoWithdrawCap
            );
        }

        uint256 balanceBefore = USDC.balanceOf(address(this));
        if (fromAave > 0) AAVE_POOL.withdraw(address(USDC), fromAave, address(this));
        if (fromMorpho > 0) MORPHO_VAULT.withdraw(fromMorpho, address(this), address(this));
        received = USDC.balanceOf(address(this)) - balanceBefore;
        if (received == 0) revert InsufficientVaultLiquidity(gross, 0);
    }

    /// @dev The live capacity plan. Never reverts: the Morpho view runs under `morphoViewGas`, and only
    ///      when the router holds Morpho shares.
    function _capacity() private view returns (VaultCapacity memory capacity) {
        try A_TOKEN.balanceOf(address(this)) returns (uint256 held) {
            capacity.aaveAssetsHeld = held;
        } catch {}
        try USDC.balanceOf(address(A_TOKEN)) returns (uint256 idle) {
            capacity.aaveIdleLiquidity = idle;
        } catch {}
        if (_aaveIsWithdrawable()) {
            capacity.aaveWithdrawCap = Math.min(capacity.aaveAssetsHeld, capacity.aaveIdleLiquidity);
        }

        uint256 morphoShares;
        try MORPHO_VAULT.balanceOf(address(this)) returns (uint256 balance) {
            morphoShares = balance;
        } catch {}
        capacity.morphoReachable = true;
        if (morphoShares > 0) {
            try MORPHO_VAULT.convertToAssets{gas: morphoViewGas}(morphoShares) returns (uint256 value) {
                capacity.morphoAssetsHeld = value;
            } catch {
                capacity.morphoReachable = false;
            }
        }
        if (capacity.morphoAssetsHeld > 0) {
            try MORPHO_VAULT.maxWithdraw(address(this)) returns (uint256 maxOut) {
                capacity.morphoWithdrawCap = Math.min(capacity.morphoAssetsHeld, maxOut);
            } catch {}
        }
        capacity.totalWithdrawCap = capacity.aaveWithdrawCap + capacity.morphoWithdrawCap;
    }

    /// @dev Active and not paused (a frozen reserve still pays out); a reverting configuration read counts as no.
    function _aaveIsWithdrawable() private view returns (bool) {
        try AAVE_POOL.getConfiguration(address(USDC)) returns (IAaveV3Pool.ReserveConfigurationMap memory config) {
            return config.data & AAVE_ACTIVE_MASK != 0 && config.data & AAVE_PAUSED_MASK == 0;
        } catch {
            return false;
        }
    }

    /// @dev `shares·(A+V)/(S+V)` rounded down, capped at the assets held.
    function _sharesToAssets(uint256 shares, uint256 assets, uint256 supply) private pure returns (uint256) {
        return Math.min(Math.mulDiv(shares, assets + VIRTUAL_OFFSET, supply + VIRTUAL_OFFSET), assets);
    }

    /// @dev 10 % of the yield, rounded up (the fee collector's `calculateFee`).
    function _fee(uint256 yieldEarned) private pure returns (uint256) {
        return Math.mulDiv(yieldEarned, FEE_BPS, BPS_DENOMINATOR, Math.Rounding.Ceil);
    }
}
