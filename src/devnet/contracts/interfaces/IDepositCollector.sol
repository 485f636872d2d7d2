// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice What x402's batch-settlement contract calls to pull a deposit: the collector moves `amount` of `token` from
///         `payer` to the caller by its own mechanism (an EIP-3009 authorization, a Permit2 signature), reading what it
///         needs from `collectorData`. The caller checks its own balance afterwards, so a collector cannot short it.
interface IDepositCollector {
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata collectorData)
        external;
}
