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
import {
  type FindPaymentSettlementParameters,
  findPaymentSettlement,
  type PaymentSettlement,
} from './actions/findPaymentSettlement.js'
import { type GetLedgerParameters, getLedger, type VaultLedger } from './actions/getLedger.js'
import { getMinDeposit } from './actions/getMinDeposit.js'
import {
  type GetPaymentAuthorizationStateParameters,
  getPaymentAuthorizationState,
  type PaymentAuthorizationState,
} from './actions/getPaymentAuthorizationState.js'
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
  type PlanSetOperatorParameters,
  planSetOperator,
  type SetOperatorPlan,
} from './actions/planSetOperator.js'
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
import {
  type AttachToClientOptions,
  attachToClient,
  type BuyerAttachment,
  type PaymentHookTarget,
} from './buyer/attachToClient.js'
import { checkPeerVersions } from './checkPeerVersions.js'
import type { VaultContext } from './context.js'
import { type CreateVaultContextParameters, createVaultContext } from './createVaultContext.js'
import {
  type AttachToResourceServerOptions,
  attachToResourceServer,
  type SettlementHookTarget,
  type Sweeper,
} from './seller/attachToResourceServer.js'
import { previewSweep, type SweepPreview } from './sweep/previewSweep.js'
import { type SweepParameters, type SweepResult, sweep } from './sweep/sweep.js'
import type { WaitOptions } from './transactions.js'

/** `createVaultContext`'s parameters: the clients, the chain and any address overrides. */
export type CreateVaultClientParameters = CreateVaultContextParameters

/**
 * The vault actions, bound to one client: each is the action of the same name with the client as its
 * context. Amounts are bigint base units (USDC and shares have 6 decimals).
 */
export type VaultActions = {
  /**
   * Checks the client against the chain; await it once before use. The RPC's chain id, code at every
   * address, the router's wiring and the back-pointers of the share token and fee collector, in two
   * RPC requests sent together.
   *
   * @returns The chain id, the block and the checks made.
   * @throws {AddressMismatchError} naming the field, the expected and the actual value.
   * @example
   * await vault.verifyAddresses()
   */
  verifyAddresses: () => Promise<VerifyAddressesResult>
  /**
   * Makes sure a wallet is registered with the router; await it once for the merchant wallet. A
   * registered wallet costs one read and no transaction; otherwise the wallet client's account, when it
   * is that wallet, sends `initialize()` and waits for the receipt.
   *
   * @param params - `wallet` (default: the wallet client's account), `confirmations`, `timeout`.
   * @returns `{ wallet, alreadyRegistered, txHash }`.
   * @throws {VaultPreconditionError} `WALLET_NOT_REGISTERED` when only another account could register it.
   * @example
   * await vault.ensureInitializedAndWait()
   */
  ensureInitializedAndWait: (
    params?: EnsureInitializedParameters,
  ) => Promise<EnsureInitializedResult>
  /**
   * Reads the vault's status in one RPC round trip, every value from one block: pause flag, TVL cap and
   * headroom, total assets, price per share, oracle freshness, treasury, allocation, withdrawal
   * capacity. A sub-read that reverts is `Unavailable` in its own field.
   *
   * @returns The status.
   * @example
   * const status = await vault.getStatus()
   * if (!isUnavailable(status.totalAssets)) console.log(formatUsdc(status.totalAssets))
   */
  getStatus: () => Promise<VaultStatus>
  /**
   * Reads each venue's spot and time-weighted rate, its safety, and the venue the oracle selects for
   * new deposits, in one RPC round trip.
   *
   * @returns Rates in ray and as percentage strings, and the optimal venue (or why there is none).
   * @example
   * const { aave, morpho } = await vault.getYield()
   * console.log(aave.spotApy, morpho.spotApy)
   */
  getYield: () => Promise<VaultYield>
  /**
   * Reads a wallet's position in one RPC round trip: liquid USDC, allowance, shares, cost basis,
   * current value, accrued yield, registration, and `withdrawableUsdc` (what withdrawing every share
   * pays now, net of the fee). Any address; no wallet client needed.
   *
   * @param params - `wallet`.
   * @returns The position; a sub-read that reverts is `Unavailable` in its field.
   * @example
   * const position = await vault.getPosition({ wallet: merchant.address })
   */
  getPosition: (params: { wallet: Address }) => Promise<VaultPosition>
  /**
   * Lists a wallet's money over a range of blocks from the chain's logs, oldest first: x402 settlements
   * received (EIP-3009 or Permit2), other transfers, sweeps, withdrawals with their fees; with totals exact
   * to the base unit that reconcile the opening and closing balances of the wallet and of the position.
   *
   * @param params - `wallet`, `fromBlock`, and optionally `toBlock`, `positionHistory`, `maxBlockRange`, `onProgress`.
   * @returns The entries, the totals, and each token's and the position's reconciliation.
   * @example
   * const ledger = await vault.getLedger({ wallet, fromBlock: latest - 43_200n })
   */
  getLedger: (params: GetLedgerParameters) => Promise<VaultLedger>
  /**
   * Shares a deposit of `amount` would mint now (the router's `previewDeposit`).
   *
   * @param params - `amount` in USDC base units.
   * @returns Shares.
   * @example
   * const shares = await vault.previewDeposit({ amount: parseUsdc('25') })
   */
  previewDeposit: (params: { amount: bigint }) => Promise<bigint>
  /**
   * USDC the wallet would receive for burning `shares` now, net of the fee on its yield (the router's
   * `previewRedeem`).
   *
   * @param params - `shares` and `wallet` (its cost basis sets the fee).
   * @returns USDC base units.
   * @example
   * const usdc = await vault.previewRedeem({ shares, wallet })
   */
  previewRedeem: (params: { shares: bigint; wallet: Address }) => Promise<bigint>
  /**
   * Shares to burn so the wallet receives at least `amount` USDC after the fee (the router's
   * `previewWithdrawNet`).
   *
   * @param params - `amount` in USDC base units, and `wallet`.
   * @returns Shares.
   * @throws {VaultContractError} `NO_POSITION`, `UNSERVICEABLE_AMOUNT`, … as the router reverts.
   * @example
   * const shares = await vault.previewWithdrawNet({ amount: parseUsdc('5'), wallet })
   */
  previewWithdrawNet: (params: { amount: bigint; wallet: Address }) => Promise<bigint>
  /**
   * The router's minimum deposit (`MIN_DEPOSIT`).
   *
   * @returns USDC base units (10 USDC on the public deployments).
   * @example
   * const minimum = await vault.getMinDeposit()
   */
  getMinDeposit: () => Promise<bigint>
  /**
   * A wallet's USDC balance.
   *
   * @param params - `wallet`.
   * @returns USDC base units.
   * @example
   * const balance = await vault.getUsdcBalance({ wallet })
   */
  getUsdcBalance: (params: { wallet: Address }) => Promise<bigint>
  /**
   * A wallet's USDC allowance to a spender.
   *
   * @param params - `wallet`, and `spender` (default: the router).
   * @returns USDC base units.
   * @example
   * const allowance = await vault.getUsdcAllowance({ wallet })
   */
  getUsdcAllowance: (params: { wallet: Address; spender?: Address | undefined }) => Promise<bigint>
  /**
   * A wallet's share balance.
   *
   * @param params - `wallet`.
   * @returns Shares.
   * @example
   * const shares = await vault.getShareBalance({ wallet })
   */
  getShareBalance: (params: { wallet: Address }) => Promise<bigint>
  /**
   * Whether the router has registered a wallet; only registered wallets can deposit and withdraw.
   *
   * @param params - `wallet`.
   * @returns `true` when registered.
   * @example
   * if (!(await vault.isRegistered({ wallet }))) await vault.ensureInitializedAndWait()
   */
  isRegistered: (params: { wallet: Address }) => Promise<boolean>
  /**
   * Plans `usdc.approve(router, amount)` for any wallet, without signing, in one round trip that also
   * reports the current allowance and balance.
   *
   * @param params - `wallet`, `amount`.
   * @returns The plan with its unsigned transaction.
   * @example
   * const plan = await vault.planApproveUsdc({ wallet, amount: parseUsdc('25') })
   */
  planApproveUsdc: (params: PlanApproveUsdcParameters) => Promise<ApproveUsdcPlan>
  /**
   * Plans `router.deposit(amount, wallet, minSharesOut)` for any wallet, without signing, in at most
   * two round trips. It checks pause, minimum, TVL headroom and balance, reports a missing approval or
   * registration with the transactions that fix it, and simulates the deposit when nothing is missing.
   *
   * @param params - `wallet`, `amount`, `slippageBps` (0–1000, default 10).
   * @returns The plan with its unsigned transaction.
   * @throws {VaultPreconditionError} `DEPOSITS_PAUSED`, `BELOW_MIN_DEPOSIT`, `TVL_CAP_EXCEEDED`,
   *   `INSUFFICIENT_USDC`.
   * @example
   * const plan = await vault.planDeposit({ wallet, amount: parseUsdc('25') })
   * if (plan.needsApproval) console.log('send plan.approveTransaction first')
   */
  planDeposit: (params: PlanDepositParameters) => Promise<DepositPlan>
  /**
   * Plans `router.withdraw(shares, wallet, minUsdcOut)` for any wallet, without signing, in two round
   * trips. By `amount`, the wallet receives at least that much USDC after the fee; by `shares`, exactly
   * those shares are burned and `slippageBps` bounds the USDC out.
   *
   * @param params - `wallet`, exactly one of `amount` and `shares`, and `slippageBps` (0–1000, default 10).
   * @returns The plan with its unsigned transaction.
   * @throws {VaultPreconditionError} `WALLET_NOT_REGISTERED`, `INSUFFICIENT_SHARES`.
   * @example
   * const plan = await vault.planWithdraw({ wallet, amount: parseUsdc('5') })
   */
  planWithdraw: (params: PlanWithdrawParameters) => Promise<WithdrawPlan>
  /**
   * Plans a wallet's registration (`router.initialize()`, sent by the wallet itself), without signing.
   *
   * @param params - `wallet`.
   * @returns The plan with its unsigned transaction, and whether the wallet is already registered.
   * @example
   * const plan = await vault.planInitialize({ wallet })
   */
  planInitialize: (params: PlanInitializeParameters) => Promise<InitializePlan>
  /**
   * Plans `router.setOperator(operator, approved)` for a wallet, without signing: one round trip, to
   * report whether the wallet is registered and the operator already set. An operator deposits the
   * wallet's USDC under its allowance and never receives any: a sweeping key that holds no money.
   *
   * @param params - `wallet`, `operator`, `approved` (default `true`).
   * @returns The plan with its unsigned transaction, sent by the wallet.
   * @example
   * const plan = await vault.planSetOperator({ wallet, operator: sweeper.address })
   */
  planSetOperator: (params: PlanSetOperatorParameters) => Promise<SetOperatorPlan>
  /**
   * Registers the sending account with the router (`router.initialize()`), simulating first.
   *
   * @param params - `account` (default: the wallet client's).
   * @returns The transaction hash.
   * @throws {VaultContractError} `WALLET_ALREADY_REGISTERED`, before anything is sent.
   * @example
   * const hash = await vault.initialize()
   */
  initialize: (params?: InitializeParameters) => Promise<Hash>
  /**
   * Registers the sending account and waits for the receipt.
   *
   * @param params - `account`, `confirmations`, `timeout`.
   * @returns `{ txHash, wallet, blockNumber }`.
   * @example
   * const { txHash } = await vault.initializeAndWait()
   */
  initializeAndWait: (params?: InitializeParameters & WaitOptions) => Promise<InitializeResult>
  /**
   * Sets the account's USDC allowance (`usdc.approve(spender, amount)`), simulating and estimating gas
   * first.
   *
   * @param params - `amount`, `spender` (default: the router), `account`.
   * @returns The transaction hash.
   * @example
   * const hash = await vault.approveUsdc({ amount: parseUsdc('100') })
   */
  approveUsdc: (params: ApproveUsdcParameters) => Promise<Hash>
  /**
   * Sets the account's USDC allowance and waits for the receipt.
   *
   * @param params - `amount`, `spender`, `account`, `confirmations`, `timeout`.
   * @returns The hash and the allowance set.
   * @example
   * await vault.approveUsdcAndWait({ amount: parseUsdc('100') })
   */
  approveUsdcAndWait: (params: ApproveUsdcParameters & WaitOptions) => Promise<ApproveUsdcResult>
  /**
   * Deposits USDC into the vault. Checks pause, registration, minimum, TVL cap and balance in one round
   * trip; when the allowance is short it signs an EIP-2612 permit and deposits in one transaction
   * where the USDC supports it, else approves first. Every transaction is simulated before it is sent.
   *
   * @param params - `amount`, `wallet`, `slippageBps`, `minSharesOut`, `permit`, `account`.
   * @returns The deposit's transaction hash.
   * @throws {VaultPreconditionError} `BELOW_MIN_DEPOSIT`, `DEPOSITS_PAUSED`, `WALLET_NOT_REGISTERED`, …
   * @example
   * const hash = await vault.deposit({ amount: parseUsdc('25') })
   */
  deposit: (params: DepositParameters) => Promise<Hash>
  /**
   * Deposits USDC into the vault, as `deposit` does, and waits for the receipt.
   *
   * @param params - As `deposit`, plus `confirmations` and `timeout`.
   * @returns The hash, the USDC deposited, the shares minted, the venue and the method used.
   * @example
   * const { sharesMinted } = await vault.depositAndWait({ amount: parseUsdc('25') })
   */
  depositAndWait: (params: DepositParameters & WaitOptions) => Promise<DepositResult>
  /**
   * Withdraws from the vault by USDC amount (the wallet receives at least `amount` after the fee) or by
   * shares (the USDC out bounded by `slippageBps`). A withdrawal that would fail is refused before
   * anything is sent.
   *
   * @param params - `amount` or `shares`, `wallet`, `slippageBps`, `minUsdcOut`, `account`.
   * @returns The transaction hash.
   * @throws {VaultPreconditionError} `WALLET_NOT_REGISTERED`, `INSUFFICIENT_SHARES`.
   * @example
   * const hash = await vault.withdraw({ amount: parseUsdc('5') })
   */
  withdraw: (params: WithdrawParameters) => Promise<Hash>
  /**
   * Withdraws from the vault, as `withdraw` does, and waits for the receipt.
   *
   * @param params - As `withdraw`, plus `confirmations` and `timeout`.
   * @returns The hash, the shares burned and the USDC returned.
   * @example
   * const { usdcReturned } = await vault.withdrawAndWait({ amount: position.withdrawableUsdc })
   */
  withdrawAndWait: (params: WithdrawParameters & WaitOptions) => Promise<WithdrawResult>
  /**
   * Sweeps now: deposits the wallet's USDC above `reserve` when that idle amount reaches
   * `max(minIdleThreshold, the protocol minimum)`. It takes its options from the call; a sweeper's own
   * `sweep()` (from `attachToResourceServer`) takes none and uses the sweeper's options. Both join
   * the account's write queue, so they never run at once with another write of this process.
   *
   * @param params - `minIdleThreshold`, `reserve` (default 0), `wallet`, `confirmations`, `timeout`.
   * @returns The `IdleDeposit` it made (amounts and the transaction hash), or why it made none, with
   *   the amounts.
   * @example
   * const result = await vault.sweep({ minIdleThreshold: '10', reserve: '50' })
   */
  sweep: (params: SweepParameters) => Promise<SweepResult>
  /**
   * What `sweep` would do now, in one round trip, sending nothing.
   *
   * @param params - `minIdleThreshold`, `reserve`, `wallet`.
   * @returns The decision with the balance, reserve, idle amount, protocol minimum and registration.
   * @example
   * const preview = await vault.previewSweep({ minIdleThreshold: '10', reserve: '50' })
   */
  previewSweep: (params: SweepParameters) => Promise<SweepPreview>
  /**
   * The former name of `sweep`, the same action, kept for this beta.
   *
   * @deprecated Use `sweep`: a sweep makes an idle deposit.
   */
  depositIdle: (params: SweepParameters) => Promise<SweepResult>
  /**
   * The former name of `previewSweep`, the same action, kept for this beta.
   *
   * @deprecated Use `previewSweep`.
   */
  previewDepositIdle: (params: SweepParameters) => Promise<SweepPreview>
  /**
   * Sweeps after every x402 settlement that paid the merchant: attaches to the resource server's
   * after-settle hook, which returns at once while the sweep runs in the background. Problems go to
   * `onNonFatalError`; nothing is thrown into x402.
   *
   * @param resourceServer - An x402 resource server (anything with `onAfterSettle`).
   * @param options - `minIdleThreshold`, `reserve`, `wallet`, `onIdleDeposit`, `onNonFatalError`,
   *   `onPauseChange`, tuning.
   * @returns The sweeper: `detach()` on shutdown (it finishes the sweeps sales scheduled),
   *   `sweep()` to sweep now with its options, `sweepWithinRequests()` and `idle()` on an edge
   *   runtime.
   * @example
   * const sweeper = vault.attachToResourceServer(resourceServer, { minIdleThreshold: '10', reserve: '50' })
   * process.on('SIGTERM', () => sweeper.detach())
   */
  attachToResourceServer: (
    resourceServer: SettlementHookTarget,
    options: AttachToResourceServerOptions,
  ) => Sweeper
  /**
   * Pays x402 from the vault: before x402 signs a payment this vault can fund, withdraws exactly what
   * the wallet's liquid USDC lacks (a recall) and waits for the receipt. Payments share recalls; a
   * policy caps them; a payment neither the wallet nor the vault can fund is aborted before signing.
   *
   * @param client - An `x402Client` (anything with its client hooks).
   * @param options - Policy, `reserve`, `redeposit`, `onRecall`, `onNonFatalError`, tuning.
   * @returns The attachment: `detach()`, `idle()`, `state()`.
   * @example
   * const buyer = vault.attachToClient(client, { maxPerPayment: '2', maxPerWindow: '50' })
   */
  attachToClient: (client: PaymentHookTarget, options?: AttachToClientOptions) => BuyerAttachment
  /**
   * The former name of `attachToClient`, the same action, kept for this beta.
   *
   * @deprecated Use `attachToClient`: the buyer's mirror of `attachToResourceServer`.
   */
  attachTo: (client: PaymentHookTarget, options?: AttachToClientOptions) => BuyerAttachment
  /**
   * Reads whether an x402 payment's authorisation was used on chain (EIP-3009 `authorizationState`, or
   * Permit2's nonce bitmap), with the block's time, in one RPC round trip: `used`, `unused` (can still
   * be settled until its `validBefore`) or `expired` (unused, and it never can be).
   *
   * @param params - `paymentPayload`: the x402 payment payload, as x402's hooks hand it.
   * @returns `{ state, authorization, blockNumber, blockTimestamp }`.
   * @example
   * const { state } = await vault.getPaymentAuthorizationState({ paymentPayload })
   */
  getPaymentAuthorizationState: (
    params: GetPaymentAuthorizationStateParameters,
  ) => Promise<PaymentAuthorizationState>
  /**
   * Finds the transaction that settled an x402 payment: checks one (`transaction`, such as a
   * facilitator's answer), or searches the logs from `fromBlock`.
   *
   * @param params - `paymentPayload`, and `transaction` (with `timeout`) or `fromBlock` (with `toBlock`).
   * @returns The settlement (`txHash`, `blockNumber`, payer, payee, amount), or `undefined`.
   * @example
   * const settlement = await vault.findPaymentSettlement({ paymentPayload, transaction })
   */
  findPaymentSettlement: (
    params: FindPaymentSettlementParameters,
  ) => Promise<PaymentSettlement | undefined>
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
 * @throws {VaultConfigError} `UNKNOWN_CHAIN`, `CHAIN_MISMATCH`; `PEER_DEPENDENCY_MISMATCH` when the
 *   app's viem is older than this package supports; {VaultValidationError} `INVALID_ADDRESS`.
 * @example
 * const vault = createVaultClient({
 *   publicClient: createPublicClient({ chain: baseSepolia, transport: vaultHttp(rpcUrl) }),
 *   chain: 'base-sepolia',
 * })
 * await vault.verifyAddresses()
 * const status = await vault.getStatus()
 */
export function createVaultClient(parameters: CreateVaultClientParameters): VaultClient {
  // The clients come from the app's viem: npm no longer checks its version (see `supportedPeers`).
  checkPeerVersions({ feature: 'x402-vault', packages: ['viem'] })
  return decorate(createVaultContext(parameters), {})
}

/** A client member as its action takes it: the vault context first, then the member's arguments. */
type ContextAction<member> = member extends (...args: infer args) => infer result
  ? (context: VaultContext, ...args: args) => result
  : never

/**
 * The actions the client carries, by member name: the one list `createVaultClient` binds. tsc holds
 * it to {@link VaultActions} both ways (a member without its action, or an action the type does not
 * declare, fails to compile), and test/howToAdd.test.ts checks that `x402-vault` exports each one.
 */
const clientActions = {
  verifyAddresses,
  ensureInitializedAndWait,
  getStatus,
  getYield,
  getPosition,
  getLedger,
  previewDeposit,
  previewRedeem,
  previewWithdrawNet,
  getMinDeposit,
  getUsdcBalance,
  getUsdcAllowance,
  getShareBalance,
  isRegistered,
  planApproveUsdc,
  planDeposit,
  planWithdraw,
  planInitialize,
  planSetOperator,
  initialize,
  initializeAndWait,
  approveUsdc,
  approveUsdcAndWait,
  deposit,
  depositAndWait,
  withdraw,
  withdrawAndWait,
  sweep,
  previewSweep,
  depositIdle: sweep,
  previewDepositIdle: previewSweep,
  attachToResourceServer,
  attachToClient,
  attachTo: attachToClient,
  getPaymentAuthorizationState,
  findPaymentSettlement,
} satisfies { [name in keyof VaultActions]: ContextAction<VaultActions[name]> }

function decorate<extended extends object>(
  context: VaultContext,
  extension: extended,
): VaultClient<extended> {
  const actions = Object.fromEntries(
    Object.entries(clientActions).map(([name, action]) => [
      name,
      (...args: unknown[]) => (action as (...all: unknown[]) => unknown)(context, ...args),
    ]),
  ) as VaultActions
  const client = {
    ...context,
    ...actions,
    ...extension,
    extend: <const added extends object>(fn: (client: VaultClient<extended>) => added) =>
      decorate<extended & added>(context, { ...extension, ...fn(client) }),
  } as VaultClient<extended>
  return client
}
