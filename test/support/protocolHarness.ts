/**
 * Shared set-up for the protocol behaviour tests: one devnet per test file, wallet clients for its accounts,
 * snapshot isolation between tests, and helpers to send transactions and decode named reverts.
 */
import {
  type Abi,
  type Address,
  BaseError,
  type ContractEventName,
  type ContractFunctionArgs,
  type ContractFunctionName,
  type ContractFunctionReturnType,
  ContractFunctionRevertedError,
  createPublicClient,
  createTestClient,
  createWalletClient,
  decodeErrorResult,
  type Hash,
  type Hex,
  http,
  type Log,
  maxUint256,
  type ParseEventLogsReturnType,
  parseEventLogs,
  publicActions,
  type TransactionReceipt,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest'
import {
  FeeCollectorArtifact,
  MockAavePoolArtifact,
  MockMorphoVaultArtifact,
  ShareTokenArtifact,
  TestUSDCArtifact,
  VaultOracleArtifact,
  VaultRouterArtifact,
} from '../../src/devnet/artifacts/index.js'
import { type Devnet, type DevnetAccount, startDevnet } from '../../src/devnet/startDevnet.js'
import { permitTypes } from '../../src/sdk/abis/usdc.js'
import type { VaultTotals, WalletHoldings } from '../../src/sdk/internal/shareMath.js'
import { withGasMargin } from '../../src/sdk/internal/write.js'

/** 1 USDC in base units. */
export const usdc = (amount: number | bigint) => BigInt(amount) * 1_000_000n
/** An annual rate in percent, as ray (1e27 = 100 %). `rayPercent(3.5)` = 35e24. */
export const rayPercent = (percent: number) => BigInt(Math.round(percent * 1000)) * 10n ** 22n

export const VAULT_TYPE_AAVE = 0
export const VAULT_TYPE_MORPHO = 1

/** The oracle's `TWAR_WINDOW()` (4 hours) and `MIN_OBSERVATION_INTERVAL()` (5 minutes), in seconds. */
export const twarWindowSeconds = 14_400
export const minObservationIntervalSeconds = 300

/** How long `mined` waits for a receipt on the devnet, which mines every transaction on arrival. */
const minedWithinMs = 20_000

/**
 * fast-check settings for properties whose every run replays a chain history (tens of transactions):
 * the first failure is reported at once, with its error, seed and path, unshrunk. Shrinking would
 * replay hundreds of candidate histories, minutes past the test's bound; and a test that times out is
 * not stopped, so its runs would go on under the next tests while the failure itself never printed.
 * To shrink a reported failure, replay it with `{ seed, path, endOnFailure: false }`.
 */
export const chainHistoryRuns = { endOnFailure: true } as const

/** The devnet plus everything a protocol test needs. */
export type ProtocolHarness = Awaited<ReturnType<typeof startProtocolHarness>>

/**
 * Starts a devnet and builds clients for its deployer (owner of the knobs, emergency multisig and treasury),
 * merchant, buyer and facilitator accounts.
 *
 * @returns The harness; call `stop()` in `afterAll`.
 * @example
 * const harness = await startProtocolHarness()
 * await harness.registerAndApprove(harness.merchant)
 */
export async function startProtocolHarness() {
  // Base: the vault's USDC is Circle's there (EIP-3009, reason strings), which the token tests describe.
  const devnet: Devnet = await startDevnet({ chain: 'base' })
  const transport = http(devnet.rpcUrl)
  // anvil mines on arrival: poll receipts often instead of once a second.
  const pollingInterval = 50
  const publicClient = createPublicClient({ chain: devnet.viemChain, transport, pollingInterval })
  const testClient = createTestClient({ mode: 'anvil', chain: devnet.viemChain, transport })
  const walletOf = (account: DevnetAccount) => {
    const wallet = createWalletClient({
      account: privateKeyToAccount(account.privateKey),
      chain: devnet.viemChain,
      transport,
      pollingInterval,
    }).extend(publicActions)
    // The venues accrue interest when block time has moved, so a deposit costs more gas in the next
    // second than in the block it was estimated on: send with the SDK's margin, as the SDK does.
    const writeContract = (async (args: Parameters<typeof wallet.writeContract>[0]) =>
      wallet.writeContract({
        ...args,
        gas: args.gas ?? withGasMargin(await wallet.estimateContractGas(args as never)),
      } as never)) as typeof wallet.writeContract
    return { ...wallet, writeContract }
  }

  /** A typed reader of one contract's views: `(functionName, args?, blockNumber?)`. */
  const viewsOf =
    <const abi extends Abi>(address: Address, abi: abi) =>
    <name extends ContractFunctionName<abi, 'pure' | 'view'>>(
      functionName: name,
      args?: ContractFunctionArgs<abi, 'pure' | 'view', name>,
      blockNumber?: bigint,
    ) =>
      publicClient.readContract({
        address,
        abi,
        functionName,
        args,
        blockNumber,
      } as never) as Promise<ContractFunctionReturnType<abi, 'pure' | 'view', name>>

  const deployer = walletOf(devnet.accounts.deployer)
  const merchant = walletOf(devnet.accounts.merchant)
  const buyer = walletOf(devnet.accounts.buyer)
  const facilitator = walletOf(devnet.accounts.facilitator)
  const { addresses } = devnet
  const readRouter = viewsOf(addresses.router, VaultRouterArtifact.abi)
  const readOracle = viewsOf(addresses.oracle, VaultOracleArtifact.abi)
  const readFeeCollector = viewsOf(addresses.feeCollector, FeeCollectorArtifact.abi)
  const readAavePool = viewsOf(addresses.aavePool, MockAavePoolArtifact.abi)
  const readMorpho = viewsOf(addresses.morphoVault, MockMorphoVaultArtifact.abi)

  /**
   * Waits for a transaction and requires it to succeed. Anvil mines each transaction as it arrives,
   * so a receipt that has not come in 20 s never will (a transaction stuck behind a nonce gap, say):
   * the wait fails naming it, where it would otherwise outlast the test and leave the property
   * tests' run going without its seed.
   */
  async function mined(hash: Hash | Promise<Hash>): Promise<TransactionReceipt> {
    const receipt = await publicClient.waitForTransactionReceipt({
      hash: await hash,
      timeout: minedWithinMs,
    })
    expect(receipt.status).toBe('success')
    return receipt
  }

  type Wallet = typeof merchant

  /** The router's `initialize()` (registration) sent by `wallet`, not waited for. */
  function initializeCall(wallet: Wallet) {
    return wallet.writeContract({
      address: addresses.router,
      abi: VaultRouterArtifact.abi,
      functionName: 'initialize',
    })
  }

  /**
   * The router's `deposit` sent by `caller`, not waited for, so that a test can expect its revert:
   * for `forWallet` (the caller itself by default), with `minSharesOut` (0 by default).
   */
  function depositCall(
    caller: Wallet,
    amount: bigint,
    options: { forWallet?: Address; minSharesOut?: bigint } = {},
  ) {
    return caller.writeContract({
      address: addresses.router,
      abi: VaultRouterArtifact.abi,
      functionName: 'deposit',
      args: [amount, options.forWallet ?? caller.account.address, options.minSharesOut ?? 0n],
    })
  }

  /**
   * The router's `withdraw` of `shares` sent by `caller`, not waited for: from `forWallet` (the caller
   * itself by default), with `minUsdcOut` (0 by default).
   */
  function withdrawCall(
    caller: Wallet,
    shares: bigint,
    options: { forWallet?: Address; minUsdcOut?: bigint } = {},
  ) {
    return caller.writeContract({
      address: addresses.router,
      abi: VaultRouterArtifact.abi,
      functionName: 'withdraw',
      args: [shares, options.forWallet ?? caller.account.address, options.minUsdcOut ?? 0n],
    })
  }

  /** Registers `wallet` with the router and approves it for `allowance` USDC. */
  async function registerAndApprove(wallet: Wallet, allowance = maxUint256) {
    await mined(initializeCall(wallet))
    await mined(
      wallet.writeContract({
        address: addresses.usdc,
        abi: TestUSDCArtifact.abi,
        functionName: 'approve',
        args: [addresses.router, allowance],
      }),
    )
  }

  /** Deposits `amount` for the wallet itself; returns the `Deposited` event's args. */
  async function deposit(wallet: Wallet, amount: bigint) {
    const receipt = await mined(depositCall(wallet, amount))
    const [event] = parseEventLogs({
      abi: VaultRouterArtifact.abi,
      eventName: 'Deposited',
      logs: receipt.logs,
    })
    if (!event) throw new Error('no Deposited event')
    return event.args
  }

  /** Redeems `shares` for the wallet itself; returns the receipt. */
  async function withdraw(wallet: Wallet, shares: bigint, minUsdcOut = 0n) {
    return mined(withdrawCall(wallet, shares, { minUsdcOut }))
  }

  /** The vault's assets and shares (`totalVaultAssets()`, the dvUSDC supply), at one block. */
  async function vaultTotals(blockNumber?: bigint): Promise<VaultTotals> {
    const [totalAssets, totalShares] = await Promise.all([
      readRouter('totalVaultAssets', undefined, blockNumber),
      publicClient.readContract({
        address: addresses.shareToken,
        abi: ShareTokenArtifact.abi,
        functionName: 'totalSupply',
        blockNumber,
      }),
    ])
    return { totalAssets, totalShares }
  }

  /** `wallet`'s shares and cost basis on the router, at one block. */
  async function holdingsOf(wallet: Address, blockNumber?: bigint): Promise<WalletHoldings> {
    const [shares, costBasis] = await Promise.all([
      publicClient.readContract({
        address: addresses.shareToken,
        abi: ShareTokenArtifact.abi,
        functionName: 'balanceOf',
        args: [wallet],
        blockNumber,
      }),
      readRouter('costBasisUSDC', [wallet], blockNumber),
    ])
    return { shares, costBasis }
  }

  /** Mints test USDC (the faucet is open). */
  async function mintUsdc(to: Address, amount: bigint) {
    await mined(
      deployer.writeContract({
        address: addresses.usdc,
        abi: TestUSDCArtifact.abi,
        functionName: 'mint',
        args: [to, amount],
      }),
    )
  }

  /** Sends an owner-only knob of the Aave pool stand-in from the deployer. */
  async function aaveKnob(
    functionName:
      | 'setLiquidityRate'
      | 'setIdleLiquidity'
      | 'setConfiguration'
      | 'setConfigurationReverts',
    arg: bigint | boolean,
  ) {
    return mined(
      deployer.writeContract({
        address: addresses.aavePool,
        abi: MockAavePoolArtifact.abi,
        functionName,
        args: [arg as never],
      }),
    )
  }

  /** Sends an owner-only knob of the Morpho vault stand-in from the deployer. */
  async function morphoKnob(
    functionName:
      | 'setRateRay'
      | 'setConvertToAssetsReverts'
      | 'setConvertToAssetsGasBurn'
      | 'setMaxWithdrawCap'
      | 'setMaxWithdrawReverts'
      | 'setMaxDepositCap'
      | 'setMaxDepositReverts'
      | 'simulateLoss',
    arg: bigint | boolean,
  ) {
    return mined(
      deployer.writeContract({
        address: addresses.morphoVault,
        abi: MockMorphoVaultArtifact.abi,
        functionName,
        args: [arg as never],
      }),
    )
  }

  /** Calls the oracle's permissionless `recordObservation` (a no-op within 5 minutes of the last one). */
  async function recordObservation(wallet: Wallet = merchant) {
    return mined(
      wallet.writeContract({
        address: addresses.oracle,
        abi: VaultOracleArtifact.abi,
        functionName: 'recordObservation',
      }),
    )
  }

  /**
   * Makes the venues' current rates the oracle's rates, as the live oracle would see them after some hours
   * (the oracle keeps one observation per 5 minutes and averages rates over a 4-hour window): an observation at least 5 minutes on stores the new Aave rate; one a TWAR window later
   * measures the Morpho share price's growth at the new rate alone; one a window after that leaves a 4-hour
   * window whose spot rates were all measured at the new rates. Moves the clock 8 h 5 min and leaves the
   * oracle fresh.
   */
  async function settleRates() {
    for (const gap of [minObservationIntervalSeconds, twarWindowSeconds, twarWindowSeconds]) {
      await devnet.advanceTime(gap)
      await recordObservation()
    }
  }

  /** Sets both venues' rates (ray) and lets the oracle settle on them ({@link settleRates}). */
  async function setRates(aaveRateRay: bigint, morphoRateRay: bigint) {
    await aaveKnob('setLiquidityRate', aaveRateRay)
    await morphoKnob('setRateRay', morphoRateRay)
    await settleRates()
  }

  /**
   * Makes the next block carry the latest block's timestamp, so a transaction sees exactly the state that
   * views read at `latest` just saw (interest accrues with block time).
   *
   * @returns That timestamp.
   */
  async function holdClock() {
    const timestamp = await latestTimestamp()
    await testClient.setNextBlockTimestamp({ timestamp })
    return timestamp
  }

  /** The latest block number, never a cached one (viem caches it for a polling interval). */
  async function latestBlockNumber() {
    return publicClient.getBlockNumber({ cacheTime: 0 })
  }

  /**
   * Mines an empty block at exactly `timestamp` (unix seconds, at or after the latest block's).
   *
   * @returns The new block's number.
   */
  async function mineAt(timestamp: bigint) {
    await testClient.setNextBlockTimestamp({ timestamp })
    await testClient.mine({ blocks: 1 })
    return latestBlockNumber()
  }

  /** The test USDC's EIP-712 domain (Circle's: "USD Coin", version "2"). */
  function usdcDomain() {
    return {
      name: 'USD Coin',
      version: '2',
      chainId: devnet.chainId,
      verifyingContract: addresses.usdc,
    } as const
  }

  /** `owner`'s EIP-2612 permit for `spender` to move `value` test USDC. */
  function signUsdcPermit(
    owner: Wallet,
    permit: { spender: Address; value: bigint; nonce: bigint; deadline: bigint },
  ) {
    return owner.signTypedData({
      domain: usdcDomain(),
      types: permitTypes,
      primaryType: 'Permit',
      message: { owner: owner.account.address, ...permit },
    })
  }

  async function usdcBalance(account: Address) {
    return publicClient.readContract({
      address: addresses.usdc,
      abi: TestUSDCArtifact.abi,
      functionName: 'balanceOf',
      args: [account],
    })
  }

  async function shareBalance(account: Address) {
    return publicClient.readContract({
      address: addresses.shareToken,
      abi: ShareTokenArtifact.abi,
      functionName: 'balanceOf',
      args: [account],
    })
  }

  async function latestTimestamp() {
    return (await publicClient.getBlock()).timestamp
  }

  return {
    devnet,
    addresses,
    accounts: devnet.accounts,
    publicClient,
    testClient,
    deployer,
    merchant,
    buyer,
    facilitator,
    mined,
    readRouter,
    readOracle,
    readFeeCollector,
    readAavePool,
    readMorpho,
    initializeCall,
    depositCall,
    withdrawCall,
    registerAndApprove,
    deposit,
    withdraw,
    vaultTotals,
    holdingsOf,
    mintUsdc,
    aaveKnob,
    morphoKnob,
    recordObservation,
    settleRates,
    setRates,
    mineAt,
    holdClock,
    latestBlockNumber,
    usdcDomain,
    signUsdcPermit,
    usdcBalance,
    shareBalance,
    latestTimestamp,
    /** Takes an anvil snapshot (call in `beforeEach`). */
    snapshot: () => testClient.snapshot(),
    /** Reverts to a snapshot (call in `afterEach`); anvil also rewinds the clock. */
    revert: (id: Hex) => testClient.revert({ id }),
    stop: () => devnet.stop(),
  }
}

/**
 * Awaits a contract call or write that must revert, and returns viem's decoded revert.
 *
 * @param action - The pending call.
 * @returns The `ContractFunctionRevertedError` found in the error's cause chain.
 */
export async function revertOf(action: Promise<unknown>): Promise<ContractFunctionRevertedError> {
  const error = await action.then(
    () => {
      throw new Error('expected the call to revert, but it succeeded')
    },
    (cause: unknown) => cause,
  )
  expect(error).toBeInstanceOf(BaseError)
  const reverted = (error as BaseError).walk(
    (cause) => cause instanceof ContractFunctionRevertedError,
  )
  expect(reverted, String(error)).toBeInstanceOf(ContractFunctionRevertedError)
  return reverted as ContractFunctionRevertedError
}

/**
 * Asserts that `action` reverts with the custom error `errorName` (and `args`, when given).
 *
 * @example
 * await expectCustomError(router.simulate.deposit([1n, wallet, 0n]), 'InvalidAmount')
 */
export async function expectCustomError(
  action: Promise<unknown>,
  errorName: string,
  args?: readonly unknown[],
): Promise<ContractFunctionRevertedError> {
  const reverted = await revertOf(action)
  expect(reverted.data?.errorName, reverted.shortMessage).toBe(errorName)
  // viem leaves `args` undefined for errors without parameters.
  if (args) expect(reverted.data?.args ?? []).toEqual(args)
  return reverted
}

/**
 * Asserts that `action` reverts with the error `errorName` of `abi` (and `args`, when given): for errors that
 * come through unchanged from another contract (the oracle's, a venue's), which the called contract's ABI
 * does not list.
 *
 * @example
 * await expectForeignError(router.read.getRecommendedRoute([amount]), oracleAbi, 'NoSafeVault', [])
 */
export async function expectForeignError(
  action: Promise<unknown>,
  abi: Abi,
  errorName: string,
  args?: readonly unknown[],
) {
  const reverted = await revertOf(action)
  expect(reverted.raw, reverted.shortMessage).toBeDefined()
  const decoded = decodeErrorResult({ abi, data: reverted.raw as Hex })
  expect(decoded.errorName).toBe(errorName)
  if (args) expect(decoded.args ?? []).toEqual(args)
}

/** Asserts that `action` reverts with the reason string `reason` (`require(…, reason)`). */
export async function expectRevertReason(action: Promise<unknown>, reason: string) {
  const reverted = await revertOf(action)
  expect(reverted.reason).toBe(reason)
}

/** The args of the only `eventName` event of `abi` in `logs`. */
export function eventArgs<const abi extends Abi, eventName extends ContractEventName<abi>>(
  abi: abi,
  eventName: eventName,
  logs: Log[],
): ParseEventLogsReturnType<abi, eventName, true>[number]['args'] {
  const events = parseEventLogs({ abi, eventName, logs })
  expect(events).toHaveLength(1)
  return (events[0] as ParseEventLogsReturnType<abi, eventName, true>[number]).args
}

/**
 * Gives a test file one protocol harness: started before its tests (then `setup` runs), stopped after
 * them, with each test run on a snapshot that is reverted afterwards so tests cannot see each other.
 *
 * @param setup - State every test starts from, such as a registered merchant.
 * @returns The harness, filled in once `beforeAll` has run.
 * @example
 * const harness = useProtocolHarness((h) => h.registerAndApprove(h.merchant))
 */
export function useProtocolHarness(
  setup?: (harness: ProtocolHarness) => Promise<unknown>,
): ProtocolHarness {
  const harness = {} as ProtocolHarness
  let snapshot: Hex
  beforeAll(async () => {
    Object.assign(harness, await startProtocolHarness())
    await setup?.(harness)
  })
  afterAll(async () => {
    await harness.stop?.()
  })
  beforeEach(async () => {
    snapshot = await harness.snapshot()
  })
  afterEach(async () => {
    await harness.revert(snapshot)
  })
  return harness
}
