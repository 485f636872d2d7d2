// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {IERC4626} from "@openzeppelin/contracts/interfaces/IERC4626.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IAaveV3Pool} from "./interfaces/IAaveV3Pool.sol";
import {IVaultOracle} from "./interfaces/IVaultOracle.sol";

/// @title VaultOracle
/// @notice The devnet's yield oracle, reproducing the live one: it measures each venue's rate at
///         every observation (Aave's reserve liquidity rate; Morpho's share-price growth over a 365.25-day year),
///         keeps cumulative rate sums with a ring of 48 checkpoints, and derives a 4-hour time-weighted rate (TWAR)
///         that decides where new deposits go.
/// @dev The Morpho share-price read has no try anywhere: when the Morpho vault's `convertToAssets` reverts, so do
///      `isVaultSafe(1)`, `getAllRates`, `getOptimalVault` and `recordObservation`, exactly as on the live chain.
///      Devnet extra (owner only, not on the live contract): `setObservationsPaused`, which makes
///      `recordObservation` revert so a test can let the oracle go stale while every venue is healthy.
contract VaultOracle is IVaultOracle, Ownable2Step {
    uint8 private constant VAULT_TYPE_AAVE = 0;
    uint8 private constant VAULT_TYPE_MORPHO = 1;
    uint256 public constant TWAR_WINDOW = 14_400;
    uint256 public constant MIN_OBSERVATION_INTERVAL = 300;
    uint256 public constant BUFFER_SIZE = 48;
    uint256 public constant RAY = 1e27;
    /// @notice 365.25 days.
    uint256 public constant SECONDS_PER_YEAR = 31_557_600;
    /// @notice Aave is safe up to 90 % utilisation: the aToken must hold at least 10 % of its supply in USDC.
    uint256 public constant UTILISATION_THRESHOLD_BPS = 9_000;
    uint256 public constant BPS_DENOMINATOR = 10_000;
    /// @notice The Morpho share amount whose value is the share price (1e6 whole 18-decimal shares).
    uint256 public constant SHARE_UNIT = 1e24;
    /// @notice `SHARE_UNIT` is at peg when it converts to at least this many USDC base units.
    uint256 public constant MORPHO_PEG_ASSETS = 1e12;
    uint256 public constant MAX_STALENESS = 7_200;
    /// @notice `minDifferentialRay` at deployment: 0.2 %.
    uint256 public constant DEFAULT_MIN_DIFFERENTIAL_RAY = 2e24;
    uint256 public constant MIN_DIFFERENTIAL_RAY_LOWER_BOUND = 1e24;
    uint256 public constant MIN_DIFFERENTIAL_RAY_UPPER_BOUND = 1e25;
    uint256 public constant MIN_DIFFERENTIAL_RAY_CHANGE_DELAY = 24 hours;

    // solhint-disable var-name-mixedcase
    IAaveV3Pool public immutable AAVE_POOL;
    address public immutable A_TOKEN;
    address public immutable USDC;
    IERC4626 public immutable MORPHO_VAULT;
    // solhint-enable var-name-mixedcase

    /// @dev One observation: its time, the Morpho share price, and both cumulative sums truncated to uint224.
    struct Checkpoint {
        uint256 timestamp;
        uint256 morphoSharePrice;
        uint224 aaveCumulative;
        uint224 morphoCumulative;
    }

    /// @notice Morpho must beat Aave's TWAR by this much (ray) to be chosen while Aave is safe.
    uint256 public minDifferentialRay = DEFAULT_MIN_DIFFERENTIAL_RAY;
    uint256 public pendingMinDifferentialRay;
    uint256 public pendingMinDifferentialRayEffectiveAt;
    /// @notice Σ spot × seconds, up to `lastObservationTime`.
    uint256 public aaveCumulative;
    uint256 public morphoCumulative;
    uint256 public aaveSpotRate;
    uint256 public morphoSpotRate;
    uint256 public lastObservationTime;
    /// @notice Set to Aave by the constructor and never written again (the live oracle's `recordObservation` does
    ///         not update it), so it reads 0 for ever; the route is `getOptimalVault()`'s.
    uint8 public lastOptimalVaultType;
    /// @notice The Morpho share price the next rise is measured from; it moves only when the price rises.
    uint256 public lastMorphoSharePrice;

    Checkpoint[BUFFER_SIZE] private _checkpoints;
    /// @notice How many checkpoints the ring holds (at most `BUFFER_SIZE`).
    uint256 public checkpointCount;
    uint256 private _nextCheckpoint;
    /// @notice Devnet extra: while true `recordObservation` reverts.
    bool public observationsPaused;

    event ObservationRecorded(uint256 indexed timestamp, uint256 aaveRate, uint256 morphoRate);
    event MinDifferentialRayUpdateScheduled(uint256 oldValue, uint256 newValue, uint256 effectiveAt);
    event MinDifferentialRayUpdated(uint256 oldValue, uint256 newValue);
    event MinDifferentialRayUpdateCancelled(uint256 cancelledValue);
    event ObservationsPausedSet(bool paused);

    error NoSafeVault();
    error NoChange();
    error NoPendingMinDifferentialRay();
    error MinDifferentialRayOutOfBounds(uint256 provided, uint256 min, uint256 max);
    error MinDifferentialRayTimelockActive(uint256 effectiveAt);
    error OwnershipRenouncementDisabled();
    error ZeroAavePool();
    error ZeroAToken();
    error ZeroUsdc();
    error ZeroMorphoVault();
    error ObservationsPaused();

    /// @dev Reads the venues once: the current Aave rate becomes the first spot, the Morpho price the first baseline.
    constructor(IAaveV3Pool aavePool, address aToken, address usdc, IERC4626 morphoVault) Ownable(msg.sender) {
        if (address(aavePool) == address(0)) revert ZeroAavePool();
        if (aToken == address(0)) revert ZeroAToken();
        if (usdc == address(0)) revert ZeroUsdc();
        if (address(morphoVault) == address(0)) revert ZeroMorphoVault();
        AAVE_POOL = aavePool;
        A_TOKEN = aToken;
        USDC = usdc;
        MORPHO_VAULT = morphoVault;
        aaveSpotRate = _aaveLiquidityRate();
        lastMorphoSharePrice = morphoVault.convertToAssets(SHARE_UNIT);
        lastObservationTime = block.timestamp;
        lastOptimalVaultType = VAULT_TYPE_AAVE;
    }

    // --------------------------------------------------------- observations

    /// @notice Measures both venues' rates and writes a checkpoint. Permissionless; a no-op within
    ///         `MIN_OBSERVATION_INTERVAL` of the last observation.
    function recordObservation() external {
        if (observationsPaused) revert ObservationsPaused();
        uint256 elapsed = block.timestamp - lastObservationTime;
        if (elapsed < MIN_OBSERVATION_INTERVAL) return;

        aaveCumulative += aaveSpotRate * elapsed;
        morphoCumulative += morphoSpotRate * elapsed;
        uint256 newAaveSpot = _aaveLiquidityRate();
        uint256 price = MORPHO_VAULT.convertToAssets(SHARE_UNIT);
        uint256 baseline = lastMorphoSharePrice;
        uint256 newMorphoSpot;
        if (price > baseline) {
            // A zero baseline (a vault that was worthless) has no growth rate; start measuring from here.
            if (baseline > 0) newMorphoSpot = (price - baseline) * SECONDS_PER_YEAR * RAY / baseline / elapsed;
            lastMorphoSharePrice = price;
        }

        _checkpoints[_nextCheckpoint] =
            Checkpoint(block.timestamp, price, uint224(aaveCumulative), uint224(morphoCumulative));
        _nextCheckpoint = (_nextCheckpoint + 1) % BUFFER_SIZE;
        if (checkpointCount < BUFFER_SIZE) checkpointCount += 1;

        aaveSpotRate = newAaveSpot;
        morphoSpotRate = newMorphoSpot;
        lastObservationTime = block.timestamp;
        emit ObservationRecorded(block.timestamp, newAaveSpot, newMorphoSpot);
    }

    /// @notice Seconds since the last observation.
    function lastGoodObservationAge() public view returns (uint256) {
        return block.timestamp - lastObservationTime;
    }

    function isFresh() public view returns (bool) {
        return lastGoodObservationAge() <= MAX_STALENESS;
    }

    /// @notice The `index`-th checkpoint, oldest first (devnet view for tests; the live ring is internal).
    function getCheckpoint(uint256 index) external view returns (Checkpoint memory) {
        require(index < checkpointCount, "no such checkpoint");
        return _checkpoints[(_oldestCheckpoint() + index) % BUFFER_SIZE];
    }

    // ---------------------------------------------------------------- rates

    /// @notice Both venues' stored spot rates, their TWARs carried up to now, and their safety.
    function getAllRates() public view returns (VaultRate[] memory rates) {
        (uint256 aaveTwar, uint256 morphoTwar) = _twar();
        rates = new VaultRate[](2);
        rates[0] = VaultRate(address(AAVE_POOL), VAULT_TYPE_AAVE, aaveSpotRate, aaveTwar, _isAaveSafe());
        rates[1] = VaultRate(address(MORPHO_VAULT), VAULT_TYPE_MORPHO, morphoSpotRate, morphoTwar, _isMorphoSafe());
    }

    /// @notice Morpho when it is safe and its TWAR beats Aave's by `minDifferentialRay`, or Aave is unsafe; else
    ///         Aave. Reverts `NoSafeVault` when neither is safe.
    function getOptimalVault() external view returns (address vault, uint8 vaultType, uint256 twarRate) {
        (bool anySafe, uint8 selected, uint256 twar) = _select();
        if (!anySafe) revert NoSafeVault();
        return (selected == VAULT_TYPE_MORPHO ? address(MORPHO_VAULT) : address(AAVE_POOL), selected, twar);
    }

    function isVaultSafe(uint8 vaultType) external view returns (bool) {
        if (vaultType == VAULT_TYPE_AAVE) return _isAaveSafe();
        if (vaultType == VAULT_TYPE_MORPHO) return _isMorphoSafe();
        return false;
    }

    // ------------------------------------------------------------- owner

    /// @notice Schedules a new Morpho threshold, effective `MIN_DIFFERENTIAL_RAY_CHANGE_DELAY` from now.
    function setMinDifferentialRay(uint256 newValue) external onlyOwner {
        if (newValue < MIN_DIFFERENTIAL_RAY_LOWER_BOUND || newValue > MIN_DIFFERENTIAL_RAY_UPPER_BOUND) {
            revert MinDifferentialRayOutOfBounds(
                newValue, MIN_DIFFERENTIAL_RAY_LOWER_BOUND, MIN_DIFFERENTIAL_RAY_UPPER_BOUND
            );
        }
        if (newValue == minDifferentialRay) revert NoChange();
        uint256 effectiveAt = block.timestamp + MIN_DIFFERENTIAL_RAY_CHANGE_DELAY;
        pendingMinDifferentialRay = newValue;
        pendingMinDifferentialRayEffectiveAt = effectiveAt;
        emit MinDifferentialRayUpdateScheduled(minDifferentialRay, newValue, effectiveAt);
    }

    /// @notice Applies the scheduled threshold once its time has come. Anyone may call it.
    function executeMinDifferentialRay() external {
        uint256 effectiveAt = pendingMinDifferentialRayEffectiveAt;
        if (effectiveAt == 0) revert NoPendingMinDifferentialRay();
        if (block.timestamp < effectiveAt) revert MinDifferentialRayTimelockActive(effectiveAt);
        uint256 oldValue = minDifferentialRay;
        minDifferentialRay = pendingMinDifferentialRay;
        pendingMinDifferentialRay = 0;
        pendingMinDifferentialRayEffectiveAt = 0;
        emit MinDifferentialRayUpdated(oldValue, minDifferentialRay);
    }

    function cancelPendingMinDifferentialRay() external onlyOwner {
        if (pendingMinDifferentialRayEffectiveAt == 0) revert NoPendingMinDifferentialRay();
        uint256 cancelled = pendingMinDifferentialRay;
        pendingMinDifferentialRay = 0;
        pendingMinDifferentialRayEffectiveAt = 0;
        emit MinDifferentialRayUpdateCancelled(cancelled);
    }

    /// @notice Disabled: the oracle always has an owner.
    function renounceOwnership() public pure override {
        revert OwnershipRenouncementDisabled();
    }

    /// @notice Devnet extra: makes `recordObservation` revert (true), so the oracle goes stale after
    ///         `MAX_STALENESS` even though every deposit tries to record; false resumes.
    function setObservationsPaused(bool paused) external onlyOwner {
        observationsPaused = paused;
        emit ObservationsPausedSet(paused);
    }

    // -------------------------------------------------------------- internal

    function _select() private view returns (bool anySafe, uint8 selected, uint256 twar) {
        (uint256 aaveTwar, uint256 morphoTwar) = _twar();
        bool aaveSafe = _isAaveSafe();
        bool morphoSafe = _isMorphoSafe();
        if (!aaveSafe && !morphoSafe) return (false, 0, 0);
        if (morphoSafe && (!aaveSafe || morphoTwar >= aaveTwar + minDifferentialRay)) {
            return (true, VAULT_TYPE_MORPHO, morphoTwar);
        }
        return (true, VAULT_TYPE_AAVE, aaveTwar);
    }

    /// @dev The cumulative sums carried to now, over the span since the latest checkpoint at or before
    ///      `now − TWAR_WINDOW` (the oldest one when none is that old). The spot rates when there is no span.
    function _twar() private view returns (uint256 aaveTwar, uint256 morphoTwar) {
        uint256 count = checkpointCount;
        if (count == 0) return (aaveSpotRate, morphoSpotRate);
        uint256 sinceLast = block.timestamp - lastObservationTime;
        uint256 aaveNow = aaveCumulative + aaveSpotRate * sinceLast;
        uint256 morphoNow = morphoCumulative + morphoSpotRate * sinceLast;

        uint256 oldest = _oldestCheckpoint();
        Checkpoint storage since = _checkpoints[oldest];
        if (block.timestamp >= TWAR_WINDOW) {
            uint256 windowStart = block.timestamp - TWAR_WINDOW;
            for (uint256 i = 0; i < count; i++) {
                Checkpoint storage checkpoint = _checkpoints[(oldest + i) % BUFFER_SIZE];
                if (checkpoint.timestamp <= windowStart) since = checkpoint;
            }
        }
        if (block.timestamp == since.timestamp) return (aaveSpotRate, morphoSpotRate);
        uint256 span = block.timestamp - since.timestamp;
        unchecked {
            // The checkpoints keep 224 bits; the difference wraps the same way the sums did.
            aaveTwar = uint256(uint224(aaveNow) - since.aaveCumulative) / span;
            morphoTwar = uint256(uint224(morphoNow) - since.morphoCumulative) / span;
        }
    }

    function _oldestCheckpoint() private view returns (uint256) {
        return checkpointCount < BUFFER_SIZE ? 0 : _nextCheckpoint;
    }

    function _aaveLiquidityRate() private view returns (uint256) {
        return AAVE_POOL.getReserveData(USDC).currentLiquidityRate;
    }

    /// @dev Safe while utilisation is at most 90 %: an empty reserve, or idle USDC of at least 10 % of the supply.
    function _isAaveSafe() private view returns (bool) {
        uint256 supplied = IERC20(A_TOKEN).totalSupply();
        if (supplied == 0) return true;
        return IERC20(USDC).balanceOf(A_TOKEN)
            >= supplied * (BPS_DENOMINATOR - UTILISATION_THRESHOLD_BPS) / BPS_DENOMINATOR;
    }

    /// @dev At or above peg. No try: a reverting Morpho view makes every caller revert, as on the live oracle.
    function _isMorphoSafe() private view returns (bool) {
        return MORPHO_VAULT.convertToAssets(SHARE_UNIT) >= MORPHO_PEG_ASSETS;
    }
}
