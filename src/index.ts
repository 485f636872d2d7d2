// `x402-vault`, the vault SDK: every public name, listed here and only here. The API report
// `api/x402-vault.api.md` records this list, and `npm test` fails when it changes unreviewed.
// Upper layers (plugins, mcp, cli, devnet) import the SDK from this file, and what is not public
// from `src/sdk/shared.ts`.

export { feeCollectorAbi } from './sdk/abis/feeCollector.js'
export { oracleAbi } from './sdk/abis/oracle.js'
export { routerAbi } from './sdk/abis/router.js'
export { shareTokenAbi } from './sdk/abis/shareToken.js'
export { usdcAbi } from './sdk/abis/usdc.js'
export {
  type ApproveUsdcParameters,
  type ApproveUsdcResult,
  approveUsdc,
  approveUsdcAndWait,
} from './sdk/actions/approveUsdc.js'
export {
  type DepositMethod,
  type DepositParameters,
  type DepositResult,
  deposit,
  depositAndWait,
} from './sdk/actions/deposit.js'
export {
  type EnsureInitializedParameters,
  type EnsureInitializedResult,
  ensureInitializedAndWait,
} from './sdk/actions/ensureInitializedAndWait.js'
export {
  type FindPaymentSettlementParameters,
  findPaymentSettlement,
  type PaymentSettlement,
} from './sdk/actions/findPaymentSettlement.js'
export {
  type GetLedgerParameters,
  getLedger,
  type LedgerEntry,
  type LedgerEntryKind,
  type LedgerPosition,
  type LedgerPositionPoint,
  type LedgerTokenSummary,
  type LedgerTotals,
  type LedgerX402Scheme,
  type VaultLedger,
} from './sdk/actions/getLedger.js'
export { getMinDeposit } from './sdk/actions/getMinDeposit.js'
export {
  type GetPaymentAuthorizationStateParameters,
  getPaymentAuthorizationState,
  type PaymentAuthorizationState,
  type PaymentAuthorizationStatus,
} from './sdk/actions/getPaymentAuthorizationState.js'
export { getPosition, type VaultPosition } from './sdk/actions/getPosition.js'
export { getShareBalance } from './sdk/actions/getShareBalance.js'
export { getStatus, type VaultStatus } from './sdk/actions/getStatus.js'
export { getUsdcAllowance } from './sdk/actions/getUsdcAllowance.js'
export { getUsdcBalance } from './sdk/actions/getUsdcBalance.js'
export {
  getYield,
  type OptimalVenue,
  type VaultYield,
  type VenueName,
  type VenueYield,
} from './sdk/actions/getYield.js'
export {
  type InitializeParameters,
  type InitializeResult,
  initialize,
  initializeAndWait,
} from './sdk/actions/initialize.js'
export { isRegistered } from './sdk/actions/isRegistered.js'
export {
  type PaymentAuthorization,
  type PaymentAuthorizationMethod,
  paymentAuthorizationOf,
  type X402PaymentPayload,
} from './sdk/actions/paymentAuthorization.js'
export {
  type ApproveUsdcPlan,
  type PlanApproveUsdcParameters,
  planApproveUsdc,
} from './sdk/actions/planApproveUsdc.js'
export {
  type DepositPlan,
  type PlanDepositParameters,
  planDeposit,
} from './sdk/actions/planDeposit.js'
export {
  type InitializePlan,
  type PlanInitializeParameters,
  planInitialize,
} from './sdk/actions/planInitialize.js'
export {
  type PlanSetOperatorParameters,
  planSetOperator,
  type SetOperatorPlan,
} from './sdk/actions/planSetOperator.js'
export {
  type PlanWithdrawParameters,
  planWithdraw,
  type WithdrawPlan,
} from './sdk/actions/planWithdraw.js'
export { previewDeposit } from './sdk/actions/previewDeposit.js'
export { previewRedeem } from './sdk/actions/previewRedeem.js'
export { previewWithdrawNet } from './sdk/actions/previewWithdrawNet.js'
export { type VerifyAddressesResult, verifyAddresses } from './sdk/actions/verifyAddresses.js'
export {
  type WithdrawParameters,
  type WithdrawResult,
  withdraw,
  withdrawAndWait,
} from './sdk/actions/withdraw.js'
export {
  type AttachToClientOptions,
  type AttachToOptions,
  attachTo,
  attachToClient,
  type BuyerAttachment,
  type BuyerPhase,
  type BuyerProblem,
  type PaymentHookTarget,
  type PaymentRequiredHookTarget,
} from './sdk/buyer/attachToClient.js'
export {
  PaymentFundingError,
  PaymentOutcomeError,
  PaymentPolicyError,
} from './sdk/buyer/buyerErrors.js'
export type { BuyerPayment, PaymentCreationHookContext } from './sdk/buyer/buyerPayment.js'
export type { BuyerPolicyOptions } from './sdk/buyer/buyerPolicy.js'
export { findVaultError } from './sdk/buyer/findVaultError.js'
export type { PaymentResponseHookContext, Purchase } from './sdk/buyer/purchaseGuard.js'
export type { Recall, RecallStep } from './sdk/buyer/recall.js'
export {
  type VaultAddresses,
  type VaultChainEntry,
  type VaultChainName,
  type VaultNetwork,
  vaultChains,
} from './sdk/chains.js'
export type { VaultContext, VaultPublicClient, VaultWalletClient } from './sdk/context.js'
export {
  type CreateVaultClientParameters,
  createVaultClient,
  type VaultActions,
  type VaultClient,
} from './sdk/createVaultClient.js'
export { type CreateVaultContextParameters, createVaultContext } from './sdk/createVaultContext.js'
export {
  AddressMismatchError,
  UnavailableFieldError,
  VaultConfigError,
  VaultContractError,
  type VaultContractRole,
  VaultError,
  type VaultErrorOptions,
  VaultPreconditionError,
  VaultRpcError,
  VaultTransactionError,
  VaultValidationError,
} from './sdk/errors/classes.js'
export {
  type VaultErrorCategory,
  type VaultErrorCode,
  type VaultErrorDetails,
  vaultErrorCodes,
} from './sdk/errors/codes.js'
export { type Field, isUnavailable, mapField, type Unavailable, unwrapField } from './sdk/field.js'
export {
  type LoadVaultAddressesOptions,
  loadVaultAddresses,
  parseVaultAddresses,
} from './sdk/loadVaultAddresses.js'
export {
  type EvmAddressOptions,
  evmAddress,
  formatUsdc,
  parseUsdc,
  USDC_DECIMALS,
} from './sdk/money.js'
export type {
  PlanWarning,
  PlanWarningCode,
  PlanWarningLevel,
  WalletCall,
  WalletCalls,
} from './sdk/plans.js'
export { formatRayPercent, RAY } from './sdk/rates.js'
export {
  type AttachToResourceServerOptions,
  attachToResourceServer,
  type SettlementHookTarget,
  type Sweeper,
} from './sdk/seller/attachToResourceServer.js'
export type { SettlementHookContext } from './sdk/seller/merchantSettlement.js'
export { readX402UsdcAsset } from './sdk/seller/readX402UsdcAsset.js'
export {
  type X402AssetTransferMethod,
  type X402UsdcAsset,
  type X402UsdcPrice,
  type X402UsdcPriceParameters,
  x402UsdcPrice,
} from './sdk/seller/x402UsdcPrice.js'
export type {
  NoDepositReason,
  NoIdleDepositReason,
  SweepDecision,
} from './sdk/sweep/decideSweep.js'
export {
  type DepositIdlePreview,
  previewDepositIdle,
  previewSweep,
  type SweepPreview,
} from './sdk/sweep/previewSweep.js'
export type { MerchantSettlement, SweeperMemory } from './sdk/sweep/settlementRecord.js'
export {
  type DepositIdleParameters,
  depositIdle,
  type IdleDeposit,
  type NoIdleDeposit,
  type SweepAmounts,
  type SweepOptions,
  type SweepParameters,
  type SweepResult,
  type SweepStep,
  sweep,
} from './sdk/sweep/sweep.js'
export type { PauseChange, SweeperProblem, SweepPhase } from './sdk/sweep/sweepObservers.js'
export type { SweepTuningOptions } from './sdk/sweep/sweepTuning.js'
export type {
  ApproveTransaction,
  DepositTransaction,
  InitializeTransaction,
  SetOperatorTransaction,
  VaultTransaction,
  WaitOptions,
  WithdrawTransaction,
} from './sdk/transactions.js'
export { type VaultHttpConfig, vaultHttp } from './sdk/transport.js'
