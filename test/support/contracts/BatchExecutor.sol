// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @notice Test-only EIP-7702 delegate: an account that delegates to this code runs a batch of calls as
///         itself, in one transaction, all or nothing (any failing call reverts the whole batch).
contract BatchExecutor {
    struct Call {
        address to;
        uint256 value;
        bytes data;
    }

    /// @dev Call `index` of the batch reverted with `reason`.
    error CallFailed(uint256 index, bytes reason);
    /// @dev Only the account itself may run a batch through its own code.
    error NotSelf();

    function execute(Call[] calldata calls) external payable {
        if (msg.sender != address(this)) revert NotSelf();
        for (uint256 i = 0; i < calls.length; i++) {
            (bool ok, bytes memory reason) = calls[i].to.call{value: calls[i].value}(calls[i].data);
            if (!ok) revert CallFailed(i, reason);
        }
    }
}
