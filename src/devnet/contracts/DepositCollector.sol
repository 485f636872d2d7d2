// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IDepositCollector} from "./interfaces/IDepositCollector.sol";

/// @title DepositCollector
/// @notice What x402's two deposit collectors share: each serves one batch-settlement contract, and only that contract
///         may make it pull a buyer's tokens, so nobody can replay a buyer's deposit signature through it elsewhere.
/// @dev `x402BatchSettlement` is an immutable: the collectors' runtime code embeds the canonical contract's address.
abstract contract DepositCollector is IDepositCollector {
    // solhint-disable-next-line var-name-mixedcase
    address public immutable x402BatchSettlement;

    error OnlyX402BatchSettlement();
    error InvalidX402BatchSettlementAddress();

    constructor(address batchSettlement) {
        if (batchSettlement == address(0)) revert InvalidX402BatchSettlementAddress();
        x402BatchSettlement = batchSettlement;
    }

    modifier onlyx402BatchSettlement() {
        if (msg.sender != x402BatchSettlement) revert OnlyX402BatchSettlement();
        _;
    }
}
