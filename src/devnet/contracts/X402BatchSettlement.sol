// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";
import {Multicall} from "@openzeppelin/contracts/utils/Multicall.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {IDepositCollector} from "./interfaces/IDepositCollector.sol";

/// @title X402BatchSettlement
/// @notice The devnet's x402 `batch-settlement` contract, installed at `x402BatchSettlementAddress` (src/sdk/chains.ts):
///         one escrow for every payment channel. A buyer deposits once into a channel (through a deposit collector),
///         then signs a cumulative voucher per request; the seller's side claims vouchers in batches, which moves the
///         claimed amount from the channel to the receiver's pending total, and `settle` pays that total out to the
///         receiver. What is never claimed goes back to the buyer by a cooperative refund (the receiver's side) or a
///         timed withdrawal (the buyer's side).
/// @dev Reproduces the public contract that `@x402/evm` 2.27 drives (its ABI, EIP-712 domain
///      `("x402 Batch Settlement", "1")` and types, events, errors, the order of each function's checks, the refund
///      nonce, the caps and the silent no-ops) so x402's own client, server and facilitator run against it unchanged.
///      A channel's id is the EIP-712 hash of its `ChannelConfig` under this contract's domain. Leaves out: nothing of
///      the interface; the bytecode is this project's, so it lives at the canonical address by `anvil_setCode`, not by
///      CREATE2, and the domain separator is rebuilt per call there (OpenZeppelin's `EIP712` cached it for the address
///      it was deployed at), a few hundred gas more than live.
contract X402BatchSettlement is EIP712, Multicall, ReentrancyGuardTransient {
    using SafeERC20 for IERC20;

    /// @notice A channel's identity, fixed at its first deposit: who pays and who may sign vouchers for them, who is
    ///         paid and who may authorize claims and refunds for them, the token, the buyer's withdrawal delay, a salt.
    struct ChannelConfig {
        address payer;
        address payerAuthorizer;
        address receiver;
        address receiverAuthorizer;
        address token;
        uint40 withdrawDelay;
        bytes32 salt;
    }

    /// @notice A channel's escrow and how much of it has been claimed for the receiver.
    struct ChannelState {
        uint128 balance;
        uint128 totalClaimed;
    }

    /// @notice The buyer's withdrawal in its waiting period (`initiatedAt` 0: none).
    struct WithdrawalState {
        uint128 amount;
        uint40 initiatedAt;
    }

    /// @notice What has been claimed for a receiver in a token across channels, and how much of it was paid out.
    struct ReceiverState {
        uint128 totalClaimed;
        uint128 totalSettled;
    }

    /// @notice What the buyer's voucher signature covers: the channel and a cumulative ceiling.
    struct Voucher {
        ChannelConfig channel;
        uint128 maxClaimableAmount;
    }

    /// @notice A voucher, its signature, and the cumulative amount claimed with it (at most its ceiling).
    struct VoucherClaim {
        Voucher voucher;
        bytes signature;
        uint128 totalClaimed;
    }

    uint40 public constant MIN_WITHDRAW_DELAY = 15 minutes;
    uint40 public constant MAX_WITHDRAW_DELAY = 30 days;

    bytes32 public constant CHANNEL_CONFIG_TYPEHASH = keccak256(
        "ChannelConfig(address payer,address payerAuthorizer,address receiver,address receiverAuthorizer,address token,uint40 withdrawDelay,bytes32 salt)"
    );
    bytes32 public constant VOUCHER_TYPEHASH = keccak256("Voucher(bytes32 channelId,uint128 maxClaimableAmount)");
    bytes32 public constant REFUND_TYPEHASH = keccak256("Refund(bytes32 channelId,uint256 nonce,uint128 amount)");
    bytes32 public constant CLAIM_ENTRY_TYPEHASH =
        keccak256("ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)");
    bytes32 public constant CLAIM_BATCH_TYPEHASH = keccak256(
        "ClaimBatch(ClaimEntry[] claims)ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)"
    );

    mapping(bytes32 channelId => ChannelState) public channels;
    /// @notice The nonce the next signed refund of a channel must carry; every refund that runs advances it.
    mapping(bytes32 channelId => uint256) public refundNonce;
    mapping(bytes32 channelId => WithdrawalState) public pendingWithdrawals;
    mapping(address receiver => mapping(address token => ReceiverState)) public receivers;

    event ChannelCreated(bytes32 indexed channelId, ChannelConfig config);
    event ChannelClosed(bytes32 indexed channelId, ChannelConfig config);
    event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 newBalance);
    event Claimed(bytes32 indexed channelId, address indexed sender, uint128 claimAmount, uint128 newTotalClaimed);
    event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount);
    event Refunded(bytes32 indexed channelId, address indexed sender, uint128 amount);
    event WithdrawInitiated(bytes32 indexed channelId, uint128 amount, uint40 finalizeAfter);
    event WithdrawFinalized(bytes32 indexed channelId, address indexed sender, uint128 amount);

    error InvalidChannel();
    error ZeroDeposit();
    error DepositOverflow();
    error InvalidSignature();
    error NotReceiverAuthorizer();
    error NotAuthorizedToClaim();
    error NotAuthorizedToRefund();
    error ClaimExceedsCeiling();
    error ClaimExceedsBalance();
    error WithdrawalAlreadyPending();
    error WithdrawalNotPending();
    error NotAuthorizedToFinalizeWithdraw();
    error WithdrawDelayNotElapsed();
    error NothingToWithdraw();
    error WithdrawAmountExceedsAvailable();
    error WithdrawDelayOutOfRange();
    error EmptyBatch();
    error DepositCollectionFailed();
    error InvalidCollector();
    error InvalidRefundNonce();
    error ZeroRefund();

    constructor() EIP712("x402 Batch Settlement", "1") {}

    // ------------------------------------------------------------------ deposits

    /// @notice Adds `amount` to the channel of `config`, pulled from its payer by `collector` with `collectorData`.
    /// @dev The balance is credited before the collector runs; the contract's own token balance must then have grown by
    ///      exactly `amount`, or the whole deposit reverts.
    function deposit(ChannelConfig calldata config, uint128 amount, address collector, bytes calldata collectorData)
        external
        nonReentrant
    {
        _requireOpenableConfig(config);
        if (amount == 0) revert ZeroDeposit();
        if (collector == address(0)) revert InvalidCollector();

        bytes32 channelId = getChannelId(config);
        ChannelState storage channel = channels[channelId];
        if (amount > type(uint128).max - channel.balance) revert DepositOverflow();
        channel.balance += amount;

        IERC20 token = IERC20(config.token);
        uint256 held = token.balanceOf(address(this));
        IDepositCollector(collector).collect(config.payer, config.token, amount, channelId, collectorData);
        if (token.balanceOf(address(this)) != held + amount) revert DepositCollectionFailed();

        if (channel.balance == amount && channel.totalClaimed == 0) emit ChannelCreated(channelId, config);
        emit Deposited(channelId, msg.sender, amount, channel.balance);
    }

    // ------------------------------------------------------------------ claims and settlement

    /// @notice Records vouchers, sent by each channel's receiver or receiver authorizer.
    function claim(VoucherClaim[] calldata voucherClaims) external nonReentrant {
        if (voucherClaims.length == 0) revert EmptyBatch();
        for (uint256 i; i < voucherClaims.length; ++i) {
            if (!_isReceiverSide(msg.sender, voucherClaims[i].voucher.channel)) revert NotAuthorizedToClaim();
            _applyClaim(voucherClaims[i]);
        }
    }

    /// @notice Records vouchers whose batch the (one) receiver authorizer of every row signed; anyone may send it.
    function claimWithSignature(VoucherClaim[] calldata voucherClaims, bytes calldata authorizerSignature)
        external
        nonReentrant
    {
        if (voucherClaims.length == 0) revert EmptyBatch();
        address authorizer = voucherClaims[0].voucher.channel.receiverAuthorizer;
        if (!SignatureChecker.isValidSignatureNow(authorizer, getClaimBatchDigest(voucherClaims), authorizerSignature))
        {
            revert InvalidSignature();
        }
        for (uint256 i; i < voucherClaims.length; ++i) {
            if (voucherClaims[i].voucher.channel.receiverAuthorizer != authorizer) revert NotReceiverAuthorizer();
            _applyClaim(voucherClaims[i]);
        }
    }

    /// @notice Pays `receiver` everything claimed for it in `token` and not yet paid; anyone may call it. Nothing to pay
    ///         is not an error: it returns without an event.
    function settle(address receiver, address token) external nonReentrant {
        ReceiverState storage totals = receivers[receiver][token];
        uint128 owed = totals.totalClaimed - totals.totalSettled;
        if (owed == 0) return;
        totals.totalSettled = totals.totalClaimed;
        IERC20(token).safeTransfer(receiver, owed);
        emit Settled(receiver, token, msg.sender, owed);
    }

    // ------------------------------------------------------------------ the buyer's timed withdrawal

    /// @notice Starts the waiting period for taking back `amount` of what is unclaimed (payer or payer authorizer).
    function initiateWithdraw(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        if (!_isPayerSide(msg.sender, config)) revert InvalidChannel();
        if (amount == 0) revert NothingToWithdraw();
        bytes32 channelId = getChannelId(config);
        WithdrawalState storage withdrawal = pendingWithdrawals[channelId];
        if (withdrawal.initiatedAt != 0) revert WithdrawalAlreadyPending();
        if (amount > _unclaimed(channels[channelId])) revert WithdrawAmountExceedsAvailable();

        uint40 startedAt = uint40(block.timestamp);
        withdrawal.amount = amount;
        withdrawal.initiatedAt = startedAt;
        emit WithdrawInitiated(channelId, amount, startedAt + config.withdrawDelay);
    }

    /// @notice After the delay, pays the payer the withdrawal, cut to what is still unclaimed by then.
    function finalizeWithdraw(ChannelConfig calldata config) external nonReentrant {
        if (!_isPayerSide(msg.sender, config)) revert NotAuthorizedToFinalizeWithdraw();
        bytes32 channelId = getChannelId(config);
        WithdrawalState storage withdrawal = pendingWithdrawals[channelId];
        if (withdrawal.initiatedAt == 0) revert WithdrawalNotPending();
        if (block.timestamp < uint256(withdrawal.initiatedAt) + config.withdrawDelay) revert WithdrawDelayNotElapsed();

        ChannelState storage channel = channels[channelId];
        uint128 unclaimed = _unclaimed(channel);
        uint128 paid = withdrawal.amount < unclaimed ? withdrawal.amount : unclaimed;
        delete pendingWithdrawals[channelId];
        channel.balance -= paid;

        emit WithdrawFinalized(channelId, msg.sender, paid);
        _closeIfEmpty(channelId, channel, config);
        if (paid != 0) IERC20(config.token).safeTransfer(config.payer, paid);
    }

    // ------------------------------------------------------------------ cooperative refunds

    /// @notice Returns up to `amount` of what is unclaimed to the payer (receiver or receiver authorizer).
    function refund(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        if (!_isReceiverSide(msg.sender, config)) revert NotAuthorizedToRefund();
        _refund(config, amount);
    }

    /// @notice `refund`, authorized by the receiver authorizer's signature over the channel's current refund nonce;
    ///         anyone may send it.
    function refundWithSignature(
        ChannelConfig calldata config,
        uint128 amount,
        uint256 nonce,
        bytes calldata receiverAuthorizerSignature
    ) external nonReentrant {
        bytes32 channelId = getChannelId(config);
        if (nonce != refundNonce[channelId]) revert InvalidRefundNonce();
        bytes32 digest = getRefundDigest(channelId, nonce, amount);
        if (!SignatureChecker.isValidSignatureNow(config.receiverAuthorizer, digest, receiverAuthorizerSignature)) {
            revert InvalidSignature();
        }
        _refund(config, amount);
    }

    // ------------------------------------------------------------------ views

    /// @notice The channel's id: the EIP-712 hash of its config under this contract's domain (so per chain).
    function getChannelId(ChannelConfig calldata config) public view returns (bytes32) {
        return _hashTypedDataV4(keccak256(abi.encode(CHANNEL_CONFIG_TYPEHASH, config)));
    }

    /// @notice What a buyer signs for a voucher.
    function getVoucherDigest(bytes32 channelId, uint128 maxClaimableAmount) public view returns (bytes32) {
        return _hashTypedDataV4(keccak256(abi.encode(VOUCHER_TYPEHASH, channelId, maxClaimableAmount)));
    }

    /// @notice What the receiver authorizer signs for a refund.
    function getRefundDigest(bytes32 channelId, uint256 nonce, uint128 amount) public view returns (bytes32) {
        return _hashTypedDataV4(keccak256(abi.encode(REFUND_TYPEHASH, channelId, nonce, amount)));
    }

    /// @notice What the receiver authorizer signs for a batch of claims (`ClaimBatch` over one `ClaimEntry` per row;
    ///         an empty batch hashes the empty array).
    function getClaimBatchDigest(VoucherClaim[] calldata voucherClaims) public view returns (bytes32) {
        bytes32[] memory entries = new bytes32[](voucherClaims.length);
        for (uint256 i; i < voucherClaims.length; ++i) {
            VoucherClaim calldata row = voucherClaims[i];
            entries[i] = keccak256(
                abi.encode(
                    CLAIM_ENTRY_TYPEHASH,
                    getChannelId(row.voucher.channel),
                    row.voucher.maxClaimableAmount,
                    row.totalClaimed
                )
            );
        }
        return _hashTypedDataV4(keccak256(abi.encode(CLAIM_BATCH_TYPEHASH, keccak256(abi.encodePacked(entries)))));
    }

    // ------------------------------------------------------------------ internal

    /// @dev A deposit's config checks, in the live order.
    function _requireOpenableConfig(ChannelConfig calldata config) private pure {
        if (
            config.payer == address(0) || config.receiver == address(0) || config.receiverAuthorizer == address(0)
                || config.token == address(0)
        ) revert InvalidChannel();
        if (config.withdrawDelay < MIN_WITHDRAW_DELAY || config.withdrawDelay > MAX_WITHDRAW_DELAY) {
            revert WithdrawDelayOutOfRange();
        }
    }

    /// @dev A row at or below what the channel has claimed is skipped without looking at its signature (a replayed
    ///      voucher is a no-op); otherwise it must fit its ceiling and the escrow, and carry the buyer's signature: the
    ///      payer authorizer's ECDSA signature when one is set, else the payer's (ECDSA or ERC-1271).
    function _applyClaim(VoucherClaim calldata row) private {
        ChannelConfig calldata config = row.voucher.channel;
        bytes32 channelId = getChannelId(config);
        ChannelState storage channel = channels[channelId];
        uint128 total = row.totalClaimed;
        if (total <= channel.totalClaimed) return;
        if (total > row.voucher.maxClaimableAmount) revert ClaimExceedsCeiling();
        if (total > channel.balance) revert ClaimExceedsBalance();

        bytes32 digest = getVoucherDigest(channelId, row.voucher.maxClaimableAmount);
        bool signed = config.payerAuthorizer != address(0)
            ? ECDSA.recoverCalldata(digest, row.signature) == config.payerAuthorizer
            : SignatureChecker.isValidSignatureNow(config.payer, digest, row.signature);
        if (!signed) revert InvalidSignature();

        uint128 added = total - channel.totalClaimed;
        channel.totalClaimed = total;
        receivers[config.receiver][config.token].totalClaimed += added;
        emit Claimed(channelId, msg.sender, added, total);
    }

    /// @dev The refund nonce advances first, whatever is then refunded (even nothing); a zero request reverts before.
    ///      The refund is cut to what is unclaimed, and shrinks or cancels a pending withdrawal.
    function _refund(ChannelConfig calldata config, uint128 amount) private {
        if (amount == 0) revert ZeroRefund();
        bytes32 channelId = getChannelId(config);
        unchecked {
            ++refundNonce[channelId];
        }
        ChannelState storage channel = channels[channelId];
        uint128 unclaimed = _unclaimed(channel);
        uint128 refunded = amount < unclaimed ? amount : unclaimed;
        if (refunded == 0) return;
        channel.balance -= refunded;

        WithdrawalState storage withdrawal = pendingWithdrawals[channelId];
        if (withdrawal.initiatedAt != 0) {
            if (refunded >= withdrawal.amount) delete pendingWithdrawals[channelId];
            else withdrawal.amount -= refunded;
        }

        emit Refunded(channelId, msg.sender, refunded);
        _closeIfEmpty(channelId, channel, config);
        IERC20(config.token).safeTransfer(config.payer, refunded);
    }

    function _closeIfEmpty(bytes32 channelId, ChannelState storage channel, ChannelConfig calldata config) private {
        if (channel.balance == 0 && channel.totalClaimed == 0) emit ChannelClosed(channelId, config);
    }

    function _unclaimed(ChannelState storage channel) private view returns (uint128) {
        return channel.balance - channel.totalClaimed;
    }

    function _isReceiverSide(address account, ChannelConfig calldata config) private pure returns (bool) {
        return account == config.receiverAuthorizer || account == config.receiver;
    }

    function _isPayerSide(address account, ChannelConfig calldata config) private pure returns (bool) {
        return account == config.payer || account == config.payerAuthorizer;
    }
}
