import type { Address, Hash } from 'viem'
import {
  type ApproveUsdcParameters,
  type ApproveUsdcResult,
  approveUsdc,
  approveUsdcAndWait,
} from './actions/approveUsdc.js'
import {
  type DepositParameters,
  type DepositResult,
  deposit,
  depositAndWait,
} from './actions/deposit.js'
import {
  type EnsureInitializedParameters,
  type EnsureInitializedResult,
  ensureInitializedAndWait,
} from './actions/ensureInitializedAndWait.js'
import { getMinDeposit } from './actions/getMinDeposit.js'
import { getPosition, type VaultPosition } from './actions/getPosition.js'
import { getShareBalance } from './actions/getShareBalance.js'
import { getStatus, type VaultStatus } from './actions/getStatus.js'
import { getUsdcAllowance } from './actions/getUsdcAllowance.js'
import { getUsdcBalance } from './actions/getUsdcBalance.js'
import { getYield, type VaultYield } from './actions/getYield.js'
import {
  type InitializeParameters,
  type InitializeResult,
  initialize,
  initializeAndWait,
} from './actions/initialize.js'
import { isRegistered } from './actions/isRegistered.js'
import {
  type ApproveUsdcPlan,
  type PlanApproveUsdcParameters,
  planApproveUsdc,
} from './actions/planApproveUsdc.js'
import { type DepositPlan, type PlanDepositParameters, planDeposit } from './actions/planDeposit.js'
import {
  type InitializePlan,
  type PlanInitializeParameters,
  planInitialize,
} from './actions/planInitialize.js'
import {
  type PlanWithdrawParameters,
  planWithdraw,
  type WithdrawPlan,
} from './actions/planWithdraw.js'
import { previewDeposit } from './actions/previewDeposit.js'
import { previewRedeem } from './actions/previewRedeem.js'
import { previewWithdrawNet } from './actions/previewWithdrawNet.js'
import { type VerifyAddressesResult, verifyAddresses } from './actions/verifyAddresses.js'
import {
  type WithdrawParameters,
  type WithdrawResult,
  withdraw,
  withdrawAndWait,
} from './actions/withdraw.js'
import type { VaultContext } from './context.js'
import { type CreateVaultContextParameters, createVaultContext } from './createVaultContext.js'
import type { WaitOptions } from './internal/write.js'
import {
  type AttachToResourceServerOptions,
  attachToResourceServer,
  type SettlementHookTarget,
  type Sweeper,
} from './seller/attachToResourceServer.js'
import { type DepositIdleParameters, depositIdle } from './seller/depositIdle.js'
import { type DepositIdlePreview, previewDepositIdle } from './seller/previewDepositIdle.js'
import type { SweepResult } from './seller/sweep.js'

/** `createVaultContext`'s parameters: the clients, the chain and any address overrides. */
export type CreateVaultClientParameters = CreateVaultContextParameters

/** The vault actions, bound to one client. */
export type VaultActions = {
  /** Checks the chain id, contract code and wiring against the chain (≤ 2 RPC requests). See {@link verifyAddresses}. */
  verifyAddresses: () => Promise<VerifyAddressesResult>
  /** Registers the wallet unless it already is. See {@link ensureInitializedAndWait}. */
  ensureInitializedAndWait: (
    params?: EnsureInitializedParameters,
  ) => Promise<EnsureInitializedResult>
  /** Vault status in one round trip. See {@link getStatus}. */
  getStatus: () => Promise<VaultStatus>
  /** Venue rates and the selected venue in one round trip. See {@link getYield}. */
  getYield: () => Promise<VaultYield>
  /** A wallet's position in one round trip. See {@link getPosition}. */
  getPosition: (wallet: Address) => Promise<VaultPosition>
  previewDeposit: (params: { amount: bigint }) => Promise<bigint>
  previewRedeem: (params: { shares: bigint; wallet: Address }) => Promise<bigint>
  previewWithdrawNet: (params: { amount: bigint; wallet: Address }) => Promise<bigint>
  getMinDeposit: () => Promise<bigint>
  getUsdcBalance: (params: { wallet: Address }) => Promise<bigint>
  getUsdcAllowance: (params: { wallet: Address; spender?: Address | undefined }) => Promise<bigint>
  getShareBalance: (params: { wallet: Address }) => Promise<bigint>
  isRegistered: (params: { wallet: Address }) => Promise<boolean>
  /** Unsigned `usdc.approve(router, amount)`. See {@link planApproveUsdc}. */
  planApproveUsdc: (params: PlanApproveUsdcParameters) => Promise<ApproveUsdcPlan>
  /** Unsigned deposit with approval/registration report (≤ 2 round trips). See {@link planDeposit}. */
  planDeposit: (params: PlanDepositParameters) => Promise<DepositPlan>
  /** Unsigned withdrawal by amount or shares (2 round trips). See {@link planWithdraw}. */
  planWithdraw: (params: PlanWithdrawParameters, slippageBps?: number) => Promise<WithdrawPlan>
  /** Unsigned `router.initialize()`. See {@link planInitialize}. */
  planInitialize: (params: PlanInitializeParameters) => Promise<InitializePlan>
  initialize: (params?: InitializeParameters) => Promise<Hash>
  initializeAndWait: (params?: InitializeParameters & WaitOptions) => Promise<InitializeResult>
  approveUsdc: (params: ApproveUsdcParameters) => Promise<Hash>
  approveUsdcAndWait: (params: ApproveUsdcParameters & WaitOptions) => Promise<ApproveUsdcResult>
  deposit: (params: DepositParameters) => Promise<Hash>
  depositAndWait: (params: DepositParameters & WaitOptions) => Promise<DepositResult>
  withdraw: (params: WithdrawParameters) => Promise<Hash>
  withdrawAndWait: (params: WithdrawParameters & WaitOptions) => Promise<WithdrawResult>
  /**
   * Sweeps the wallet's idle USDC above a reserve into the vault now, with the options given; knows of
   * no settlements or observers (an attached sweeper's `depositIdle()` does). See {@link depositIdle}.
   */
  depositIdle: (params: DepositIdleParameters) => Promise<SweepResult>
  /** What `depositIdle` would do now, in one round trip, sending nothing. See {@link previewDepositIdle}. */
  previewDepositIdle: (params: DepositIdleParameters) => Promise<DepositIdlePreview>
  /** Sweeps after every x402 settlement that paid the merchant. See {@link attachToResourceServer}. */
  attachToResourceServer: (
    resourceServer: SettlementHookTarget,
    options: AttachToResourceServerOptions,
  ) => Sweeper
}

/** A vault client: the context (`chain`, `chainId`, `network`, `addresses`, clients), its actions and `extend`. */
export type VaultClient<extended extends object = object> = VaultContext &
  VaultActions &
  extended & {
    /**
     * Adds actions, like viem's `client.extend`: `fn` receives the client and returns new members.
     *
     * @example
     * const vault2 = vault.extend((v) => ({ tvl: async () => (await v.getStatus()).totalAssets }))
     */
    extend: <const added extends object>(
      fn: (client: VaultClient<extended>) => added,
    ) => VaultClient<extended & added>
  }

/**
 * Creates a vault client bound to one deployment, in viem's style: a context plus bound actions.
 *
 * It fails fast (`CHAIN_MISMATCH`) when a client's chain differs from `chain`, and checks every address
 * override. Reads and plans need only `publicClient`; writes need `walletClient`. Await
 * `verifyAddresses()` once before use.
 *
 * @param parameters - `publicClient`, `walletClient?`, `chain`, `addresses?`.
 * @returns The client.
 * @throws {VaultConfigError} `UNKNOWN_CHAIN`, `CHAIN_MISMATCH`; {VaultValidationError} `INVALID_ADDRESS`.
 * @example
 * const vault = createVaultClient({
 *   publicClient: createPublicClient({ chain: baseSepolia, transport: vaultHttp(rpcUrl) }),
 *   chain: 'base-sepolia',
 * })
 * await vault.verifyAddresses()
 * const status = await vault.getStatus()
 */
export function createVaultClient(parameters: CreateVaultClientParameters): VaultClient {
  return decorate(createVaultContext(parameters), {})
}

function decorate<extended extends object>(
  context: VaultContext,
  extension: extended,
): VaultClient<extended> {
  const actions: VaultActions = {
    verifyAddresses: () => verifyAddresses(context),
    ensureInitializedAndWait: (params) => ensureInitializedAndWait(context, params),
    getStatus: () => getStatus(context),
    getYield: () => getYield(context),
    getPosition: (wallet) => getPosition(context, wallet),
    previewDeposit: (params) => previewDeposit(context, params),
    previewRedeem: (params) => previewRedeem(context, params),
    previewWithdrawNet: (params) => previewWithdrawNet(context, params),
    getMinDeposit: () => getMinDeposit(context),
    getUsdcBalance: (params) => getUsdcBalance(context, params),
    getUsdcAllowance: (params) => getUsdcAllowance(context, params),
    getShareBalance: (params) => getShareBalance(context, params),
    isRegistered: (params) => isRegistered(context, params),
    planApproveUsdc: (params) => planApproveUsdc(context, params),
    planDeposit: (params) => planDeposit(context, params),
    planWithdraw: (params, slippageBps) => planWithdraw(context, params, slippageBps),
    planInitialize: (params) => planInitialize(context, params),
    initialize: (params) => initialize(context, params),
    initializeAndWait: (params) => initializeAndWait(context, params),
    approveUsdc: (params) => approveUsdc(context, params),
    approveUsdcAndWait: (params) => approveUsdcAndWait(context, params),
    deposit: (params) => deposit(context, params),
    depositAndWait: (params) => depositAndWait(context, params),
    withdraw: (params) => withdraw(context, params),
    withdrawAndWait: (params) => withdrawAndWait(context, params),
    depositIdle: (params) => depositIdle(context, params),
    previewDepositIdle: (params) => previewDepositIdle(context, params),
    attachToResourceServer: (resourceServer, options) =>
      attachToResourceServer(context, resourceServer, options),
  }
  const client = {
    ...context,
    ...actions,
    ...extension,
    extend: <const added extends object>(fn: (client: VaultClient<extended>) => added) =>
      decorate<extended & added>(context, { ...extension, ...fn(client) }),
  } as VaultClient<extended>
  return client
}
