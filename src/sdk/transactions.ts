import {
  type Abi,
  type Address,
  type ContractFunctionArgs,
  type ContractFunctionName,
  type EncodeFunctionDataParameters,
  encodeFunctionData,
  type Hex,
} from 'viem'
import { routerAbi, usdcAbi } from './abis/index.js'
import type { VaultChainName } from './chains.js'
import type { VaultContext } from './context.js'

/**
 * An unsigned transaction: send `data` to `to` with `value` from the wallet, on `chainId`.
 * `functionName` and `args` say what `data` encodes (for review before signing).
 */
export type VaultTransaction<
  functionName extends string = string,
  args extends readonly unknown[] = readonly unknown[],
> = {
  chain: VaultChainName
  chainId: number
  to: Address
  data: Hex
  value: bigint
  functionName: functionName
  args: args
}

/** `router.initialize()`: registers the sender. */
export type InitializeTransaction = VaultTransaction<'initialize', readonly []>
/** `usdc.approve(spender, amount)`. */
export type ApproveTransaction = VaultTransaction<
  'approve',
  readonly [spender: Address, amount: bigint]
>
/** `router.deposit(amount, wallet, minSharesOut)`. */
export type DepositTransaction = VaultTransaction<
  'deposit',
  readonly [amount: bigint, wallet: Address, minSharesOut: bigint]
>
/** `router.withdraw(shares, wallet, minUsdcOut)`. */
export type WithdrawTransaction = VaultTransaction<
  'withdraw',
  readonly [shares: bigint, wallet: Address, minUsdcOut: bigint]
>

/** `router.setOperator(operator, approved)`: lets `operator` deposit and withdraw for the sender. */
export type SetOperatorTransaction = VaultTransaction<
  'setOperator',
  readonly [operator: Address, approved: boolean]
>

/** Options every `…AndWait` write accepts. */
export type WaitOptions = {
  /** Blocks to wait after inclusion. Default 1. */
  confirmations?: number | undefined
  /** Give up waiting for the receipt after this many ms. Default: viem's (180 s). */
  timeout?: number | undefined
}

/**
 * Builds the unsigned `router.initialize()` transaction.
 *
 * @param ctx - The vault client.
 * @returns The transaction.
 * @example
 * const tx = buildInitializeTransaction(vault) // send it from the wallet to register
 */
export function buildInitializeTransaction(ctx: VaultContext): InitializeTransaction {
  return unsignedCall(ctx, ctx.addresses.router, routerAbi, 'initialize', [] as const)
}

/**
 * Builds the unsigned `usdc.approve(spender, amount)` transaction (the router is the usual spender).
 *
 * @param ctx - The vault client.
 * @param spender - Who may spend.
 * @param amount - Base units.
 * @returns The transaction.
 * @example
 * buildApproveTransaction(vault, vault.addresses.router, 10_000_000n)
 */
export function buildApproveTransaction(
  ctx: VaultContext,
  spender: Address,
  amount: bigint,
): ApproveTransaction {
  return unsignedCall(ctx, ctx.addresses.usdc, usdcAbi, 'approve', [spender, amount] as const)
}

/**
 * Builds the unsigned `router.deposit(amount, wallet, minSharesOut)` transaction.
 *
 * @param ctx - The vault client.
 * @param amount - USDC base units.
 * @param wallet - The registered wallet that pays and receives the shares.
 * @param minSharesOut - The least shares accepted.
 * @returns The transaction.
 * @example
 * buildDepositTransaction(vault, 10_000_000n, wallet, 9_990_000n)
 */
export function buildDepositTransaction(
  ctx: VaultContext,
  amount: bigint,
  wallet: Address,
  minSharesOut: bigint,
): DepositTransaction {
  return unsignedCall(ctx, ctx.addresses.router, routerAbi, 'deposit', [
    amount,
    wallet,
    minSharesOut,
  ] as const)
}

/**
 * Builds the unsigned `router.withdraw(shares, wallet, minUsdcOut)` transaction.
 *
 * @param ctx - The vault client.
 * @param shares - Shares to burn (base units).
 * @param wallet - The wallet that holds them and receives the USDC.
 * @param minUsdcOut - The least USDC accepted.
 * @returns The transaction.
 * @example
 * buildWithdrawTransaction(vault, 5_000_000n, wallet, 5_000_000n)
 */
export function buildWithdrawTransaction(
  ctx: VaultContext,
  shares: bigint,
  wallet: Address,
  minUsdcOut: bigint,
): WithdrawTransaction {
  return unsignedCall(ctx, ctx.addresses.router, routerAbi, 'withdraw', [
    shares,
    wallet,
    minUsdcOut,
  ] as const)
}

/**
 * Builds the unsigned `router.setOperator(operator, approved)` transaction, sent by the wallet.
 *
 * @param ctx - The vault client.
 * @param operator - The account that may deposit and withdraw for the wallet (USDC only ever moves
 *   between the wallet and the vault).
 * @param approved - `true` to allow, `false` to revoke.
 * @returns The transaction.
 * @example
 * buildSetOperatorTransaction(vault, sweeper.address, true)
 */
export function buildSetOperatorTransaction(
  ctx: VaultContext,
  operator: Address,
  approved: boolean,
): SetOperatorTransaction {
  return unsignedCall(ctx, ctx.addresses.router, routerAbi, 'setOperator', [
    operator,
    approved,
  ] as const)
}

/** An unsigned, value-free call of `functionName(args)` on `to`, with what it encodes. */
function unsignedCall<
  const abi extends Abi,
  const functionName extends ContractFunctionName<abi, 'nonpayable'>,
  const args extends ContractFunctionArgs<abi, 'nonpayable', functionName> & readonly unknown[],
>(
  ctx: VaultContext,
  to: Address,
  abi: abi,
  functionName: functionName,
  args: args,
): VaultTransaction<functionName, args> {
  return {
    chain: ctx.chain,
    chainId: ctx.chainId,
    to,
    // The generics above already tie `args` to `functionName` in `abi`; viem cannot see that here.
    data: encodeFunctionData({ abi, functionName, args } as EncodeFunctionDataParameters),
    value: 0n,
    functionName,
    args,
  }
}
