// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice EIP-3009's `receiveWithAuthorization` in the form with a packed signature (Circle's FiatToken v2.2): only the
///         payee may submit it, so nobody can front-run the collector with the buyer's authorization.
interface IERC3009Receive {
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes calldata signature
    ) external;
}
