export * from './abis/index.js'
export {
  type ApproveUsdcParameters,
  type ApproveUsdcResult,
  approveUsdc,
  approveUsdcAndWait,
} from './actions/approveUsdc.js'
export {
  type DepositMethod,
  type DepositParameters,
  type DepositResult,
  deposit,
  depositAndWait,
} from './actions/deposit.js'
export {
  type EnsureInitializedParameters,
  type EnsureInitializedResult,
  ensureInitializedAndWait,
} from './actions/ensureInitializedAndWait.js'
export { getMinDeposit } from './actions/getMinDeposit.js'
export { getPosition, type VaultPosition } from './actions/getPosition.js'
export { getShareBalance } from './actions/getShareBalance.js'
export { getStatus, type VaultStatus } from './actions/getStatus.js'
export { getUsdcAllowance } from './actions/getUsdcAllowance.js'
export { getUsdcBalance } from './actions/getUsdcBalance.js'
export {
  getYield,
  type OptimalVenue,
  type VaultYield,
  type VenueName,
  type VenueYield,
} from './actions/getYield.js'
export {
  type InitializeParameters,
  type InitializeResult,
  initialize,
  initializeAndWait,
} from './actions/initialize.js'
export { isRegistered } from './actions/isRegistered.js'
export {
  type ApproveUsdcPlan,
  type PlanApproveUsdcParameters,
  planApproveUsdc,
} from './actions/planApproveUsdc.js'
export { type DepositPlan, type PlanDepositParameters, planDeposit } from './actions/planDeposit.js'
export {
  type InitializePlan,
  type PlanInitializeParameters,
  planInitialize,
} from './actions/planInitialize.js'
export {
  type PlanWithdrawParameters,
  planWithdraw,
  type WithdrawPlan,
} from './actions/planWithdraw.js'
export { previewDeposit } from './actions/previewDeposit.js'
export { previewRedeem } from './actions/previewRedeem.js'
export { previewWithdrawNet } from './actions/previewWithdrawNet.js'
export { type VerifyAddressesResult, verifyAddresses } from './actions/verifyAddresses.js'
export {
  type WithdrawParameters,
  type WithdrawResult,
  withdraw,
  withdrawAndWait,
} from './actions/withdraw.js'
export * from './chains.js'
export type { VaultContext, VaultPublicClient, VaultWalletClient } from './context.js'
export {
  type CreateVaultClientParameters,
  createVaultClient,
  type VaultActions,
  type VaultClient,
} from './createVaultClient.js'
export { type CreateVaultContextParameters, createVaultContext } from './createVaultContext.js'
export {
  AddressMismatchError,
  toJsonSafe,
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
} from './errors/classes.js'
export {
  type VaultErrorCategory,
  type VaultErrorCode,
  type VaultErrorDetails,
  vaultErrorCodes,
} from './errors/codes.js'
export { decodeVaultError, describeContractError } from './errors/contract.js'
export { parseRetryAfter } from './errors/rpc.js'
export { type ToVaultErrorContext, toVaultError } from './errors/toVaultError.js'
export {
  type Field,
  isUnavailable,
  mapField,
  type Unavailable,
  unavailable,
  unwrapField,
} from './field.js'
export { DEFAULT_SLIPPAGE_BPS, MAX_SLIPPAGE_BPS } from './internal/validate.js'
export type { WaitOptions } from './internal/write.js'
export {
  type LoadVaultAddressesOptions,
  loadVaultAddresses,
  parseVaultAddresses,
} from './loadVaultAddresses.js'
export {
  type EvmAddressOptions,
  evmAddress,
  formatUsdc,
  parseUsdc,
  USDC_DECIMALS,
} from './money.js'
export { formatRayPercent, RAY } from './rates.js'
export { redactSecrets, redactUrl } from './redact.js'
export {
  type AttachToResourceServerOptions,
  attachToResourceServer,
  type SettlementHookTarget,
  type Sweeper,
} from './seller/attachToResourceServer.js'
export {
  type DecideSweepParameters,
  decideSweep,
  type NoDepositReason,
  type SweepDecision,
} from './seller/decideSweep.js'
export { type DepositIdleParameters, depositIdle } from './seller/depositIdle.js'
export {
  type IgnoredSettlementReason,
  type MerchantSettlement,
  merchantSettlementOf,
  type SettlementHookContext,
} from './seller/merchantSettlement.js'
export { type DepositIdlePreview, previewDepositIdle } from './seller/previewDepositIdle.js'
export { readX402UsdcAsset } from './seller/readX402UsdcAsset.js'
export type { SweeperMemory } from './seller/settlementRecord.js'
export type {
  IdleDeposit,
  NoIdleDeposit,
  SweepAmounts,
  SweepOptions,
  SweepResult,
  SweepStep,
} from './seller/sweep.js'
export type { SweeperProblem, SweepPhase } from './seller/sweepObservers.js'
export {
  type X402AssetTransferMethod,
  type X402UsdcAsset,
  type X402UsdcPrice,
  type X402UsdcPriceParameters,
  x402UsdcAssets,
  x402UsdcPrice,
} from './seller/x402UsdcPrice.js'
export {
  type ApproveTransaction,
  buildApproveTransaction,
  buildDepositTransaction,
  buildInitializeTransaction,
  buildWithdrawTransaction,
  type DepositTransaction,
  type InitializeTransaction,
  type VaultTransaction,
  type WithdrawTransaction,
} from './transactions.js'
export { retryDecision, type VaultHttpConfig, vaultHttp } from './transport.js'
