// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Metadata} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Metadata.sol";
import {IERC4626} from "@openzeppelin/contracts/interfaces/IERC4626.sol";
import {IAaveV3Pool} from "./interfaces/IAaveV3Pool.sol";
import {IVaultOracle} from "./interfaces/IVaultOracle.sol";

/// @notice The Morpho stand-in exposes its fixed rate; a real deployment would derive it from share-price history.
interface IFixedRateVault {
    function rateRay() external view returns (uint256);
}

/// @title VaultOracle
/// @notice Devnet implementation of the vault oracle: spot rates of Aave (the pool's `currentLiquidityRate`) and
///         Morpho (the stand-in's `rateRay`), a rate averaged over the last few observations ("twar"), venue
///         safety, and the venue choice of PROTOCOL.md §3.
/// @dev The twar is a plain average of the last `TWAR_WINDOW` observations (PROTOCOL.md allows a simpler average
///      on the devnet). Owner test knobs: pause recording (so the oracle goes stale even though deposits try to
///      record) and reset the history (so new rates take effect at once).
contract VaultOracle is IVaultOracle, Ownable {
    uint8 public constant VAULT_TYPE_AAVE = 0;
    uint8 public constant VAULT_TYPE_MORPHO = 1;
    /// @notice An observation older than this makes the oracle stale.
    uint256 public constant MAX_STALENESS = 2 hours;
    /// @notice `recordObservation` is a no-op this soon after the previous observation.
    uint256 public constant MIN_OBSERVATION_INTERVAL = 5 minutes;
    /// @notice How many observations the twar averages.
    uint256 public constant TWAR_WINDOW = 4;
    /// @notice Morpho must beat Aave by this much (0.2 %, ray) to be chosen while Aave is safe.
    uint256 public constant minDifferentialRay = 2e24;
    /// @notice Aave is safe while the aToken holds at least this share of its supply in USDC (utilisation <= 90 %).
    uint256 public constant MIN_AAVE_IDLE_BPS = 1000;

    // solhint-disable var-name-mixedcase
    IAaveV3Pool public immutable AAVE_POOL;
    address public immutable A_TOKEN;
    address public immutable USDC;
    IERC4626 public immutable MORPHO_VAULT;
    // solhint-enable var-name-mixedcase

    struct Observation {
        uint256 timestamp;
        uint256 aaveRate;
        uint256 morphoRate;
    }

    /// @dev Ring buffer of the last TWAR_WINDOW observations.
    Observation[TWAR_WINDOW] private _observations;
    uint256 public observationCount;
    uint256 public lastObservationTime;
    /// @notice While true `recordObservation` reverts (devnet knob to make the oracle stale).
    bool public observationsPaused;

    event ObservationRecorded(uint256 indexed timestamp, uint256 aaveRate, uint256 morphoRate);
    event ObservationsPausedSet(bool paused);
    event ObservationsReset();

    error NoSafeVault();
    error ObservationsPaused();

    constructor(IAaveV3Pool aavePool, address aToken, address usdc, IERC4626 morphoVault) Ownable(msg.sender) {
        AAVE_POOL = aavePool;
        A_TOKEN = aToken;
        USDC = usdc;
        MORPHO_VAULT = morphoVault;
    }

    // --------------------------------------------------------- observations

    /// @notice Records the current spot rates; permissionless, and a no-op within 5 minutes of the last one.
    function recordObservation() external {
        if (observationsPaused) revert ObservationsPaused();
        if (observationCount > 0 && block.timestamp < lastObservationTime + MIN_OBSERVATION_INTERVAL) return;
        _record();
    }

    /// @notice Seconds since the last observation (`type(uint256).max` when there is none).
    function lastGoodObservationAge() public view returns (uint256) {
        if (observationCount == 0) return type(uint256).max;
        return block.timestamp - lastObservationTime;
    }

    function isFresh() public view returns (bool) {
        return lastGoodObservationAge() <= MAX_STALENESS;
    }

    // ---------------------------------------------------------------- rates

    function getAllRates() public view returns (VaultRate[] memory rates) {
        (uint256 aaveTwar, uint256 morphoTwar) = _twar();
        rates = new VaultRate[](2);
        rates[0] = VaultRate(address(AAVE_POOL), VAULT_TYPE_AAVE, _aaveSpot(), aaveTwar, _isAaveSafe());
        rates[1] = VaultRate(address(MORPHO_VAULT), VAULT_TYPE_MORPHO, _morphoSpot(), morphoTwar, _isMorphoSafe());
    }

    /// @notice Morpho when it is safe and beats Aave by `minDifferentialRay` (or Aave is unsafe), else Aave.
    function getOptimalVault() external view returns (address vault, uint8 vaultType, uint256 twarRate) {
        VaultRate[] memory rates = getAllRates();
        VaultRate memory aave = rates[0];
        VaultRate memory morpho = rates[1];
        if (morpho.isSafe && (!aave.isSafe || morpho.twarRate >= aave.twarRate + minDifferentialRay)) {
            return (morpho.vault, morpho.vaultType, morpho.twarRate);
        }
        if (aave.isSafe) return (aave.vault, aave.vaultType, aave.twarRate);
        revert NoSafeVault();
    }

    function isVaultSafe(uint8 vaultType) external view returns (bool) {
        if (vaultType == VAULT_TYPE_AAVE) return _isAaveSafe();
        if (vaultType == VAULT_TYPE_MORPHO) return _isMorphoSafe();
        return false;
    }

    // ------------------------------------------------------ owner test knobs

    /// @notice Makes `recordObservation` revert (true) so the oracle goes stale after MAX_STALENESS, or resumes it.
    function setObservationsPaused(bool paused) external onlyOwner {
        observationsPaused = paused;
        emit ObservationsPausedSet(paused);
    }

    /// @notice Forgets the history and records one observation now, so rates set by the knobs apply immediately.
    function resetObservations() external onlyOwner {
        observationCount = 0;
        emit ObservationsReset();
        _record();
    }

    // -------------------------------------------------------------- internal

    function _record() private {
        uint256 aaveRate = _aaveSpot();
        uint256 morphoRate = _morphoSpot();
        _observations[observationCount % TWAR_WINDOW] = Observation(block.timestamp, aaveRate, morphoRate);
        observationCount += 1;
        lastObservationTime = block.timestamp;
        emit ObservationRecorded(block.timestamp, aaveRate, morphoRate);
    }

    /// @dev Average of the recorded observations in the window; the spot rates when there is none yet.
    function _twar() private view returns (uint256 aaveTwar, uint256 morphoTwar) {
        uint256 count = observationCount < TWAR_WINDOW ? observationCount : TWAR_WINDOW;
        if (count == 0) return (_aaveSpot(), _morphoSpot());
        for (uint256 i = 0; i < count; i++) {
            aaveTwar += _observations[i].aaveRate;
            morphoTwar += _observations[i].morphoRate;
        }
        return (aaveTwar / count, morphoTwar / count);
    }

    function _aaveSpot() private view returns (uint256) {
        return AAVE_POOL.getReserveData(USDC).currentLiquidityRate;
    }

    function _morphoSpot() private view returns (uint256) {
        return IFixedRateVault(address(MORPHO_VAULT)).rateRay();
    }

    /// @dev Utilisation <= 90 %: the USDC still in the aToken covers at least 10 % of its supply.
    function _isAaveSafe() private view returns (bool) {
        uint256 supplied = IERC20(A_TOKEN).totalSupply();
        if (supplied == 0) return true;
        return IERC20(USDC).balanceOf(A_TOKEN) * 10_000 >= supplied * MIN_AAVE_IDLE_BPS;
    }

    /// @dev At or above peg: one whole share converts to at least one whole USDC. A reverting view is unsafe.
    ///      Decimals are read here rather than in the constructor so the stack can be deployed in one batch.
    function _isMorphoSafe() private view returns (bool) {
        uint256 oneShare = 10 ** MORPHO_VAULT.decimals();
        uint256 peg = 10 ** IERC20Metadata(USDC).decimals();
        try MORPHO_VAULT.convertToAssets(oneShare) returns (uint256 assets) {
            return assets >= peg;
        } catch {
            return false;
        }
    }
}
