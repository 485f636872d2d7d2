// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC1271} from "@openzeppelin/contracts/interfaces/IERC1271.sol";
import {ISignatureTransfer} from "./interfaces/ISignatureTransfer.sol";

/// @title Permit2 (SignatureTransfer)
/// @notice The devnet's Permit2, installed at the canonical address `permit2Address` (src/sdk/chains.ts). It
///         answers Permit2's public SignatureTransfer interface with the same EIP-712 hashing, the same unordered
///         nonce bitmap and the same custom errors, in the same order, so a signature made for the live Permit2 (an
///         x402 buyer's `PermitWitnessTransferFrom`) settles here, and a bad one reverts with the live selector.
/// @dev The EIP-712 domain is `("Permit2", chainId, address(this))` with no version. It is cached at construction and
///      rebuilt whenever the chain id or the contract's own address differ from the cached ones, so it is right
///      after the runtime code has been moved to the canonical address.
///      Token pulls revert with `TRANSFER_FROM_FAILED` whatever the token's own reason, as the live contract's
///      transfer helper does. Not implemented (x402 does not use them): AllowanceTransfer (`approve`, `permit`,
///      `transferFrom`, `lockdown`, `invalidateNonces`, `allowance`).
contract Permit2 is ISignatureTransfer {
    bytes32 private constant DOMAIN_TYPEHASH = keccak256("EIP712Domain(string name,uint256 chainId,address verifyingContract)");
    bytes32 private constant NAME_HASH = keccak256("Permit2");
    bytes32 private constant TOKEN_PERMISSIONS_TYPEHASH = keccak256("TokenPermissions(address token,uint256 amount)");
    bytes32 private constant PERMIT_TRANSFER_FROM_TYPEHASH = keccak256(
        "PermitTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline)TokenPermissions(address token,uint256 amount)"
    );
    bytes32 private constant PERMIT_BATCH_TRANSFER_FROM_TYPEHASH = keccak256(
        "PermitBatchTransferFrom(TokenPermissions[] permitted,address spender,uint256 nonce,uint256 deadline)TokenPermissions(address token,uint256 amount)"
    );
    /// @dev A witness transfer's type is this prefix followed by the caller's `witnessTypeString`.
    string private constant WITNESS_TYPE_PREFIX =
        "PermitWitnessTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline,";
    string private constant BATCH_WITNESS_TYPE_PREFIX =
        "PermitBatchWitnessTransferFrom(TokenPermissions[] permitted,address spender,uint256 nonce,uint256 deadline,";
    /// @dev The `s` half of an EIP-2098 compact signature's `vs` word.
    bytes32 private constant COMPACT_S_MASK = 0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff;

    uint256 private immutable _cachedChainId;
    address private immutable _cachedThis;
    bytes32 private immutable _cachedDomainSeparator;

    /// @inheritdoc ISignatureTransfer
    mapping(address owner => mapping(uint256 wordPosition => uint256 bitmap)) public nonceBitmap;

    constructor() {
        _cachedChainId = block.chainid;
        _cachedThis = address(this);
        _cachedDomainSeparator = _buildDomainSeparator();
    }

    /// @notice The EIP-712 domain separator of `("Permit2", block.chainid, address(this))`.
    // solhint-disable-next-line func-name-mixedcase
    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        if (block.chainid == _cachedChainId && address(this) == _cachedThis) return _cachedDomainSeparator;
        return _buildDomainSeparator();
    }

    /// @inheritdoc ISignatureTransfer
    function permitTransferFrom(
        PermitTransferFrom memory permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes calldata signature
    ) external {
        bytes32 structHash = keccak256(
            abi.encode(
                PERMIT_TRANSFER_FROM_TYPEHASH, _hashTokenPermissions(permit.permitted), msg.sender, permit.nonce, permit.deadline
            )
        );
        _transferOne(permit, transferDetails, owner, structHash, signature);
    }

    /// @inheritdoc ISignatureTransfer
    function permitWitnessTransferFrom(
        PermitTransferFrom memory permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external {
        bytes32 typeHash = keccak256(abi.encodePacked(WITNESS_TYPE_PREFIX, witnessTypeString));
        bytes32 structHash = keccak256(
            abi.encode(
                typeHash, _hashTokenPermissions(permit.permitted), msg.sender, permit.nonce, permit.deadline, witness
            )
        );
        _transferOne(permit, transferDetails, owner, structHash, signature);
    }

    /// @inheritdoc ISignatureTransfer
    function permitTransferFrom(
        PermitBatchTransferFrom memory permit,
        SignatureTransferDetails[] calldata transferDetails,
        address owner,
        bytes calldata signature
    ) external {
        bytes32 structHash = keccak256(
            abi.encode(
                PERMIT_BATCH_TRANSFER_FROM_TYPEHASH,
                _hashTokenPermissionsArray(permit.permitted),
                msg.sender,
                permit.nonce,
                permit.deadline
            )
        );
        _transferBatch(permit, transferDetails, owner, structHash, signature);
    }

    /// @inheritdoc ISignatureTransfer
    function permitWitnessTransferFrom(
        PermitBatchTransferFrom memory permit,
        SignatureTransferDetails[] calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external {
        bytes32 typeHash = keccak256(abi.encodePacked(BATCH_WITNESS_TYPE_PREFIX, witnessTypeString));
        bytes32 structHash = keccak256(
            abi.encode(
                typeHash, _hashTokenPermissionsArray(permit.permitted), msg.sender, permit.nonce, permit.deadline, witness
            )
        );
        _transferBatch(permit, transferDetails, owner, structHash, signature);
    }

    /// @inheritdoc ISignatureTransfer
    function invalidateUnorderedNonces(uint256 wordPos, uint256 mask) external {
        nonceBitmap[msg.sender][wordPos] |= mask;
        emit UnorderedNonceInvalidation(msg.sender, wordPos, mask);
    }

    // ------------------------------------------------------------------ internal

    /// @dev The live order: deadline, amount, nonce, signature, then the pull.
    function _transferOne(
        PermitTransferFrom memory permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 structHash,
        bytes calldata signature
    ) private {
        uint256 requestedAmount = transferDetails.requestedAmount;
        if (block.timestamp > permit.deadline) revert SignatureExpired(permit.deadline);
        if (requestedAmount > permit.permitted.amount) revert InvalidAmount(permit.permitted.amount);
        _useUnorderedNonce(owner, permit.nonce);
        _verify(signature, _hashTypedData(structHash), owner);
        _pull(permit.permitted.token, owner, transferDetails.to, requestedAmount);
    }

    /// @dev Deadline, lengths, nonce and signature first; then each leg checks its amount, and a zero leg moves nothing.
    function _transferBatch(
        PermitBatchTransferFrom memory permit,
        SignatureTransferDetails[] calldata transferDetails,
        address owner,
        bytes32 structHash,
        bytes calldata signature
    ) private {
        uint256 count = permit.permitted.length;
        if (block.timestamp > permit.deadline) revert SignatureExpired(permit.deadline);
        if (count != transferDetails.length) revert LengthMismatch();
        _useUnorderedNonce(owner, permit.nonce);
        _verify(signature, _hashTypedData(structHash), owner);
        for (uint256 i = 0; i < count; ++i) {
            TokenPermissions memory permitted = permit.permitted[i];
            uint256 requestedAmount = transferDetails[i].requestedAmount;
            if (requestedAmount > permitted.amount) revert InvalidAmount(permitted.amount);
            if (requestedAmount != 0) _pull(permitted.token, owner, transferDetails[i].to, requestedAmount);
        }
    }

    /// @dev The nonce's high 248 bits pick a word of the owner's bitmap, its low 8 bits a bit in it. A bit already set
    ///      (used, or invalidated by the owner) reverts `InvalidNonce()`.
    function _useUnorderedNonce(address owner, uint256 nonce) private {
        uint256 bit = 1 << uint8(nonce);
        uint256 flipped = nonceBitmap[owner][uint248(nonce >> 8)] ^= bit;
        if (flipped & bit == 0) revert InvalidNonce();
    }

    /// @dev An EOA signs with ECDSA (65 bytes, or 64 in EIP-2098 compact form); an account with code answers ERC-1271.
    function _verify(bytes calldata signature, bytes32 digest, address claimedSigner) private view {
        if (claimedSigner.code.length > 0) {
            if (IERC1271(claimedSigner).isValidSignature(digest, signature) != IERC1271.isValidSignature.selector) {
                revert InvalidContractSignature();
            }
            return;
        }
        bytes32 r;
        bytes32 s;
        uint8 v;
        if (signature.length == 65) {
            r = bytes32(signature[0:32]);
            s = bytes32(signature[32:64]);
            v = uint8(signature[64]);
        } else if (signature.length == 64) {
            r = bytes32(signature[0:32]);
            bytes32 vs = bytes32(signature[32:64]);
            s = vs & COMPACT_S_MASK;
            v = uint8(uint256(vs) >> 255) + 27;
        } else {
            revert InvalidSignatureLength();
        }
        address signer = ecrecover(digest, v, r, s);
        if (signer == address(0)) revert InvalidSignature();
        if (signer != claimedSigner) revert InvalidSigner();
    }

    /// @dev `transferFrom` that accepts tokens returning nothing, and reverts `TRANSFER_FROM_FAILED` on a revert or a
    ///      `false`, without passing the token's own reason on.
    function _pull(address token, address from, address to, uint256 amount) private {
        (bool success, bytes memory returned) =
            token.call(abi.encodeWithSelector(0x23b872dd, from, to, amount)); // transferFrom(address,address,uint256)
        require(
            success && (returned.length == 0 || (returned.length >= 32 && abi.decode(returned, (uint256)) == 1)),
            "TRANSFER_FROM_FAILED"
        );
    }

    function _hashTokenPermissions(TokenPermissions memory permitted) private pure returns (bytes32) {
        return keccak256(abi.encode(TOKEN_PERMISSIONS_TYPEHASH, permitted));
    }

    function _hashTokenPermissionsArray(TokenPermissions[] memory permitted) private pure returns (bytes32) {
        bytes32[] memory hashes = new bytes32[](permitted.length);
        for (uint256 i = 0; i < permitted.length; ++i) {
            hashes[i] = _hashTokenPermissions(permitted[i]);
        }
        return keccak256(abi.encodePacked(hashes));
    }

    function _hashTypedData(bytes32 structHash) private view returns (bytes32) {
        return keccak256(abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), structHash));
    }

    function _buildDomainSeparator() private view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, block.chainid, address(this)));
    }
}
