// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Permit.sol";
import {DepositCollector} from "./DepositCollector.sol";
import {ISignatureTransfer} from "./interfaces/ISignatureTransfer.sol";

/// @title Permit2DepositCollector
/// @notice The devnet's x402 Permit2 deposit collector, installed at `x402Permit2DepositCollectorAddress` (src/sdk/chains.ts): the
///         `spender` a buyer names in its Permit2 deposit signature. Permit2 moves the tokens straight from the buyer
///         to the batch-settlement contract, with a `DepositWitness(bytes32 channelId)` witness, so the signature
///         funds one channel only.
/// @dev `collectorData` is `abi.encode(nonce, deadline, permit2Signature, eip2612PermitData)`, what x402's facilitator
///      sends; the permit's token and amount are the deposit's. A non-empty `eip2612PermitData`
///      (`abi.encode(value, deadline, v, r, s)`, x402's EIP-2612 gas sponsoring) is first submitted as the buyer's
///      permit for Permit2; its value must be the deposit amount, and a failing permit is logged with one of the
///      `EIP2612PermitFailed*` events by how it failed, then the transfer is tried anyway (an approval may exist).
///      `PERMIT2` is an immutable: the runtime code embeds the canonical Permit2. Reproduces the public collector's
///      interface and behaviour; leaves out nothing.
contract Permit2DepositCollector is DepositCollector {
    // solhint-disable-next-line var-name-mixedcase
    ISignatureTransfer public immutable PERMIT2;

    /// @dev EIP-712 orders referenced types by name: `DepositWitness` before `TokenPermissions`.
    string public constant DEPOSIT_WITNESS_TYPE_STRING =
        "DepositWitness witness)DepositWitness(bytes32 channelId)TokenPermissions(address token,uint256 amount)";
    bytes32 public constant DEPOSIT_WITNESS_TYPEHASH = keccak256("DepositWitness(bytes32 channelId)");

    error InvalidPermit2Address();
    error Permit2612AmountMismatch();

    event EIP2612PermitFailedWithReason(address indexed token, address indexed owner, string reason);
    event EIP2612PermitFailedWithPanic(address indexed token, address indexed owner, uint256 errorCode);
    event EIP2612PermitFailedWithData(address indexed token, address indexed owner, bytes data);

    constructor(address batchSettlement, address permit2) DepositCollector(batchSettlement) {
        if (permit2 == address(0)) revert InvalidPermit2Address();
        PERMIT2 = ISignatureTransfer(permit2);
    }

    /// @notice Moves `amount` of `token` from `payer` to the caller through Permit2, by the payer's witness signature.
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata collectorData)
        external
        override
        onlyx402BatchSettlement
    {
        (uint256 nonce, uint256 deadline, bytes memory signature, bytes memory eip2612PermitData) =
            abi.decode(collectorData, (uint256, uint256, bytes, bytes));
        if (eip2612PermitData.length != 0) _submitPermit(payer, token, amount, eip2612PermitData);

        PERMIT2.permitWitnessTransferFrom(
            ISignatureTransfer.PermitTransferFrom({
                permitted: ISignatureTransfer.TokenPermissions({token: token, amount: amount}),
                nonce: nonce,
                deadline: deadline
            }),
            ISignatureTransfer.SignatureTransferDetails({to: x402BatchSettlement, requestedAmount: amount}),
            payer,
            keccak256(abi.encode(DEPOSIT_WITNESS_TYPEHASH, channelId)),
            DEPOSIT_WITNESS_TYPE_STRING,
            signature
        );
    }

    function _submitPermit(address payer, address token, uint256 amount, bytes memory permitData) private {
        (uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s) =
            abi.decode(permitData, (uint256, uint256, uint8, bytes32, bytes32));
        if (value != amount) revert Permit2612AmountMismatch();
        try IERC20Permit(token).permit(payer, address(PERMIT2), value, deadline, v, r, s) {}
        catch Error(string memory reason) {
            emit EIP2612PermitFailedWithReason(token, payer, reason);
        } catch Panic(uint256 errorCode) {
            emit EIP2612PermitFailedWithPanic(token, payer, errorCode);
        } catch (bytes memory data) {
            emit EIP2612PermitFailedWithData(token, payer, data);
        }
    }
}
