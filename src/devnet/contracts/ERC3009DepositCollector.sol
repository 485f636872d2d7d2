// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {DepositCollector} from "./DepositCollector.sol";
import {IERC3009Receive} from "./interfaces/IERC3009Receive.sol";

/// @title ERC3009DepositCollector
/// @notice The devnet's x402 EIP-3009 deposit collector, installed at `x402Erc3009DepositCollectorAddress` (src/sdk/chains.ts): it
///         submits the buyer's `ReceiveWithAuthorization` (payee: this collector, as EIP-3009 makes only the payee able
///         to submit it) and passes the tokens on to the batch-settlement contract.
/// @dev `collectorData` is `abi.encode(validAfter, validBefore, salt, signature)`, what x402's facilitator sends. The
///      authorization's nonce is not sent: it is `keccak256(abi.encode(channelId, salt))`, so the buyer's signature
///      binds the deposit to its channel. Reproduces the public collector's interface and behaviour; leaves out
///      nothing. A token without EIP-3009 (Aave's test USDC) makes the collection revert.
contract ERC3009DepositCollector is DepositCollector {
    using SafeERC20 for IERC20;

    constructor(address batchSettlement) DepositCollector(batchSettlement) {}

    /// @notice Pulls `amount` of `token` from `payer` by its EIP-3009 authorization and sends it to the caller.
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata collectorData)
        external
        override
        onlyx402BatchSettlement
    {
        (uint256 validAfter, uint256 validBefore, uint256 salt, bytes memory signature) =
            abi.decode(collectorData, (uint256, uint256, uint256, bytes));
        bytes32 nonce = keccak256(abi.encode(channelId, salt));
        IERC3009Receive(token).receiveWithAuthorization(
            payer, address(this), amount, validAfter, validBefore, nonce, signature
        );
        IERC20(token).safeTransfer(x402BatchSettlement, amount);
    }
}
