import type { Address, Hex } from 'viem'
import type { VaultContext } from './context.js'
import type { VaultTransaction } from './transactions.js'

/**
 * How much a plan warning matters: `info` is context, `warning` may make the plan fail if the chain
 * moves before it is sent, `error` means the plan will not succeed as it stands.
 */
export type PlanWarningLevel = 'info' | 'warning' | 'error'

/**
 * The stable codes of plan warnings (docs/mcp.md lists them):
 * - `ORACLE_STALE`: the oracle's last observation is over its staleness limit; the deposit records a new
 *   one first (more gas). A deposit the oracle would refuse is refused (`STALE_ORACLE`), not warned.
 * - `TVL_CAP_CLOSE`: after the deposit less than 5 % of the TVL cap is left; another deposit landing first
 *   can push this one over.
 * - `BALANCE_BELOW_MINIMUM_AFTER`: the USDC left in the wallet after the deposit is below the vault's
 *   minimum deposit, so it cannot be deposited on its own later.
 * - `WITHDRAW_CAPACITY_LOW`: the venues can pay out now less than twice the withdrawal; another
 *   withdrawal landing first can make this one revert.
 * - `POSITION_BELOW_MINIMUM`: after the withdrawal the position is worth less than the minimum deposit.
 * - `SLIPPAGE_WIDE`: the slippage tolerance is over 100 bps (1 %).
 * - `SIMULATION_UNSUPPORTED`: the RPC refused `eth_simulateV1`, so the steps were not simulated together;
 *   the plan fell back to simulating the last step alone where it could.
 */
export type PlanWarningCode =
  | 'ORACLE_STALE'
  | 'TVL_CAP_CLOSE'
  | 'BALANCE_BELOW_MINIMUM_AFTER'
  | 'WITHDRAW_CAPACITY_LOW'
  | 'POSITION_BELOW_MINIMUM'
  | 'SLIPPAGE_WIDE'
  | 'SIMULATION_UNSUPPORTED'

/** One structured warning of a plan: a level, a stable code and the text to show. */
export type PlanWarning = {
  level: PlanWarningLevel
  code: PlanWarningCode
  message: string
}

/** One call of an EIP-5792 batch: no plan sends ETH, so `value` is always 0. */
export type WalletCall = { to: Address; data: Hex; value: bigint }

/**
 * Every step of a plan as one EIP-5792 `wallet_sendCalls` request (in the SDK's types: the chain id
 * as a number and values as bigints; the MCP server shows them in hex). The steps only make sense
 * together, so `atomicRequired` is `true`: a smart wallet runs all of them or none.
 */
export type WalletCalls = {
  version: '2.0.0'
  chainId: number
  from: Address
  atomicRequired: true
  calls: readonly WalletCall[]
}

/**
 * Builds the EIP-5792 batch of a plan's steps.
 *
 * @param ctx - The vault client (for the chain id).
 * @param from - The wallet that sends the batch.
 * @param steps - The plan's unsigned transactions, in order.
 * @returns `{ version: '2.0.0', chainId, from, atomicRequired: true, calls }`.
 * @example
 * const batch = walletCallsOf(vault, wallet, [plan.transaction])
 */
export function walletCallsOf(
  ctx: VaultContext,
  from: Address,
  steps: readonly VaultTransaction[],
): WalletCalls {
  return {
    version: '2.0.0',
    chainId: ctx.chainId,
    from,
    atomicRequired: true,
    calls: steps.map((step) => ({ to: step.to, data: step.data, value: step.value })),
  }
}

/** Slippage above this many bps is flagged `SLIPPAGE_WIDE`. */
export const wideSlippageBps = 100

/** The `SLIPPAGE_WIDE` warning when `slippageBps` is unusually wide, else nothing. */
export function slippageWarnings(slippageBps: number, what: string): PlanWarning[] {
  if (slippageBps <= wideSlippageBps) return []
  return [
    {
      level: 'warning',
      code: 'SLIPPAGE_WIDE',
      message: `The slippage tolerance of ${slippageBps} bps (${slippageBps / 100} %) is unusually wide: the ${what} can come out that much lower without reverting. 10 bps is the default.`,
    },
  ]
}
