/**
 * Shared set-up for the protocol behaviour tests: one devnet per test file, wallet clients for its accounts,
 * snapshot isolation between tests, and helpers to send transactions and decode named reverts.
 */
import {
  type Abi,
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createTestClient,
  createWalletClient,
  type Hash,
  type Hex,
  http,
  type Log,
  maxUint256,
  parseEventLogs,
  publicActions,
  type TransactionReceipt,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest'
import {
  MockAavePoolArtifact,
  MockMorphoVaultArtifact,
  ShareTokenArtifact,
  TestUSDCArtifact,
  VaultOracleArtifact,
  VaultRouterArtifact,
} from '../../src/devnet/artifacts/index.js'
import { type Devnet, type DevnetAccount, startDevnet } from '../../src/devnet/startDevnet.js'
import { withGasMargin } from '../../src/sdk/internal/write.js'

/** 1 USDC in base units. */
export const usdc = (amount: number | bigint) => BigInt(amount) * 1_000_000n
/** An annual rate in percent, as ray (1e27 = 100 %). `rayPercent(3.5)` = 35e24. */
export const rayPercent = (percent: number) => BigInt(Math.round(percent * 1000)) * 10n ** 22n

export const VAULT_TYPE_AAVE = 0
export const VAULT_TYPE_MORPHO = 1

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
  const devnet: Devnet = await startDevnet()
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

  const deployer = walletOf(devnet.accounts.deployer)
  const merchant = walletOf(devnet.accounts.merchant)
  const buyer = walletOf(devnet.accounts.buyer)
  const facilitator = walletOf(devnet.accounts.facilitator)
  const { addresses } = devnet

  /** Waits for a transaction and requires it to succeed. */
  async function mined(hash: Hash | Promise<Hash>): Promise<TransactionReceipt> {
    const receipt = await publicClient.waitForTransactionReceipt({ hash: await hash })
    expect(receipt.status).toBe('success')
    return receipt
  }

  type Wallet = typeof merchant

  /** Registers `wallet` with the router and approves it for `allowance` USDC. */
  async function registerAndApprove(wallet: Wallet, allowance = maxUint256) {
    await mined(
      wallet.writeContract({
        address: addresses.router,
        abi: VaultRouterArtifact.abi,
        functionName: 'initialize',
      }),
    )
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
    const receipt = await mined(
      wallet.writeContract({
        address: addresses.router,
        abi: VaultRouterArtifact.abi,
        functionName: 'deposit',
        args: [amount, wallet.account.address, 0n],
      }),
    )
    const [event] = parseEventLogs({
      abi: VaultRouterArtifact.abi,
      eventName: 'Deposited',
      logs: receipt.logs,
    })
    if (!event) throw new Error('no Deposited event')
    return event.args
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

  /** Sets both venues' rates and restarts the oracle's history so the new rates apply at once. */
  async function setRates(aaveRateRay: bigint, morphoRateRay: bigint) {
    await mined(
      deployer.writeContract({
        address: addresses.aavePool,
        abi: MockAavePoolArtifact.abi,
        functionName: 'setLiquidityRate',
        args: [aaveRateRay],
      }),
    )
    await mined(
      deployer.writeContract({
        address: addresses.morphoVault,
        abi: MockMorphoVaultArtifact.abi,
        functionName: 'setRateRay',
        args: [morphoRateRay],
      }),
    )
    await mined(
      deployer.writeContract({
        address: addresses.oracle,
        abi: VaultOracleArtifact.abi,
        functionName: 'resetObservations',
      }),
    )
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
    registerAndApprove,
    deposit,
    mintUsdc,
    setRates,
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

/** Asserts that `action` reverts with the reason string `reason` (`require(…, reason)`). */
export async function expectRevertReason(action: Promise<unknown>, reason: string) {
  const reverted = await revertOf(action)
  expect(reverted.reason).toBe(reason)
}

/** The args of the only `eventName` event of `abi` in `logs`. */
export function eventArgs<const abi extends Abi, eventName extends string>(
  abi: abi,
  eventName: eventName,
  logs: Log[],
) {
  const events = parseEventLogs({ abi, eventName: eventName as never, logs })
  expect(events).toHaveLength(1)
  return (events[0] as unknown as { args: Record<string, unknown> }).args
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
