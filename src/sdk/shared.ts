// Package-internal: what the upper layers (plugins, mcp, cli, devnet) need from the SDK beyond its
// public entry, `src/index.ts`. It is no entry point of package.json, so nothing here is public API:
// an upper layer imports the SDK from `src/index.ts` or from this file, never from a deeper module.

export { x402BatchSettlementAbi } from './abis/x402.js'
export {
  chainChoices,
  circleTestUsdc,
  circleUsdcDomain,
  defaultChainName,
  isVaultChainName,
  multicall3Address,
  permit2Address,
  publicRpcUrlOf,
  vaultChainNames,
  x402BatchSettlementAddress,
  x402Erc3009DepositCollectorAddress,
  x402ExactPermit2ProxyAddress,
  x402Permit2DepositCollectorAddress,
  x402UptoPermit2ProxyAddress,
} from './chains.js'
export { toJsonSafe } from './errors/classes.js'
export { findCause } from './errors/find.js'
export { toVaultError } from './errors/toVaultError.js'
export { importPeer, type PeerFeature } from './importPeer.js'
export { nodeHttpFetch } from './internal/nodeHttpFetch.js'
export { sleep } from './internal/sleep.js'
export { MAX_SLIPPAGE_BPS } from './internal/validate.js'
export { withGasMargin } from './internal/write.js'
export {
  DEFAULT_LOG_SPAN,
  getLogsInRanges,
  isLogRangeTooLarge,
  type LogRangeLimit,
  readInRanges,
} from './logRanges.js'
export { describeShares } from './money.js'
export { redactSecrets, redactUrl } from './redact.js'
export { SettlementRecord } from './sweep/settlementRecord.js'
export { resolveSweepSettings, type SweepSettings } from './sweep/sweep.js'
export { sweepGas, sweepGasText } from './sweep/sweepGas.js'
export { sweepObservers } from './sweep/sweepObservers.js'
export { type SweepRetryPolicy, sweepRetryDelay } from './sweep/sweepRetry.js'
export { SweepScheduler } from './sweep/sweepScheduler.js'
export { resolveSweepTuning, type SweepTuning } from './sweep/sweepTuning.js'
export { type SweeperParts, sweepWithRetries } from './sweep/sweepWithRetries.js'
