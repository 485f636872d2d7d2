// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title Multicall3
/// @notice This project's own implementation of the Multicall3 interface (aggregate, tryAggregate, aggregate3,
///         aggregate3Value and the block/chain getters), so viem's multicall batching works on the devnet.
/// @dev The devnet installs the runtime code at `multicall3Address` (src/sdk/chains.ts) with `anvil_setCode`,
///      so no constructor ever runs there: the contract keeps no state and has no immutables.
///      Failures revert with the same reason strings as the canonical deployment, which tooling matches on.
contract Multicall3 {
    struct Call {
        address target;
        bytes callData;
    }

    struct Call3 {
        address target;
        bool allowFailure;
        bytes callData;
    }

    struct Call3Value {
        address target;
        bool allowFailure;
        uint256 value;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    /// @notice Runs every call; reverts if any fails.
    function aggregate(Call[] calldata calls) public payable returns (uint256 blockNumber, bytes[] memory returnData) {
        blockNumber = block.number;
        returnData = new bytes[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            (bool success, bytes memory data) = calls[i].target.call(calls[i].callData);
            require(success, "Multicall3: call failed");
            returnData[i] = data;
        }
    }

    /// @notice Runs every call; reverts on a failure only when `requireSuccess`.
    function tryAggregate(bool requireSuccess, Call[] calldata calls) public payable returns (Result[] memory results) {
        results = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            (bool success, bytes memory data) = calls[i].target.call(calls[i].callData);
            if (requireSuccess) require(success, "Multicall3: call failed");
            results[i] = Result(success, data);
        }
    }

    function tryBlockAndAggregate(bool requireSuccess, Call[] calldata calls)
        public
        payable
        returns (uint256 blockNumber, bytes32 blockHash, Result[] memory results)
    {
        blockNumber = block.number;
        blockHash = blockhash(block.number);
        results = tryAggregate(requireSuccess, calls);
    }

    function blockAndAggregate(Call[] calldata calls)
        external
        payable
        returns (uint256 blockNumber, bytes32 blockHash, Result[] memory results)
    {
        return tryBlockAndAggregate(true, calls);
    }

    /// @notice Runs every call; a failing call reverts the batch unless it allows failure.
    function aggregate3(Call3[] calldata calls) external payable returns (Result[] memory results) {
        results = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            Call3 calldata item = calls[i];
            (bool success, bytes memory data) = item.target.call(item.callData);
            require(success || item.allowFailure, "Multicall3: call failed");
            results[i] = Result(success, data);
        }
    }

    /// @notice Like `aggregate3`, forwarding a value with each call; the values must add up to `msg.value`.
    function aggregate3Value(Call3Value[] calldata calls) external payable returns (Result[] memory results) {
        uint256 valueSent = 0;
        results = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            Call3Value calldata item = calls[i];
            valueSent += item.value;
            (bool success, bytes memory data) = item.target.call{value: item.value}(item.callData);
            require(success || item.allowFailure, "Multicall3: call failed");
            results[i] = Result(success, data);
        }
        require(msg.value == valueSent, "Multicall3: value mismatch");
    }

    function getBlockHash(uint256 blockNumber) external view returns (bytes32 blockHash) {
        return blockhash(blockNumber);
    }

    function getBlockNumber() external view returns (uint256 blockNumber) {
        return block.number;
    }

    function getCurrentBlockCoinbase() external view returns (address coinbase) {
        return block.coinbase;
    }

    function getCurrentBlockDifficulty() external view returns (uint256 difficulty) {
        return block.prevrandao;
    }

    function getCurrentBlockGasLimit() external view returns (uint256 gaslimit) {
        return block.gaslimit;
    }

    function getCurrentBlockTimestamp() external view returns (uint256 timestamp) {
        return block.timestamp;
    }

    function getEthBalance(address addr) external view returns (uint256 balance) {
        return addr.balance;
    }

    function getLastBlockHash() external view returns (bytes32 blockHash) {
        return blockhash(block.number - 1);
    }

    function getBasefee() external view returns (uint256 basefee) {
        return block.basefee;
    }

    function getChainId() external view returns (uint256 chainid) {
        return block.chainid;
    }
}
