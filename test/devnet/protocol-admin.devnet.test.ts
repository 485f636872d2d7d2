import {
  type Address,
  type BaseError,
  decodeErrorResult,
  encodeDeployData,
  type Hex,
  zeroAddress,
} from 'viem'
import { describe, expect, it } from 'vitest'
import {
  FeeCollectorArtifact,
  VaultOracleArtifact,
  VaultRouterArtifact,
} from '../../src/devnet/artifacts/index.js'
import { feeOnYield } from '../../src/sdk/internal/shareMath.js'
import {
  eventArgs,
  expectCustomError,
  type ProtocolHarness,
  usdc,
  useProtocolHarness,
} from '../support/protocolHarness.js'

const router = VaultRouterArtifact.abi
const collector = FeeCollectorArtifact.abi
const oracle = VaultOracleArtifact.abi
const day = 86_400n
/** The oracle's ABI with `renounceOwnership` as Ownable declares it (nonpayable), so it can be sent. */
const oracleAsTransactions = oracle.map((item) =>
  item.type === 'function' && item.name === 'renounceOwnership'
    ? { ...item, stateMutability: 'nonpayable' as const }
    : item,
)
/** The router's ABI plus the fee collector's errors, which come out of the router's rotation calls unchanged. */
const routerWithCollectorErrors = [...router, ...collector.filter((item) => item.type === 'error')]

type Wallet = ProtocolHarness['merchant']

describe('vault protocol: fee collector and treasury rotation ', () => {
  const harness = useProtocolHarness()

  const rotation = (
    functionName: 'executeTreasuryRotation' | 'cancelTreasuryRotation',
    wallet: Wallet = harness.deployer,
  ) =>
    wallet.writeContract({
      address: harness.addresses.router,
      abi: routerWithCollectorErrors,
      functionName,
    })
  const propose = (newTreasury: Address, wallet: Wallet = harness.deployer) =>
    wallet.writeContract({
      address: harness.addresses.router,
      abi: routerWithCollectorErrors,
      functionName: 'proposeTreasuryRotation',
      args: [newTreasury],
    })
  /** Sends `send()` in a block at exactly `timestamp`. */
  const at = async (timestamp: bigint, send: () => Promise<Hex>) => {
    await harness.testClient.setNextBlockTimestamp({ timestamp })
    return send()
  }

  it('has the live constants, wiring, and a router-only collectFee (OnlyVaultRouter)', async () => {
    const { addresses, merchant } = harness
    const read = harness.readFeeCollector
    expect(
      await Promise.all([
        read('FEE_BPS'),
        read('BPS_DENOMINATOR'),
        read('TREASURY_ROTATION_DELAY'),
        read('TREASURY_ROTATION_GRACE_PERIOD'),
        read('USDC'),
        read('VAULT_ROUTER'),
        read('treasury'),
        read('pendingTreasury'),
        read('treasuryRotationEffectiveAt'),
      ]),
    ).toEqual([
      1000n,
      10_000n,
      7n * day,
      14n * day,
      addresses.usdc,
      addresses.router,
      harness.accounts.deployer.address,
      zeroAddress,
      0n,
    ])
    expect(await read('calculateFee', [45_000_001n])).toBe(feeOnYield(45_000_001n))
    for (const call of [
      () =>
        merchant.writeContract({
          address: addresses.feeCollector,
          abi: collector,
          functionName: 'collectFee',
          args: [merchant.account.address, usdc(1)],
        }),
      () =>
        merchant.writeContract({
          address: addresses.feeCollector,
          abi: collector,
          functionName: 'proposeTreasuryRotation',
          args: [merchant.account.address],
        }),
    ]) {
      await expectCustomError(call(), 'OnlyVaultRouter', [merchant.account.address])
    }
  })

  it('cannot be built without a treasury (ZeroTreasury)', async () => {
    const { addresses, publicClient, deployer } = harness
    const construction = publicClient.call({
      account: deployer.account,
      data: encodeDeployData({
        abi: collector,
        bytecode: FeeCollectorArtifact.bytecode,
        args: [addresses.usdc, addresses.router, zeroAddress],
      }),
    })
    const error = (await construction.then(
      () => expect.fail('the construction succeeded'),
      (cause: unknown) => cause,
    )) as BaseError
    // A plain call has no function to decode against: the revert data sits deeper in the cause chain.
    const withData = error.walk((cause) => typeof (cause as { data?: unknown }).data === 'string')
    const data = (withData as { data: Hex } | null)?.data
    expect(data, error.message).toBeDefined()
    expect(decodeErrorResult({ abi: collector, data: data as Hex }).errorName).toBe('ZeroTreasury')
  })

  it('rejects bad rotations: not the multisig, InvalidNewTreasury, RotationNotProposed, RotationAlreadyPending', async () => {
    const { buyer, merchant } = harness
    await expectCustomError(propose(buyer.account.address, merchant), 'NotEmergencyMultisig', [])
    await expectCustomError(propose(zeroAddress), 'InvalidNewTreasury', [])
    await expectCustomError(propose(harness.accounts.deployer.address), 'InvalidNewTreasury', [])
    await expectCustomError(rotation('executeTreasuryRotation'), 'RotationNotProposed', [])
    await expectCustomError(rotation('cancelTreasuryRotation'), 'RotationNotProposed', [])
    await harness.mined(propose(buyer.account.address))
    await expectCustomError(propose(merchant.account.address), 'RotationAlreadyPending', [
      buyer.account.address,
    ])
  })

  it('rotates after 7 days and within the 14-day grace, with TreasuryRotationProposed and TreasuryUpdated', async () => {
    const { buyer, merchant } = harness
    const current = harness.accounts.deployer.address
    const newTreasury = buyer.account.address
    const proposal = await harness.mined(propose(newTreasury))
    const proposedAt = (await harness.publicClient.getBlock({ blockNumber: proposal.blockNumber }))
      .timestamp
    const effectiveAt = proposedAt + 7n * day
    const expiredAt = effectiveAt + 14n * day
    expect(eventArgs(collector, 'TreasuryRotationProposed', proposal.logs)).toEqual({
      currentTreasury: current,
      pendingTreasury: newTreasury,
      effectiveAt,
    })
    expect(await harness.readFeeCollector('pendingTreasury')).toBe(newTreasury)
    expect(await harness.readFeeCollector('treasuryRotationEffectiveAt')).toBe(effectiveAt)

    await expectCustomError(
      at(effectiveAt - 1n, () => rotation('executeTreasuryRotation')),
      'RotationNotReady',
      [effectiveAt - 1n, effectiveAt],
    )
    // The grace period's last second still works; one more and the proposal has expired.
    const snapshot = await harness.snapshot()
    await expectCustomError(
      at(expiredAt + 1n, () => rotation('executeTreasuryRotation')),
      'RotationExpired',
      [expiredAt + 1n, expiredAt],
    )
    await harness.revert(snapshot)
    const executed = await harness.mined(at(expiredAt, () => rotation('executeTreasuryRotation')))
    expect(eventArgs(collector, 'TreasuryUpdated', executed.logs)).toEqual({
      oldTreasury: current,
      newTreasury,
    })
    expect(await harness.readFeeCollector('treasury')).toBe(newTreasury)
    expect(await harness.readFeeCollector('pendingTreasury')).toBe(zeroAddress)
    expect(await harness.readFeeCollector('treasuryRotationEffectiveAt')).toBe(0n)

    // Fees now go to the new treasury.
    await harness.registerAndApprove(merchant)
    const { dvUsdcMinted } = await harness.deposit(merchant, usdc(500))
    await harness.devnet.advanceTime(365 * 86_400)
    const before = await harness.usdcBalance(newTreasury)
    const receipt = await harness.withdraw(merchant, dvUsdcMinted)
    const { feePaid } = eventArgs(router, 'Withdrawn', receipt.logs)
    expect(feePaid).toBeGreaterThan(0n)
    expect(await harness.usdcBalance(newTreasury)).toBe(before + feePaid)
  })

  it('executes at exactly the effective time, and cancels a pending rotation (TreasuryRotationCancelled)', async () => {
    const { buyer } = harness
    const proposal = await harness.mined(propose(buyer.account.address))
    const effectiveAt = eventArgs(collector, 'TreasuryRotationProposed', proposal.logs).effectiveAt
    const snapshot = await harness.snapshot()
    await harness.mined(at(effectiveAt, () => rotation('executeTreasuryRotation')))
    expect(await harness.readFeeCollector('treasury')).toBe(buyer.account.address)
    await harness.revert(snapshot)

    await expectCustomError(rotation('cancelTreasuryRotation', buyer), 'NotEmergencyMultisig', [])
    const cancelled = await harness.mined(rotation('cancelTreasuryRotation'))
    expect(eventArgs(collector, 'TreasuryRotationCancelled', cancelled.logs)).toEqual({
      cancelledPendingTreasury: buyer.account.address,
    })
    expect(await harness.readFeeCollector('pendingTreasury')).toBe(zeroAddress)
    expect(await harness.readFeeCollector('treasuryRotationEffectiveAt')).toBe(0n)
    await expectCustomError(rotation('executeTreasuryRotation'), 'RotationNotProposed', [])
  })
})

describe('vault protocol: the oracle’s owner surface and public views ', () => {
  const harness = useProtocolHarness()

  const setMinDifferentialRay = (value: bigint, wallet: Wallet = harness.deployer) =>
    wallet.writeContract({
      address: harness.addresses.oracle,
      abi: oracle,
      functionName: 'setMinDifferentialRay',
      args: [value],
    })
  const transferOwnership = (newOwner: Address) =>
    harness.deployer.writeContract({
      address: harness.addresses.oracle,
      abi: oracle,
      functionName: 'transferOwnership',
      args: [newOwner],
    })
  const call = (
    functionName:
      | 'executeMinDifferentialRay'
      | 'cancelPendingMinDifferentialRay'
      | 'renounceOwnership'
      | 'acceptOwnership',
    wallet: Wallet = harness.deployer,
  ) =>
    // The devnet declares renounceOwnership `pure` (it always reverts); it is still sent as a transaction.
    wallet.writeContract({
      address: harness.addresses.oracle,
      abi: oracleAsTransactions,
      functionName,
    })

  it('answers every constant, state view and immutable', async () => {
    const { addresses } = harness
    const read = harness.readOracle
    const constants = {
      TWAR_WINDOW: 14_400n,
      MIN_OBSERVATION_INTERVAL: 300n,
      BUFFER_SIZE: 48n,
      RAY: 10n ** 27n,
      SECONDS_PER_YEAR: 31_557_600n,
      UTILISATION_THRESHOLD_BPS: 9_000n,
      BPS_DENOMINATOR: 10_000n,
      SHARE_UNIT: 10n ** 24n,
      MORPHO_PEG_ASSETS: 10n ** 12n,
      MAX_STALENESS: 7_200n,
      DEFAULT_MIN_DIFFERENTIAL_RAY: 2n * 10n ** 24n,
      MIN_DIFFERENTIAL_RAY_LOWER_BOUND: 10n ** 24n,
      MIN_DIFFERENTIAL_RAY_UPPER_BOUND: 10n ** 25n,
      MIN_DIFFERENTIAL_RAY_CHANGE_DELAY: day,
    } as const
    for (const [name, value] of Object.entries(constants)) {
      expect(await read(name as keyof typeof constants), name).toBe(value)
    }
    expect(
      await Promise.all([
        read('minDifferentialRay'),
        read('pendingMinDifferentialRay'),
        read('pendingMinDifferentialRayEffectiveAt'),
        read('owner'),
        read('pendingOwner'),
        read('AAVE_POOL'),
        read('A_TOKEN'),
        read('USDC'),
        read('MORPHO_VAULT'),
      ]),
    ).toEqual([
      2n * 10n ** 24n,
      0n,
      0n,
      harness.accounts.deployer.address,
      zeroAddress,
      addresses.aavePool,
      addresses.aToken,
      addresses.usdc,
      addresses.morphoVault,
    ])

    // Freshness: at most 2 hours since the last observation.
    const last = await read('lastObservationTime')
    await harness.mineAt(last + 7_200n)
    expect([await read('lastGoodObservationAge'), await read('isFresh')]).toEqual([7_200n, true])
    expect(await harness.readRouter('oracleStatus')).toEqual([last, true])
    await harness.mineAt(last + 7_201n)
    expect([await read('lastGoodObservationAge'), await read('isFresh')]).toEqual([7_201n, false])
    expect(await harness.readRouter('oracleStatus')).toEqual([last, false])
  })

  it('bounds setMinDifferentialRay (MinDifferentialRayOutOfBounds, NoChange), owner only', async () => {
    const { merchant } = harness
    await expectCustomError(
      setMinDifferentialRay(3n * 10n ** 24n, merchant),
      'OwnableUnauthorizedAccount',
      [merchant.account.address],
    )
    for (const outOfBounds of [10n ** 24n - 1n, 10n ** 25n + 1n, 0n]) {
      await expectCustomError(setMinDifferentialRay(outOfBounds), 'MinDifferentialRayOutOfBounds', [
        outOfBounds,
        10n ** 24n,
        10n ** 25n,
      ])
    }
    await expectCustomError(setMinDifferentialRay(2n * 10n ** 24n), 'NoChange', [])
  })

  it('schedules a new threshold 24 hours ahead; anyone executes it once due', async () => {
    const { buyer } = harness
    const scheduled = await harness.mined(setMinDifferentialRay(10n ** 24n))
    const scheduledAt = (
      await harness.publicClient.getBlock({ blockNumber: scheduled.blockNumber })
    ).timestamp
    const effectiveAt = scheduledAt + day
    expect(eventArgs(oracle, 'MinDifferentialRayUpdateScheduled', scheduled.logs)).toEqual({
      oldValue: 2n * 10n ** 24n,
      newValue: 10n ** 24n,
      effectiveAt,
    })
    expect(await harness.readOracle('pendingMinDifferentialRay')).toBe(10n ** 24n)
    expect(await harness.readOracle('pendingMinDifferentialRayEffectiveAt')).toBe(effectiveAt)
    expect(await harness.readOracle('minDifferentialRay')).toBe(2n * 10n ** 24n)

    await harness.testClient.setNextBlockTimestamp({ timestamp: effectiveAt - 1n })
    await expectCustomError(
      call('executeMinDifferentialRay', buyer),
      'MinDifferentialRayTimelockActive',
      [effectiveAt],
    )
    await harness.testClient.setNextBlockTimestamp({ timestamp: effectiveAt })
    const executed = await harness.mined(call('executeMinDifferentialRay', buyer))
    expect(eventArgs(oracle, 'MinDifferentialRayUpdated', executed.logs)).toEqual({
      oldValue: 2n * 10n ** 24n,
      newValue: 10n ** 24n,
    })
    expect(await harness.readOracle('minDifferentialRay')).toBe(10n ** 24n)
    expect(await harness.readOracle('pendingMinDifferentialRay')).toBe(0n)
    expect(await harness.readOracle('pendingMinDifferentialRayEffectiveAt')).toBe(0n)
    await expectCustomError(
      call('executeMinDifferentialRay', buyer),
      'NoPendingMinDifferentialRay',
      [],
    )
  })

  it('lets only the owner cancel a scheduled threshold', async () => {
    const { buyer } = harness
    await harness.mined(setMinDifferentialRay(10n ** 25n))
    await expectCustomError(
      call('cancelPendingMinDifferentialRay', buyer),
      'OwnableUnauthorizedAccount',
      [buyer.account.address],
    )
    const cancelled = await harness.mined(call('cancelPendingMinDifferentialRay'))
    expect(eventArgs(oracle, 'MinDifferentialRayUpdateCancelled', cancelled.logs)).toEqual({
      cancelledValue: 10n ** 25n,
    })
    expect(await harness.readOracle('pendingMinDifferentialRayEffectiveAt')).toBe(0n)
    await expectCustomError(call('executeMinDifferentialRay'), 'NoPendingMinDifferentialRay', [])
    await expectCustomError(
      call('cancelPendingMinDifferentialRay'),
      'NoPendingMinDifferentialRay',
      [],
    )
  })

  it('never renounces ownership, and transfers it in two steps (Ownable2Step)', async () => {
    const { buyer, merchant, deployer } = harness
    await expectCustomError(call('renounceOwnership'), 'OwnershipRenouncementDisabled', [])
    const started = await harness.mined(transferOwnership(buyer.account.address))
    expect(eventArgs(oracle, 'OwnershipTransferStarted', started.logs)).toEqual({
      previousOwner: deployer.account.address,
      newOwner: buyer.account.address,
    })
    expect(await harness.readOracle('owner')).toBe(deployer.account.address)
    expect(await harness.readOracle('pendingOwner')).toBe(buyer.account.address)
    await expectCustomError(call('acceptOwnership', merchant), 'OwnableUnauthorizedAccount', [
      merchant.account.address,
    ])
    await harness.mined(call('acceptOwnership', buyer))
    expect(await harness.readOracle('owner')).toBe(buyer.account.address)
    expect(await harness.readOracle('pendingOwner')).toBe(zeroAddress)
    await expectCustomError(setMinDifferentialRay(3n * 10n ** 24n), 'OwnableUnauthorizedAccount', [
      deployer.account.address,
    ])
    await expectCustomError(call('renounceOwnership', buyer), 'OwnershipRenouncementDisabled', [])
  })
})

describe('vault protocol: the router’s wiring and status views ', () => {
  const harness = useProtocolHarness()

  it('answers its wiring, constants and price views', async () => {
    const { addresses } = harness
    const read = harness.readRouter
    expect(
      await Promise.all([
        read('USDC'),
        read('A_TOKEN'),
        read('AAVE_POOL'),
        read('MORPHO_VAULT'),
        read('ORACLE'),
        read('FEE_COLLECTOR'),
        read('DV_USDC'),
        read('EMERGENCY_MULTISIG'),
        read('MIN_DEPOSIT'),
        read('depositsPaused'),
      ]),
    ).toEqual([
      addresses.usdc,
      addresses.aToken,
      addresses.aavePool,
      addresses.morphoVault,
      addresses.oracle,
      addresses.feeCollector,
      addresses.shareToken,
      harness.accounts.deployer.address,
      usdc(10),
      false,
    ])
    // An empty vault prices a share at 1 USDC (the virtual offset), 1e18-scaled.
    expect(await read('pricePerShare')).toBe(10n ** 18n)
    await harness.registerAndApprove(harness.merchant)
    await harness.deposit(harness.merchant, usdc(1_000))
    await harness.devnet.advanceTime(30 * 86_400)
    const { totalAssets, totalShares } = await harness.vaultTotals()
    expect(await read('pricePerShare')).toBe(
      ((totalAssets + 1_000_000n) * 10n ** 18n) / (totalShares + 1_000_000n),
    )
  })
})
