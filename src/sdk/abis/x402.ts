import { parseAbi } from 'viem'

/** Permit2's unordered-nonce bitmap: bit `nonce & 255` of word `nonce >> 8` is set once a nonce is used. */
export const permit2Abi = parseAbi([
  'function nonceBitmap(address owner, uint256 wordPosition) view returns (uint256)',
])

/**
 * The two entry points of x402's `exact` Permit2 proxy that settle a payment (`settleWithPermit` first
 * submits the buyer's EIP-2612 permit for Permit2), and the events they emit. A test checks them against
 * the ABI `@x402/evm` ships.
 */
export const x402ExactPermit2ProxyAbi = parseAbi([
  'struct TokenPermissions { address token; uint256 amount; }',
  'struct PermitTransferFrom { TokenPermissions permitted; uint256 nonce; uint256 deadline; }',
  'struct Witness { address to; uint256 validAfter; }',
  'struct EIP2612Permit { uint256 value; uint256 deadline; bytes32 r; bytes32 s; uint8 v; }',
  'function settle(PermitTransferFrom permit, address owner, Witness witness, bytes signature)',
  'function settleWithPermit(EIP2612Permit permit2612, PermitTransferFrom permit, address owner, Witness witness, bytes signature)',
  'event Settled()',
  'event SettledWithPermit()',
])
