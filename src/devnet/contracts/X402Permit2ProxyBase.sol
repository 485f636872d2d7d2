// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Permit.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {ISignatureTransfer} from "./interfaces/ISignatureTransfer.sol";

/// @title X402Permit2ProxyBase
/// @notice What x402's two Permit2 proxies share: they are the `spender` an x402 buyer names in its Permit2 signature,
///         and they pass the payment on to Permit2 with a witness that binds the payee, so whoever submits the
///         settlement cannot redirect the money. The checks, their order and their errors are those of the public
///         proxies (x402's EVM package ships their ABIs).
/// @dev `PERMIT2` is an immutable: the proxies' runtime code embeds the canonical Permit2 address.
abstract contract X402Permit2ProxyBase is ReentrancyGuardTransient {
    // solhint-disable-next-line var-name-mixedcase
    ISignatureTransfer public immutable PERMIT2;

    /// @notice A signed EIP-2612 permit that lets Permit2 spend the buyer's tokens (x402's gas-sponsoring extension).
    struct EIP2612Permit {
        uint256 value;
        uint256 deadline;
        bytes32 r;
        bytes32 s;
        uint8 v;
    }

    event Settled();
    event SettledWithPermit();

    error InvalidPermit2Address();
    error InvalidDestination();
    error PaymentTooEarly();
    error InvalidOwner();
    error InvalidAmount();
    error Permit2612AmountMismatch();

    constructor(ISignatureTransfer permit2) {
        if (address(permit2) == address(0)) revert InvalidPermit2Address();
        PERMIT2 = permit2;
    }

    /// @dev The proxies' own checks (a zero amount would only burn the buyer's nonce), then Permit2's: the witness
    ///      hash is rebuilt here from the arguments, so a changed payee or time no longer matches the signature.
    function _settle(
        ISignatureTransfer.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        address to,
        uint256 validAfter,
        bytes32 witnessHash,
        string memory witnessTypeString,
        bytes calldata signature
    ) internal {
        if (amount == 0) revert InvalidAmount();
        if (owner == address(0)) revert InvalidOwner();
        if (to == address(0)) revert InvalidDestination();
        if (block.timestamp < validAfter) revert PaymentTooEarly();
        PERMIT2.permitWitnessTransferFrom(
            permit,
            ISignatureTransfer.SignatureTransferDetails({to: to, requestedAmount: amount}),
            owner,
            witnessHash,
            witnessTypeString,
            signature
        );
    }

    /// @dev The EIP-2612 permit must approve exactly the Permit2 amount. Its own failure is swallowed: the approval may
    ///      already exist (a front-run permit, an earlier approval), and Permit2's pull fails anyway when it does not.
    function _approvePermit2(
        address token,
        address owner,
        EIP2612Permit calldata permit2612,
        uint256 permittedAmount
    ) internal {
        if (permit2612.value != permittedAmount) revert Permit2612AmountMismatch();
        try IERC20Permit(token).permit(
            owner, address(PERMIT2), permit2612.value, permit2612.deadline, permit2612.v, permit2612.r, permit2612.s
        ) {} catch {}
    }
}
