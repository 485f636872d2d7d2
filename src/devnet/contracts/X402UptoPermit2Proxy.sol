// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ISignatureTransfer} from "./interfaces/ISignatureTransfer.sol";
import {X402Permit2ProxyBase} from "./X402Permit2ProxyBase.sol";

/// @title X402UptoPermit2Proxy
/// @notice The devnet's x402 `upto` Permit2 proxy, installed at `x402UptoPermit2ProxyAddress` (src/sdk/chains.ts): the
///         settling facilitator chooses the amount, up to the permitted one. Only the facilitator the buyer named in
///         its witness may settle, so nobody else can pick the amount or burn the buyer's nonce.
/// @dev The witness is `Witness(address to,address facilitator,uint256 validAfter)`, the type x402's client signs.
contract X402UptoPermit2Proxy is X402Permit2ProxyBase {
    string public constant WITNESS_TYPE_STRING =
        "Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,address facilitator,uint256 validAfter)";
    bytes32 public constant WITNESS_TYPEHASH = keccak256("Witness(address to,address facilitator,uint256 validAfter)");

    /// @notice What the buyer signs besides the permit: the payee, the one facilitator allowed to settle, and the
    ///         earliest time of settlement.
    struct Witness {
        address to;
        address facilitator;
        uint256 validAfter;
    }

    error AmountExceedsPermitted();
    error UnauthorizedFacilitator();

    constructor(ISignatureTransfer permit2) X402Permit2ProxyBase(permit2) {}

    /// @notice Pays `witness.to` `amount` (at most the permitted amount) from `owner`, who has approved Permit2.
    function settle(
        ISignatureTransfer.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external nonReentrant {
        _checkCaller(permit, amount, witness);
        _settleUpto(permit, amount, owner, witness, signature);
        emit Settled();
    }

    /// @notice Submits `owner`'s EIP-2612 permit for Permit2 (for exactly the permitted amount), then pays as `settle`.
    function settleWithPermit(
        EIP2612Permit calldata permit2612,
        ISignatureTransfer.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external nonReentrant {
        _checkCaller(permit, amount, witness);
        _approvePermit2(permit.permitted.token, owner, permit2612, permit.permitted.amount);
        _settleUpto(permit, amount, owner, witness, signature);
        emit SettledWithPermit();
    }

    function _checkCaller(ISignatureTransfer.PermitTransferFrom calldata permit, uint256 amount, Witness calldata witness)
        private
        view
    {
        if (amount > permit.permitted.amount) revert AmountExceedsPermitted();
        if (msg.sender != witness.facilitator) revert UnauthorizedFacilitator();
    }

    function _settleUpto(
        ISignatureTransfer.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) private {
        bytes32 witnessHash =
            keccak256(abi.encode(WITNESS_TYPEHASH, witness.to, witness.facilitator, witness.validAfter));
        _settle(permit, amount, owner, witness.to, witness.validAfter, witnessHash, WITNESS_TYPE_STRING, signature);
    }
}
