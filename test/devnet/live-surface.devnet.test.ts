/**
 * The devnet's public surface against the live contracts', name by name: each
 * contract answers exactly the live functions plus the devnet's declared extras; every view named answers its live
 * value or follows its live rule; every owner function named is called once each way.
 */
import { type Abi, parseEventLogs, zeroAddress } from 'viem'
import { describe, expect, it } from 'vitest'
import {
  FeeCollectorArtifact,
  MockMorphoVaultArtifact,
  ShareTokenArtifact,
  VaultOracleArtifact,
  VaultRouterArtifact,
} from '../../src/devnet/artifacts/index.js'
import {
  eventArgs,
  expectCustomError,
  minObservationIntervalSeconds,
  type ProtocolHarness,
  usdc,
  useProtocolHarness,
  VAULT_TYPE_AAVE,
  VAULT_TYPE_MORPHO,
} from '../support/protocolHarness.js'

const router = VaultRouterArtifact.abi
const oracle = VaultOracleArtifact.abi
const collector = FeeCollectorArtifact.abi
const day = 86_400n
const ray = 10n ** 27n

/** The functions each live contract answers, as the protocol lists them. */
const live = {
  router: [
    // Registration and roles
    'initialize',
    'initializeFor',
    'authorizedWallets',
    'nonces',
    'setOperator',
    'isOperator',
    // Money in and out
    'deposit',
    'depositWithPermit',
    'withdraw',
    // Views
    'previewDeposit',
    'previewRedeem',
    'previewWithdrawNet',
    'convertToShares',
    'convertToAssets',
    'pricePerShare',
    'totalVaultAssets',
    'currentTVLCap',
    'getPosition',
    'costBasisUSDC',
    'getCurrentAllocation',
    'getRecommendedRoute',
    'oracleStatus',
    'withdrawCapacity',
    'depositsPaused',
    'MIN_DEPOSIT',
    'DEPLOYMENT_TIME',
    'TVL_CAP_INITIAL',
    'TVL_CAP_DAY_31',
    'TVL_CAP_REMOVED',
    'DAY_31_OFFSET',
    'DAY_91_OFFSET',
    'morphoViewGas',
    'MIN_MORPHO_VIEW_GAS',
    'MAX_MORPHO_VIEW_GAS',
    // Wiring
    'USDC',
    'A_TOKEN',
    'AAVE_POOL',
    'MORPHO_VAULT',
    'ORACLE',
    'FEE_COLLECTOR',
    'DV_USDC',
    'EMERGENCY_MULTISIG',
    // Emergency multisig
    'pauseDeposits',
    'unpauseDeposits',
    'setMorphoViewGas',
    'proposeTreasuryRotation',
    'executeTreasuryRotation',
    'cancelTreasuryRotation',
  ],
  oracle: [
    'getOptimalVault',
    'getAllRates',
    'isVaultSafe',
    'isFresh',
    'lastGoodObservationAge',
    'recordObservation',
    // Constants
    'TWAR_WINDOW',
    'MIN_OBSERVATION_INTERVAL',
    'BUFFER_SIZE',
    'RAY',
    'SECONDS_PER_YEAR',
    'UTILISATION_THRESHOLD_BPS',
    'BPS_DENOMINATOR',
    'SHARE_UNIT',
    'MORPHO_PEG_ASSETS',
    'MAX_STALENESS',
    'DEFAULT_MIN_DIFFERENTIAL_RAY',
    'MIN_DIFFERENTIAL_RAY_LOWER_BOUND',
    'MIN_DIFFERENTIAL_RAY_UPPER_BOUND',
    'MIN_DIFFERENTIAL_RAY_CHANGE_DELAY',
    // State
    'minDifferentialRay',
    'pendingMinDifferentialRay',
    'pendingMinDifferentialRayEffectiveAt',
    'aaveCumulative',
    'morphoCumulative',
    'aaveSpotRate',
    'morphoSpotRate',
    'lastObservationTime',
    'lastOptimalVaultType',
    'lastMorphoSharePrice',
    'owner',
    'pendingOwner',
    // Immutables
    'AAVE_POOL',
    'A_TOKEN',
    'USDC',
    'MORPHO_VAULT',
    // Owner surface (Ownable2Step)
    'setMinDifferentialRay',
    'executeMinDifferentialRay',
    'cancelPendingMinDifferentialRay',
    'renounceOwnership',
    'transferOwnership',
    'acceptOwnership',
  ],
  feeCollector: [
    'FEE_BPS',
    'BPS_DENOMINATOR',
    'TREASURY_ROTATION_DELAY',
    'TREASURY_ROTATION_GRACE_PERIOD',
    'treasury',
    'pendingTreasury',
    'treasuryRotationEffectiveAt',
    'calculateFee',
    'USDC',
    'VAULT_ROUTER',
    'collectFee',
    'proposeTreasuryRotation',
    'executeTreasuryRotation',
    'cancelTreasuryRotation',
  ],
  shareToken: [
    'name',
    'symbol',
    'decimals',
    'totalSupply',
    'balanceOf',
    'allowance',
    'approve',
    'transfer',
    'transferFrom',
    'mint',
    'burn',
    'VAULT_ROUTER',
  ],
} as const

/** What the devnet answers beyond the live contracts, and why. */
const devnetExtras = {
  // The EIP-712 typehash of initializeFor, and OpenZeppelin's EIP-5267 domain view.
  router: ['INITIALIZE_FOR_TYPEHASH', 'eip712Domain'],
  // Test views of the checkpoint ring, and the knob that lets the oracle go stale.
  oracle: ['checkpointCount', 'getCheckpoint', 'observationsPaused', 'setObservationsPaused'],
  feeCollector: [],
  shareToken: [],
} as const

const abis = {
  router,
  oracle,
  feeCollector: collector,
  shareToken: ShareTokenArtifact.abi,
} as const

type Contract = keyof typeof abis

const functionNames = (abi: Abi) =>
  [...new Set(abi.flatMap((item) => (item.type === 'function' ? [item.name] : [])))].sort()

type Wallet = ProtocolHarness['merchant']

describe('the devnet’s public surface against the live contracts', () => {
  const harness = useProtocolHarness()

  it.each(Object.keys(live) as (keyof typeof live)[])(
    '%s answers exactly the live functions plus its declared devnet extras',
    (contract) => {
      expect(functionNames(abis[contract])).toEqual(
        [...live[contract], ...devnetExtras[contract]].sort(),
      )
    },
  )

  /** Reads any view of the four contracts by name. */
  const read = (contract: Contract, functionName: string, args: readonly unknown[] = []) =>
    harness.publicClient.readContract({
      address: harness.addresses[contract],
      abi: abis[contract] as Abi,
      functionName,
      args,
    })

  it('answers every constant and every view at deployment with its live value, the six new ones included', async () => {
    const { addresses, accounts } = harness
    const wallet = accounts.merchant.address
    const expected: [Contract, string, unknown, (readonly unknown[])?][] = [
      ['oracle', 'TWAR_WINDOW', 4n * 3_600n],
      ['oracle', 'MIN_OBSERVATION_INTERVAL', 300n],
      ['oracle', 'BUFFER_SIZE', 48n],
      ['oracle', 'RAY', ray],
      // 365.25 days.
      ['oracle', 'SECONDS_PER_YEAR', (36_525n * day) / 100n],
      ['oracle', 'UTILISATION_THRESHOLD_BPS', 9_000n],
      ['oracle', 'BPS_DENOMINATOR', 10_000n],
      ['oracle', 'SHARE_UNIT', 10n ** 24n],
      ['oracle', 'MORPHO_PEG_ASSETS', 10n ** 12n],
      ['oracle', 'MAX_STALENESS', 2n * 3_600n],
      // 0.2 %, bounded to [0.1 %, 1 %], changed 24 hours after it is set.
      ['oracle', 'DEFAULT_MIN_DIFFERENTIAL_RAY', (2n * ray) / 1_000n],
      ['oracle', 'MIN_DIFFERENTIAL_RAY_LOWER_BOUND', ray / 1_000n],
      ['oracle', 'MIN_DIFFERENTIAL_RAY_UPPER_BOUND', ray / 100n],
      ['oracle', 'MIN_DIFFERENTIAL_RAY_CHANGE_DELAY', day],
      ['oracle', 'minDifferentialRay', (2n * ray) / 1_000n],
      ['oracle', 'pendingMinDifferentialRay', 0n],
      ['oracle', 'pendingMinDifferentialRayEffectiveAt', 0n],
      ['oracle', 'lastOptimalVaultType', VAULT_TYPE_AAVE],
      ['oracle', 'owner', accounts.deployer.address],
      ['oracle', 'pendingOwner', zeroAddress],
      ['oracle', 'AAVE_POOL', addresses.aavePool],
      ['oracle', 'A_TOKEN', addresses.aToken],
      ['oracle', 'USDC', addresses.usdc],
      ['oracle', 'MORPHO_VAULT', addresses.morphoVault],
      ['router', 'MIN_MORPHO_VIEW_GAS', 350_000n],
      ['router', 'MAX_MORPHO_VIEW_GAS', 1_000_000n],
      ['router', 'morphoViewGas', 350_000n],
      ['router', 'authorizedWallets', false, [wallet]],
      ['router', 'nonces', 0n, [wallet]],
      ['router', 'isOperator', false, [wallet, accounts.facilitator.address]],
      ['feeCollector', 'FEE_BPS', 1_000n],
      ['feeCollector', 'BPS_DENOMINATOR', 10_000n],
      ['feeCollector', 'TREASURY_ROTATION_DELAY', 7n * day],
      ['feeCollector', 'TREASURY_ROTATION_GRACE_PERIOD', 14n * day],
      ['feeCollector', 'USDC', addresses.usdc],
      ['feeCollector', 'VAULT_ROUTER', addresses.router],
      ['feeCollector', 'treasury', accounts.deployer.address],
      ['feeCollector', 'pendingTreasury', zeroAddress],
      ['feeCollector', 'treasuryRotationEffectiveAt', 0n],
      ['shareToken', 'name', 'Divigent USDC'],
      ['shareToken', 'symbol', 'dvUSDC'],
      ['shareToken', 'decimals', 6],
      ['shareToken', 'VAULT_ROUTER', addresses.router],
    ]
    for (const [contract, name, value, args] of expected) {
      expect(await read(contract, name, args), `${contract}.${name}`).toBe(value)
    }
    // 10 % of the yield, rounded up.
    for (const yieldEarned of [0n, 1n, 9n, 10n, 11n, 123_456_789n]) {
      expect(await read('feeCollector', 'calculateFee', [yieldEarned])).toBe(
        (yieldEarned + 9n) / 10n,
      )
    }
  })

  it('follows the live rules at an observation; lastOptimalVaultType stays Aave while Morpho is chosen', async () => {
    const view = harness.readOracle
    const before = {
      aaveCumulative: await view('aaveCumulative'),
      morphoCumulative: await view('morphoCumulative'),
      aaveSpotRate: await view('aaveSpotRate'),
      morphoSpotRate: await view('morphoSpotRate'),
      lastObservationTime: await view('lastObservationTime'),
      lastMorphoSharePrice: await view('lastMorphoSharePrice'),
    }
    const at = before.lastObservationTime + BigInt(minObservationIntervalSeconds) + 60n
    await harness.testClient.setNextBlockTimestamp({ timestamp: at })
    const receipt = await harness.recordObservation()
    const elapsed = at - before.lastObservationTime
    const block = receipt.blockNumber
    const [reserve, price] = await Promise.all([
      harness.readAavePool('getReserveData', [harness.addresses.usdc], block),
      harness.readMorpho('convertToAssets', [10n ** 24n], block),
    ])
    expect(price).toBeGreaterThan(before.lastMorphoSharePrice)
    const expected = {
      aaveCumulative: before.aaveCumulative + before.aaveSpotRate * elapsed,
      morphoCumulative: before.morphoCumulative + before.morphoSpotRate * elapsed,
      aaveSpotRate: reserve.currentLiquidityRate,
      morphoSpotRate:
        ((price - before.lastMorphoSharePrice) * 31_557_600n * ray) /
        before.lastMorphoSharePrice /
        elapsed,
      lastObservationTime: at,
      lastMorphoSharePrice: price,
    }
    for (const [name, value] of Object.entries(expected)) {
      expect(await view(name as keyof typeof expected), name).toBe(value)
    }
    expect(eventArgs(oracle, 'ObservationRecorded', receipt.logs)).toEqual({
      timestamp: at,
      aaveRate: expected.aaveSpotRate,
      morphoRate: expected.morphoSpotRate,
    })
    // Morpho (4.5 %) beats Aave (3.5 %) by more than 0.2 %: the route is Morpho, the stored type is still Aave's.
    expect((await view('getOptimalVault'))[1]).toBe(VAULT_TYPE_MORPHO)
    expect(await view('lastOptimalVaultType')).toBe(VAULT_TYPE_AAVE)
    const rates = await view('getAllRates')
    expect(rates.map((rate) => [rate.vault, rate.vaultType, rate.isSafe])).toEqual([
      [harness.addresses.aavePool, VAULT_TYPE_AAVE, await view('isVaultSafe', [VAULT_TYPE_AAVE])],
      [
        harness.addresses.morphoVault,
        VAULT_TYPE_MORPHO,
        await view('isVaultSafe', [VAULT_TYPE_MORPHO]),
      ],
    ])
    // Within 5 minutes another observation changes nothing.
    const again = await harness.recordObservation()
    expect(parseEventLogs({ abi: oracle, logs: again.logs })).toEqual([])
    expect(await view('lastObservationTime')).toBe(at)
    // Fresh for 2 hours, as the router reports it.
    await harness.mineAt(at + 7_200n)
    expect([await view('lastGoodObservationAge'), await view('isFresh')]).toEqual([7_200n, true])
    expect(await harness.readRouter('oracleStatus')).toEqual([at, true])
  })

  it('calls the oracle’s owner functions: bounds, timelock, cancel, no renouncing, two-step transfer', async () => {
    const { buyer, deployer } = harness
    const send = (
      functionName:
        | 'setMinDifferentialRay'
        | 'executeMinDifferentialRay'
        | 'cancelPendingMinDifferentialRay'
        | 'transferOwnership'
        | 'acceptOwnership',
      wallet: Wallet,
      args: readonly unknown[] = [],
    ) =>
      wallet.writeContract({
        address: harness.addresses.oracle,
        abi: oracle,
        functionName,
        args: args as never,
      })
    await expectCustomError(
      send('setMinDifferentialRay', deployer, [ray / 1_000n - 1n]),
      'MinDifferentialRayOutOfBounds',
      [ray / 1_000n - 1n, ray / 1_000n, ray / 100n],
    )
    await expectCustomError(
      send('setMinDifferentialRay', deployer, [(2n * ray) / 1_000n]),
      'NoChange',
    )
    const scheduled = await harness.mined(send('setMinDifferentialRay', deployer, [ray / 100n]))
    const { effectiveAt } = eventArgs(oracle, 'MinDifferentialRayUpdateScheduled', scheduled.logs)
    const scheduledAt = (
      await harness.publicClient.getBlock({ blockNumber: scheduled.blockNumber })
    ).timestamp
    expect(effectiveAt).toBe(scheduledAt + day)
    await expectCustomError(
      send('executeMinDifferentialRay', buyer),
      'MinDifferentialRayTimelockActive',
      [effectiveAt],
    )
    await expectCustomError(
      send('cancelPendingMinDifferentialRay', buyer),
      'OwnableUnauthorizedAccount',
      [buyer.account.address],
    )
    await harness.mined(send('cancelPendingMinDifferentialRay', deployer))
    await expectCustomError(send('executeMinDifferentialRay', buyer), 'NoPendingMinDifferentialRay')
    // Once due, anyone executes it.
    const rescheduled = await harness.mined(send('setMinDifferentialRay', deployer, [ray / 100n]))
    const due = eventArgs(oracle, 'MinDifferentialRayUpdateScheduled', rescheduled.logs).effectiveAt
    await harness.testClient.setNextBlockTimestamp({ timestamp: due })
    await harness.mined(send('executeMinDifferentialRay', buyer))
    expect(await harness.readOracle('minDifferentialRay')).toBe(ray / 100n)

    await expectCustomError(
      deployer.writeContract({
        address: harness.addresses.oracle,
        // Declared `pure` by the devnet because it always reverts; still sent as a transaction.
        abi: oracle.map((item) =>
          item.type === 'function' && item.name === 'renounceOwnership'
            ? { ...item, stateMutability: 'nonpayable' as const }
            : item,
        ),
        functionName: 'renounceOwnership',
      }),
      'OwnershipRenouncementDisabled',
    )
    await harness.mined(send('transferOwnership', deployer, [buyer.account.address]))
    expect(await harness.readOracle('pendingOwner')).toBe(buyer.account.address)
    await harness.mined(send('acceptOwnership', buyer))
    expect(await harness.readOracle('owner')).toBe(buyer.account.address)
  })

  it('sets the router’s Morpho view gas within [MIN, MAX], by the emergency multisig only', async () => {
    const { deployer, buyer } = harness
    const set = (gas: bigint, wallet: Wallet = deployer) =>
      wallet.writeContract({
        address: harness.addresses.router,
        abi: router,
        functionName: 'setMorphoViewGas',
        args: [gas],
      })
    await expectCustomError(set(1_000_000n, buyer), 'NotEmergencyMultisig')
    for (const gas of [349_999n, 1_000_001n]) {
      await expectCustomError(set(gas), 'MorphoViewGasOutOfBounds', [gas, 350_000n, 1_000_000n])
    }
    const receipt = await harness.mined(set(1_000_000n))
    expect(eventArgs(router, 'MorphoViewGasUpdated', receipt.logs)).toEqual({
      oldGas: 350_000n,
      newGas: 1_000_000n,
    })
    expect(await harness.readRouter('morphoViewGas')).toBe(1_000_000n)
  })

  it('reverts ZeroAmount() for a withdrawal while shares remain but the venues hold nothing', async () => {
    const { merchant, deployer, addresses } = harness
    await harness.registerAndApprove(merchant)
    const { dvUsdcMinted, vaultType } = await harness.deposit(merchant, usdc(100))
    expect(vaultType).toBe(VAULT_TYPE_MORPHO)
    // The Morpho venue loses everything it holds, in one second so no interest accrues in between.
    await harness.holdClock()
    await harness.mined(
      deployer.writeContract({
        address: addresses.morphoVault,
        abi: MockMorphoVaultArtifact.abi,
        functionName: 'accrue',
      }),
    )
    await harness.holdClock()
    await harness.morphoKnob('simulateLoss', await harness.usdcBalance(addresses.morphoVault))
    expect(await harness.readRouter('withdrawCapacity')).toMatchObject({
      aaveAssetsHeld: 0n,
      morphoAssetsHeld: 0n,
      morphoReachable: true,
      totalWithdrawCap: 0n,
    })
    await expectCustomError(harness.withdraw(merchant, dvUsdcMinted), 'ZeroAmount', [])
  })

  it('refuses collectFee from anyone but the router, and rotates the treasury through the router', async () => {
    const { addresses, accounts, deployer, buyer } = harness
    await expectCustomError(
      buyer.writeContract({
        address: addresses.feeCollector,
        abi: collector,
        functionName: 'collectFee',
        args: [buyer.account.address, 1n],
      }),
      'OnlyVaultRouter',
      [buyer.account.address],
    )
    const rotate = (
      functionName:
        | 'proposeTreasuryRotation'
        | 'executeTreasuryRotation'
        | 'cancelTreasuryRotation',
      args: readonly unknown[] = [],
    ) =>
      deployer.writeContract({
        address: addresses.router,
        abi: [...router, ...collector.filter((item) => item.type === 'error')],
        functionName,
        args: args as never,
      })
    await expectCustomError(rotate('executeTreasuryRotation'), 'RotationNotProposed')
    const proposed = await harness.mined(rotate('proposeTreasuryRotation', [buyer.account.address]))
    const { effectiveAt } = eventArgs(collector, 'TreasuryRotationProposed', proposed.logs)
    expect([
      await read('feeCollector', 'pendingTreasury'),
      await read('feeCollector', 'treasuryRotationEffectiveAt'),
    ]).toEqual([buyer.account.address, effectiveAt])
    await expectCustomError(
      rotate('proposeTreasuryRotation', [accounts.merchant.address]),
      'RotationAlreadyPending',
      [buyer.account.address],
    )
    await harness.mined(rotate('cancelTreasuryRotation'))
    expect(await read('feeCollector', 'pendingTreasury')).toBe(zeroAddress)
  })
})
