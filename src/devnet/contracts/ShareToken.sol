// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title ShareToken (dvUSDC)
/// @notice The vault's share token, "Divigent USDC" / "dvUSDC", 6 decimals: minted and burned only by the router,
///         and non-transferable between two non-zero addresses (a position's cost basis lives in the router and
///         cannot move with the shares).
contract ShareToken is ERC20 {
    // solhint-disable-next-line var-name-mixedcase
    address public immutable VAULT_ROUTER;

    error NonTransferable();
    error OnlyVaultRouter(address caller);
    error ZeroRouter();

    modifier onlyRouter() {
        if (msg.sender != VAULT_ROUTER) revert OnlyVaultRouter(msg.sender);
        _;
    }

    constructor(address vaultRouter) ERC20("Divigent USDC", "dvUSDC") {
        if (vaultRouter == address(0)) revert ZeroRouter();
        VAULT_ROUTER = vaultRouter;
    }

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    function mint(address to, uint256 amount) external onlyRouter {
        _mint(to, amount);
    }

    function burn(address from, uint256 amount) external onlyRouter {
        _burn(from, amount);
    }

    /// @dev Mints and burns pass; any wallet-to-wallet move reverts.
    function _update(address from, address to, uint256 value) internal override {
        if (from != address(0) && to != address(0)) revert NonTransferable();
        super._update(from, to, value);
    }
}
