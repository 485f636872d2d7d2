// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice Permit2's public SignatureTransfer interface: one-time transfers authorised by a signed permit, replay-
///         protected by unordered nonces. The struct shapes, events and errors are the live contract's, so calls,
///         signatures and revert selectors match it.
interface ISignatureTransfer {
    /// @notice A token and the most that may be moved of it.
    struct TokenPermissions {
        address token;
        uint256 amount;
    }

    /// @notice The signed permit for one token.
    struct PermitTransferFrom {
        TokenPermissions permitted;
        uint256 nonce;
        uint256 deadline;
    }

    /// @notice The signed permit for several tokens.
    struct PermitBatchTransferFrom {
        TokenPermissions[] permitted;
        uint256 nonce;
        uint256 deadline;
    }

    /// @notice Where the spender sends the tokens and how much it takes (at most the permitted amount).
    struct SignatureTransferDetails {
        address to;
        uint256 requestedAmount;
    }

    event UnorderedNonceInvalidation(address indexed owner, uint256 word, uint256 mask);

    /// @notice The requested amount is above the permitted one.
    error InvalidAmount(uint256 maxAmount);
    /// @notice A batch's permitted tokens and transfer details differ in number.
    error LengthMismatch();
    /// @notice The permit's deadline has passed.
    error SignatureExpired(uint256 signatureDeadline);
    /// @notice The nonce was used or invalidated.
    error InvalidNonce();
    /// @notice An EOA's signature is neither 64 nor 65 bytes long.
    error InvalidSignatureLength();
    /// @notice The signature recovers to no address.
    error InvalidSignature();
    /// @notice The signature recovers to another address than the owner (wrong signer, spender, witness or data).
    error InvalidSigner();
    /// @notice A smart-contract owner did not accept the signature (ERC-1271).
    error InvalidContractSignature();

    /// @notice The owner's bitmap word at `wordPosition`: bit `n` set means nonce `wordPosition << 8 | n` is spent.
    function nonceBitmap(address owner, uint256 wordPosition) external view returns (uint256);

    /// @notice Moves `transferDetails.requestedAmount` of the permitted token from `owner`, as its signature allows.
    function permitTransferFrom(
        PermitTransferFrom memory permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes calldata signature
    ) external;

    /// @notice Like `permitTransferFrom`, with a witness the caller hashed and the type string that describes it.
    function permitWitnessTransferFrom(
        PermitTransferFrom memory permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external;

    /// @notice Several tokens under one signature.
    function permitTransferFrom(
        PermitBatchTransferFrom memory permit,
        SignatureTransferDetails[] calldata transferDetails,
        address owner,
        bytes calldata signature
    ) external;

    /// @notice Several tokens under one signature, with a witness.
    function permitWitnessTransferFrom(
        PermitBatchTransferFrom memory permit,
        SignatureTransferDetails[] calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external;

    /// @notice Marks the caller's nonces in `mask` at word `wordPos` as spent.
    function invalidateUnorderedNonces(uint256 wordPos, uint256 mask) external;
}
