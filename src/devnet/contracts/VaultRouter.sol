// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC4626} from "@openzeppelin/contracts/interfaces/IERC4626.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Permit.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";
import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";
import {Nonces} from "@openzeppelin/contracts/utils/Nonces.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";
import {FeeCollector} from "./FeeCollector.sol";
import {IAaveV3Pool} from "./interfaces/IAaveV3Pool.sol";
import {IVaultOracle} from "./interfaces/IVaultOracle.sol";
import {ShareToken} from "./ShareToken.sol";

/// @title VaultRouter
/// @notice The devnet's implementation of the vault router of PROTOCOL.md: registered wallets deposit USDC, which
///         goes to the venue the oracle picks (Aave V3 or a Morpho ERC-4626 vault), and receive non-transferable
///         dvUSDC shares; they redeem shares for USDC taken pro rata from both venues, minus a 10 % fee on the
///         realised yield. The router itself holds the aTokens and the Morpho shares.
/// @dev Share math uses a virtual offset of 1e6 on both assets and supply. Views that value the position
///      (`totalVaultAssets`, `pricePerShare`, `getPosition`, the previews) call Morpho's `convertToAssets`
///      directly, so they revert when it does, like the real deployment; `withdrawCapacity` and
///      `getCurrentAllocation` degrade instead. Deposits and withdrawals then revert with `MorphoUnreachable`.
contract VaultRouter is EIP712, Nonces, ReentrancyGuard {
    using SafeERC20 for IERC20;

    uint8 private constant VAULT_TYPE_AAVE = 0;
    uint8 private constant VAULT_TYPE_MORPHO = 1;
    uint256 private constant VIRTUAL_OFFSET = 1e6;
    uint256 private constant AAVE_ACTIVE_MASK = 1 << 56;
    uint256 private constant AAVE_FROZEN_MASK = 1 << 57;
    uint256 private constant AAVE_PAUSED_MASK = 1 << 60;

    uint256 public constant MIN_DEPOSIT = 10e6;
    uint256 public constant TVL_CAP_INITIAL = 500_000e6;
    uint256 public constant TVL_CAP_DAY_31 = 2_000_000e6;
    uint256 public constant TVL_CAP_REMOVED = type(uint256).max;
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
    /// @notice Gas given to Morpho's views in `withdrawCapacity`/`getCurrentAllocation`, so a broken venue
    ///         cannot make them run out of gas.
    uint256 public morphoViewGas = 200_000;

    /// @dev What redeeming some shares of one wallet is worth, before any USDC moves.
    struct Quote {
        uint256 gross;
        uint256 principal;
        uint256 yieldEarned;
        uint256 fee;
    }

    event Deposited(address indexed wallet, uint256 usdcAmount, uint256 dvUsdcMinted, uint8 indexed vaultType);
    event Withdrawn(
        address indexed wallet, uint256 dvUsdcBurned, uint256 usdcReturned, uint256 yieldEarned, uint256 feePaid
    );
    event WalletAuthorised(address indexed wallet);
    event OperatorSet(address indexed wallet, address indexed operator, bool approved);
    event DepositsPaused(bool paused);
    event ExitRedirected(
        address indexed wallet,
        uint256 targetAave,
        uint256 targetMorpho,
        uint256 actualAave,
        uint256 actualMorpho,
        bool shortLeg
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

    modifier onlyEmergencyMultisig() {
        if (msg.sender != EMERGENCY_MULTISIG) revert NotEmergencyMultisig();
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
        if (
            address(usdc) == address(0) || address(aToken) == address(0) || address(aavePool) == address(0)
                || address(morphoVault) == address(0) || address(oracle) == address(0)
                || address(feeCollector) == address(0) || address(shareToken) == address(0)
                || emergencyMultisig == address(0)
        ) revert ZeroAddress();
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
    ///         relayer can pay the gas. Smart-contract wallets sign through ERC-1271.
    function initializeFor(address wallet, uint256 deadline, bytes calldata sig) external {
        if (wallet == address(0)) revert ZeroAddress();
        if (authorizedWallets[wallet]) revert WalletAlreadyAuthorised();
        if (block.timestamp > deadline) revert PermitExpired();
        bytes32 digest =
            _hashTypedDataV4(keccak256(abi.encode(INITIALIZE_FOR_TYPEHASH, wallet, deadline, _useNonce(wallet))));
        if (!SignatureChecker.isValidSignatureNow(wallet, digest, sig)) revert InvalidSignature();
        _authorise(wallet);
    }

    /// @notice Lets `operator` deposit and withdraw for `msg.sender` (USDC still only moves to and from the wallet).
    function setOperator(address operator, bool approved) external {
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
    ) external nonReentrant returns (uint256) {
        if (block.timestamp > deadline) revert PermitExpired();
        try IERC20Permit(address(USDC)).permit(wallet, address(this), amount, deadline, v, r, s) {} catch {}
        uint256 currentAllowance = USDC.allowance(wallet, address(this));
        if (currentAllowance < amount) revert InsufficientPermitAllowance(currentAllowance, amount);
        return _deposit(amount, wallet, minSharesOut);
    }

    // ========================================================== money out

    /// @notice Redeems `shares` of `wallet` for USDC sent to `wallet`. Never paused.
    function withdraw(uint256 shares, address wallet, uint256 minUsdcOut)
        external
        nonReentrant
        returns (uint256 usdcReturned)
    {
        _requireAuthorised(wallet);
        if (shares == 0) revert ZeroAmount();
        uint256 walletShares = DV_USDC.balanceOf(wallet);
        if (shares > walletShares) revert InsufficientShares(shares, walletShares);

        Quote memory quote = _quote(shares, wallet, walletShares, _totalAssetsForWrite(), DV_USDC.totalSupply());
        if (quote.gross == 0) revert ZeroAmount();
        (uint256 targetAave, uint256 targetMorpho, uint256 fromAave, uint256 fromMorpho) = _planExit(quote.gross);
        usdcReturned = quote.gross - quote.fee;
        if (usdcReturned < minUsdcOut) revert SlippageExceeded(usdcReturned, minUsdcOut);

        DV_USDC.burn(wallet, shares);
        costBasisUSDC[wallet] -= quote.principal;

        // The devnet only redirects because a venue could not pay its pro-rata leg, so `shortLeg` is always true.
        if (fromAave != targetAave) {
            emit ExitRedirected(wallet, targetAave, targetMorpho, fromAave, fromMorpho, true);
        }
        if (fromAave > 0) AAVE_POOL.withdraw(address(USDC), fromAave, address(this));
        if (fromMorpho > 0) MORPHO_VAULT.withdraw(fromMorpho, address(this), address(this));

        if (quote.fee > 0) {
            USDC.safeTransfer(address(FEE_COLLECTOR), quote.fee);
            FEE_COLLECTOR.collectFee(wallet, quote.yieldEarned);
        }
        USDC.safeTransfer(wallet, usdcReturned);
        emit Withdrawn(wallet, shares, usdcReturned, quote.yieldEarned, quote.fee);
    }

    // ================================================================ views

    function previewDeposit(uint256 assets) external view returns (uint256 shares) {
        return convertToShares(assets);
    }

    /// @notice USDC `wallet` would receive for `shares`, net of the fee.
    function previewRedeem(uint256 shares, address wallet) public view returns (uint256 usdcOut) {
        Quote memory quote =
            _quote(shares, wallet, DV_USDC.balanceOf(wallet), totalVaultAssets(), DV_USDC.totalSupply());
        return quote.gross - quote.fee;
    }

    /// @notice The fewest shares whose redemption pays `wallet` at least `desiredNetUsdc` after the fee.
    /// @dev Net USDC is non-decreasing in shares, so a binary search over [1, wallet shares] finds the minimum.
    function previewWithdrawNet(uint256 desiredNetUsdc, address wallet) external view returns (uint256 shares) {
        if (desiredNetUsdc == 0) revert ZeroAmount();
        uint256 walletShares = DV_USDC.balanceOf(wallet);
        if (walletShares == 0) revert NoPositionToWithdraw();
        uint256 assets = totalVaultAssets();
        uint256 supply = DV_USDC.totalSupply();

        uint256 maxDeliverable = _net(walletShares, wallet, walletShares, assets, supply);
        if (maxDeliverable == 0) revert PositionRoundsToZero();
        if (desiredNetUsdc > maxDeliverable) revert UnserviceableNet(desiredNetUsdc, maxDeliverable);

        uint256 low = 1;
        uint256 high = walletShares;
        while (low < high) {
            uint256 mid = (low + high) / 2;
            if (_net(mid, wallet, walletShares, assets, supply) >= desiredNetUsdc) high = mid;
            else low = mid + 1;
        }
        if (_net(low, wallet, walletShares, assets, supply) < desiredNetUsdc) revert PreviewMathDegenerate();
        return low;
    }

    function convertToShares(uint256 assets) public view returns (uint256) {
        return Math.mulDiv(assets, DV_USDC.totalSupply() + VIRTUAL_OFFSET, totalVaultAssets() + VIRTUAL_OFFSET);
    }

    function convertToAssets(uint256 shares) public view returns (uint256) {
        return Math.mulDiv(shares, totalVaultAssets() + VIRTUAL_OFFSET, DV_USDC.totalSupply() + VIRTUAL_OFFSET);
    }

    /// @notice USDC per whole share, 1e18-scaled.
    function pricePerShare() external view returns (uint256) {
        return Math.mulDiv(totalVaultAssets() + VIRTUAL_OFFSET, 1e18, DV_USDC.totalSupply() + VIRTUAL_OFFSET);
    }

    /// @notice aUSDC held plus the value of the Morpho shares held. Reverts when Morpho's `convertToAssets` does.
    function totalVaultAssets() public view returns (uint256) {
        return A_TOKEN.balanceOf(address(this)) + MORPHO_VAULT.convertToAssets(MORPHO_VAULT.balanceOf(address(this)));
    }

    /// @notice 500 000 USDC until day 31, 2 000 000 until day 91, then `type(uint256).max` (no cap).
    function currentTVLCap() public view returns (uint256) {
        uint256 elapsed = block.timestamp - DEPLOYMENT_TIME;
        if (elapsed < 30 days) return TVL_CAP_INITIAL;
        if (elapsed < 90 days) return TVL_CAP_DAY_31;
        return TVL_CAP_REMOVED;
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
        currentValue = convertToAssets(DV_USDC.balanceOf(wallet));
        accruedYield = currentValue > depositedUSDC ? currentValue - depositedUSDC : 0;
    }

    /// @notice Assets held in each venue; Morpho counts as 0 while its `convertToAssets` fails.
    function getCurrentAllocation() external view returns (uint256 aaveAssets, uint256 morphoAssets) {
        aaveAssets = _aaveAssetsHeld();
        (, morphoAssets) = _tryMorphoAssetsHeld();
    }

    function getRecommendedRoute(uint256 amount) external view returns (uint8) {
        return _selectVenue(amount);
    }

    function oracleStatus() external view returns (uint256 lastObservationTime, bool fresh) {
        return (ORACLE.lastObservationTime(), ORACLE.isFresh());
    }

    /// @notice What could be withdrawn right now, per venue. Never reverts: a failing Morpho view reports
    ///         `morphoReachable = false` with zero Morpho amounts.
    function withdrawCapacity()
        external
        view
        returns (
            uint256 aaveAssetsHeld,
            uint256 aaveIdleLiquidity,
            uint256 aaveWithdrawCap,
            uint256 morphoAssetsHeld,
            uint256 morphoWithdrawCap,
            bool morphoReachable,
            uint256 totalWithdrawCap
        )
    {
        aaveAssetsHeld = _aaveAssetsHeld();
        try USDC.balanceOf(address(A_TOKEN)) returns (uint256 idle) {
            aaveIdleLiquidity = idle;
        } catch {}
        aaveWithdrawCap = _aaveIsWithdrawable() ? Math.min(aaveAssetsHeld, aaveIdleLiquidity) : 0;
        (morphoReachable, morphoAssetsHeld) = _tryMorphoAssetsHeld();
        if (morphoReachable) {
            try MORPHO_VAULT.maxWithdraw{gas: morphoViewGas}(address(this)) returns (uint256 maxOut) {
                morphoWithdrawCap = Math.min(morphoAssetsHeld, maxOut);
            } catch {}
        }
        totalWithdrawCap = aaveWithdrawCap + morphoWithdrawCap;
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

    function setMorphoViewGas(uint256 gasLimit) external onlyEmergencyMultisig {
        morphoViewGas = gasLimit;
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

    function _requireAuthorised(address wallet) private view {
        if (!authorizedWallets[wallet] || (msg.sender != wallet && !_operators[wallet][msg.sender])) {
            revert NotAuthorised();
        }
    }

    /// @dev The checks run in the order of PROTOCOL.md §3; shares come from the pre-deposit snapshot.
    function _deposit(uint256 amount, address wallet, uint256 minSharesOut) private returns (uint256 shares) {
        if (depositsPaused) revert DepositsPausedError();
        _requireAuthorised(wallet);
        if (amount < MIN_DEPOSIT) revert InvalidAmount();
        uint256 assetsBefore = _totalAssetsForWrite();
        uint256 supplyBefore = DV_USDC.totalSupply();
        uint256 cap = currentTVLCap();
        if (cap != TVL_CAP_REMOVED && assetsBefore + amount > cap) revert TVLCapExceeded(amount, cap);

        // Anyone may keep the oracle fresh; a failing observation must not block deposits by itself.
        try ORACLE.recordObservation() {} catch {}
        if (!ORACLE.isFresh()) revert StaleOracle();
        uint8 vaultType = _selectVenue(amount);

        USDC.safeTransferFrom(wallet, address(this), amount);
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

    /// @dev The oracle's choice if that venue can take `amount`, else the other venue if it is safe and can.
    function _selectVenue(uint256 amount) private view returns (uint8) {
        uint8 preferred;
        try ORACLE.getOptimalVault() returns (address, uint8 vaultType, uint256) {
            preferred = vaultType;
        } catch {
            revert NoSafeRoute(amount);
        }
        if (preferred > VAULT_TYPE_MORPHO) revert NoSafeRoute(amount);
        if (_venueAccepts(preferred, amount)) return preferred;
        uint8 other = preferred == VAULT_TYPE_AAVE ? VAULT_TYPE_MORPHO : VAULT_TYPE_AAVE;
        if (ORACLE.isVaultSafe(other) && _venueAccepts(other, amount)) return other;
        revert NoSafeRoute(amount);
    }

    function _venueAccepts(uint8 vaultType, uint256 amount) private view returns (bool) {
        if (vaultType == VAULT_TYPE_AAVE) {
            uint256 configuration = AAVE_POOL.getConfiguration(address(USDC)).data;
            return configuration & AAVE_ACTIVE_MASK != 0
                && configuration & (AAVE_FROZEN_MASK | AAVE_PAUSED_MASK) == 0;
        }
        try MORPHO_VAULT.maxDeposit(address(this)) returns (uint256 maxIn) {
            return maxIn >= amount;
        } catch {
            return false;
        }
    }

    /// @dev Splits `gross` pro rata to holdings; a leg its venue cannot pay is redirected to the other venue.
    function _planExit(uint256 gross)
        private
        view
        returns (uint256 targetAave, uint256 targetMorpho, uint256 fromAave, uint256 fromMorpho)
    {
        uint256 aaveHeld = A_TOKEN.balanceOf(address(this));
        uint256 morphoHeld = MORPHO_VAULT.convertToAssets(MORPHO_VAULT.balanceOf(address(this)));
        uint256 held = aaveHeld + morphoHeld;
        targetAave = held == 0 ? 0 : Math.mulDiv(gross, aaveHeld, held);
        targetMorpho = gross - targetAave;

        uint256 aaveCap = _aaveIsWithdrawable() ? Math.min(aaveHeld, USDC.balanceOf(address(A_TOKEN))) : 0;
        uint256 morphoCap = Math.min(morphoHeld, MORPHO_VAULT.maxWithdraw(address(this)));
        if (aaveCap + morphoCap < gross) revert InsufficientVaultLiquidity(gross, aaveCap + morphoCap);

        fromAave = Math.min(targetAave, aaveCap);
        fromMorpho = gross - fromAave;
        if (fromMorpho > morphoCap) {
            fromMorpho = morphoCap;
            fromAave = gross - morphoCap;
        }
    }

    /// @dev Principal is the cost basis pro rata to shares; the fee is the fee collector's on the yield above it.
    function _quote(uint256 shares, address wallet, uint256 walletShares, uint256 assets, uint256 supply)
        private
        view
        returns (Quote memory quote)
    {
        // Capped at the assets held: with a share price below 1 the virtual shares would otherwise add a little.
        quote.gross = Math.min(Math.mulDiv(shares, assets + VIRTUAL_OFFSET, supply + VIRTUAL_OFFSET), assets);
        quote.principal = walletShares == 0 ? 0 : Math.mulDiv(costBasisUSDC[wallet], shares, walletShares);
        quote.yieldEarned = quote.gross > quote.principal ? quote.gross - quote.principal : 0;
        quote.fee = FEE_COLLECTOR.calculateFee(quote.yieldEarned);
    }

    function _net(uint256 shares, address wallet, uint256 walletShares, uint256 assets, uint256 supply)
        private
        view
        returns (uint256)
    {
        Quote memory quote = _quote(shares, wallet, walletShares, assets, supply);
        return quote.gross - quote.fee;
    }

    /// @dev Like `totalVaultAssets`, but a failing Morpho view becomes the router's own `MorphoUnreachable`.
    function _totalAssetsForWrite() private view returns (uint256) {
        uint256 morphoShares = MORPHO_VAULT.balanceOf(address(this));
        try MORPHO_VAULT.convertToAssets(morphoShares) returns (uint256 morphoAssets) {
            return A_TOKEN.balanceOf(address(this)) + morphoAssets;
        } catch {
            revert MorphoUnreachable();
        }
    }

    function _aaveAssetsHeld() private view returns (uint256 held) {
        try A_TOKEN.balanceOf(address(this)) returns (uint256 balance) {
            held = balance;
        } catch {}
    }

    function _aaveIsWithdrawable() private view returns (bool) {
        try AAVE_POOL.getConfiguration(address(USDC)) returns (IAaveV3Pool.ReserveConfigurationMap memory config) {
            return config.data & AAVE_ACTIVE_MASK != 0 && config.data & AAVE_PAUSED_MASK == 0;
        } catch {
            return false;
        }
    }

    function _tryMorphoAssetsHeld() private view returns (bool reachable, uint256 assets) {
        try MORPHO_VAULT.balanceOf{gas: morphoViewGas}(address(this)) returns (uint256 shares) {
            try MORPHO_VAULT.convertToAssets{gas: morphoViewGas}(shares) returns (uint256 value) {
                return (true, value);
            } catch {}
        } catch {}
        return (false, 0);
    }
}
