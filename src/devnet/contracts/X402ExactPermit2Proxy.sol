// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ISignatureTransfer} from "./interfaces/ISignatureTransfer.sol";
import {X402Permit2ProxyBase} from "./X402Permit2ProxyBase.sol";

/// @title X402ExactPermit2Proxy
/// @notice The devnet's x402 `exact` Permit2 proxy, installed at `x402ExactPermit2ProxyAddress` (src/sdk/chains.ts): it
///         moves exactly the permitted amount to the payee the buyer signed, through Permit2. `settle` is the path
///         of a buyer who approved Permit2; `settleWithPermit` first submits the buyer's EIP-2612 permit for Permit2
///         (x402's EIP-2612 gas-sponsoring extension), so a buyer who never sent a transaction can pay.
/// @dev The witness is `Witness(address to,uint256 validAfter)`, the type x402's client signs.
contract X402ExactPermit2Proxy is X402Permit2ProxyBase {
    string public constant WITNESS_TYPE_STRING =
        "Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,uint256 validAfter)";
    bytes32 public constant WITNESS_TYPEHASH = keccak256("Witness(address to,uint256 validAfter)");

    /// @notice What the buyer signs besides the permit: the payee, and the earliest time of settlement.
    struct Witness {
        address to;
        uint256 validAfter;
    }

    constructor(ISignatureTransfer permit2) X402Permit2ProxyBase(permit2) {}

    /// @notice Pays `witness.to` the whole permitted amount from `owner`, who has approved Permit2.
    function settle(
        ISignatureTransfer.PermitTransferFrom calldata permit,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external nonReentrant {
        _settleExact(permit, owner, witness, signature);
        emit Settled();
    }

    /// @notice Submits `owner`'s EIP-2612 permit for Permit2 (for exactly the permitted amount), then pays as `settle`.
    function settleWithPermit(
        EIP2612Permit calldata permit2612,
        ISignatureTransfer.PermitTransferFrom calldata permit,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external nonReentrant {
        _approvePermit2(permit.permitted.token, owner, permit2612, permit.permitted.amount);
        _settleExact(permit, owner, witness, signature);
        emit SettledWithPermit();
    }

    function _settleExact(
        ISignatureTransfer.PermitTransferFrom calldata permit,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) private {
        bytes32 witnessHash = keccak256(abi.encode(WITNESS_TYPEHASH, witness.to, witness.validAfter));
        _settle(
            permit,
            permit.permitted.amount,
            owner,
            witness.to,
            witness.validAfter,
            witnessHash,
            WITNESS_TYPE_STRING,
            signature
        );
    }
}
