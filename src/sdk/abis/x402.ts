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

/**
 * The entry points of x402's `upto` Permit2 proxy: as the `exact` one's, with the amount settled (at most
 * the permit's) beside the permit the buyer signed. Its events carry nothing, so the most the buyer
 * authorized is read from a settle transaction's calldata.
 */
export const x402UptoPermit2ProxyAbi = parseAbi([
  'struct TokenPermissions { address token; uint256 amount; }',
  'struct PermitTransferFrom { TokenPermissions permitted; uint256 nonce; uint256 deadline; }',
  'struct Witness { address to; address facilitator; uint256 validAfter; }',
  'struct EIP2612Permit { uint256 value; uint256 deadline; bytes32 r; bytes32 s; uint8 v; }',
  'function settle(PermitTransferFrom permit, uint256 amount, address owner, Witness witness, bytes signature)',
  'function settleWithPermit(EIP2612Permit permit2612, PermitTransferFrom permit, uint256 amount, address owner, Witness witness, bytes signature)',
  'event Settled()',
  'event SettledWithPermit()',
])

/**
 * x402's `batch-settlement` contract as this package reads it: the events of money moving (a deposit into
 * a channel, a claim of a voucher, a settle to a receiver, a cooperative refund, a payer's timed
 * withdrawal) and the calls that claim vouchers, whose calldata names each claimed channel's receiver
 * (its events do not), for the ledger; what a receiver is owed and what each channel has had claimed,
 * for the paywall's batch-settlement jobs.
 */
export const x402BatchSettlementAbi = parseAbi([
  'struct ChannelConfig { address payer; address payerAuthorizer; address receiver; address receiverAuthorizer; address token; uint40 withdrawDelay; bytes32 salt; }',
  'struct Voucher { ChannelConfig channel; uint128 maxClaimableAmount; }',
  'struct VoucherClaim { Voucher voucher; bytes signature; uint128 totalClaimed; }',
  'event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 newBalance)',
  'event Claimed(bytes32 indexed channelId, address indexed sender, uint128 claimAmount, uint128 newTotalClaimed)',
  'event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount)',
  'event Refunded(bytes32 indexed channelId, address indexed sender, uint128 amount)',
  'event WithdrawFinalized(bytes32 indexed channelId, address indexed sender, uint128 amount)',
  'function claim(VoucherClaim[] voucherClaims)',
  'function claimWithSignature(VoucherClaim[] voucherClaims, bytes authorizerSignature)',
  'function multicall(bytes[] data) returns (bytes[] results)',
  'function receivers(address receiver, address token) view returns (uint128 totalClaimed, uint128 totalSettled)',
  'function channels(bytes32 channelId) view returns (uint128 balance, uint128 totalClaimed)',
])
