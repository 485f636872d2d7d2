/**
 * The devnet's public surface against the live contracts', name by name (PROTOCOL.md §2 and §4.4–§4.6): each
 * contract answers exactly the live functions plus the devnet's declared extras; every view named answers its live
 * value or follows its live rule; every owner function named is called once each way.
 */
import { type Abi, type Address, type Hex, parseEventLogs, zeroAddress } from 'viem'
import { describe, expect, it } from 'vitest'
import {
  FeeCollectorArtifact,
  MockMorphoVaultArtifact,
  ShareTokenArtifact,
  VaultOracleArtifact,
  VaultRouterArtifact,
} from '../../src/devnet/artifacts/index.js'
import { feeOnYield } from '../../src/sdk/internal/shareMath.js'
import {
  eventArgs,
  expectCustomError,
  minObservationIntervalSeconds,
  type ProtocolHarness,
  usdc,
  useProtocolHarness,
  VAULT_TYPE_AAVE,
  VAULT_TYPE_MORPHO,
} from './protocolHarness.js'

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

  it('answers every oracle constant with its live value, the six new ones included', async () => {
    const read = harness.readOracle
    const constants = {
      TWAR_WINDOW: 4n * 3_600n,
      MIN_OBSERVATION_INTERVAL: 300n,
      BUFFER_SIZE: 48n,
      RAY: ray,
      // 365.25 days.
      SECONDS_PER_YEAR: (36_525n * day) / 100n,
      UTILISATION_THRESHOLD_BPS: 9_000n,
      BPS_DENOMINATOR: 10_000n,
      SHARE_UNIT: 10n ** 24n,
      MORPHO_PEG_ASSETS: 10n ** 12n,
      MAX_STALENESS: 2n * 3_600n,
      // 0.2 %, bounded to [0.1 %, 1 %], changed 24 hours after it is set.
      DEFAULT_MIN_DIFFERENTIAL_RAY: (2n * ray) / 1_000n,
      MIN_DIFFERENTIAL_RAY_LOWER_BOUND: ray / 1_000n,
      MIN_DIFFERENTIAL_RAY_UPPER_BOUND: ray / 100n,
      MIN_DIFFERENTIAL_RAY_CHANGE_DELAY: day,
    } as const
    for (const [name, value] of Object.entries(constants)) {
      expect(await read(name as keyof typeof constants), name).toBe(value)
    }
    const { addresses, accounts } = harness
    expect(
      await Promise.all([
        read('AAVE_POOL'),
        read('A_TOKEN'),
        read('USDC'),
        read('MORPHO_VAULT'),
        read('owner'),
        read('pendingOwner'),
        read('minDifferentialRay'),
        read('pendingMinDifferentialRay'),
        read('pendingMinDifferentialRayEffectiveAt'),
      ]),
    ).toEqual([
      addresses.aavePool,
      addresses.aToken,
      addresses.usdc,
      addresses.morphoVault,
      accounts.deployer.address,
      zeroAddress,
      (2n * ray) / 1_000n,
      0n,
      0n,
    ])
  })

  it('follows the live rules at an observation; lastOptimalVaultType stays Aave while Morpho is chosen', async () => {
    const read = harness.readOracle
    const before = {
      aaveCumulative: await read('aaveCumulative'),
      morphoCumulative: await read('morphoCumulative'),
      aaveSpotRate: await read('aaveSpotRate'),
      morphoSpotRate: await read('morphoSpotRate'),
      lastObservationTime: await read('lastObservationTime'),
      lastMorphoSharePrice: await read('lastMorphoSharePrice'),
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
      expect(await read(name as keyof typeof expected), name).toBe(value)
    }
    expect(eventArgs(oracle, 'ObservationRecorded', receipt.logs)).toEqual({
      timestamp: at,
      aaveRate: expected.aaveSpotRate,
      morphoRate: expected.morphoSpotRate,
    })
    // Morpho (4.5 %) beats Aave (3.5 %) by more than 0.2 %: the route is Morpho, the stored type is still Aave's.
    expect((await read('getOptimalVault'))[1]).toBe(VAULT_TYPE_MORPHO)
    expect(await read('lastOptimalVaultType')).toBe(VAULT_TYPE_AAVE)
    const rates = await read('getAllRates')
    expect(rates.map((rate) => [rate.vault, rate.vaultType, rate.isSafe])).toEqual([
      [harness.addresses.aavePool, VAULT_TYPE_AAVE, await read('isVaultSafe', [VAULT_TYPE_AAVE])],
      [
        harness.addresses.morphoVault,
        VAULT_TYPE_MORPHO,
        await read('isVaultSafe', [VAULT_TYPE_MORPHO]),
      ],
    ])
    // Within 5 minutes another observation changes nothing.
    const again = await harness.recordObservation()
    expect(parseEventLogs({ abi: oracle, logs: again.logs })).toEqual([])
    expect(await read('lastObservationTime')).toBe(at)
    // Fresh for 2 hours, as the router reports it.
    await harness.mineAt(at + 7_200n)
    expect([await read('lastGoodObservationAge'), await read('isFresh')]).toEqual([7_200n, true])
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

  it('answers the router’s Morpho view gas: 350,000 by default, set within [MIN, MAX] by the multisig only', async () => {
    const { deployer, buyer } = harness
    expect(
      await Promise.all([
        harness.readRouter('MIN_MORPHO_VIEW_GAS'),
        harness.readRouter('MAX_MORPHO_VIEW_GAS'),
        harness.readRouter('morphoViewGas'),
      ]),
    ).toEqual([350_000n, 1_000_000n, 350_000n])
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

  it('registers wallets: initialize once, initializeFor in its order of checks, operators of registered wallets', async () => {
    const { merchant, buyer, facilitator, addresses, devnet } = harness
    const register = (wallet: Wallet) =>
      wallet.writeContract({ address: addresses.router, abi: router, functionName: 'initialize' })
    const registered = await harness.mined(register(merchant))
    expect(eventArgs(router, 'WalletAuthorised', registered.logs)).toEqual({
      wallet: merchant.account.address,
    })
    await expectCustomError(register(merchant), 'WalletAlreadyAuthorised')

    const sign = (signer: Wallet, wallet: Address, deadline: bigint) =>
      signer.signTypedData({
        domain: {
          name: 'DivigentVaultRouter',
          version: '1',
          chainId: devnet.chainId,
          verifyingContract: addresses.router,
        },
        types: {
          InitializeFor: [
            { name: 'wallet', type: 'address' },
            { name: 'deadline', type: 'uint256' },
            { name: 'nonce', type: 'uint256' },
          ],
        },
        primaryType: 'InitializeFor',
        message: { wallet, deadline, nonce: 0n },
      })
    const relay = (wallet: Address, deadline: bigint, signature: Hex) =>
      facilitator.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'initializeFor',
        args: [wallet, deadline, signature],
      })
    const now = await harness.latestTimestamp()
    const wallet = buyer.account.address
    await expectCustomError(
      relay(wallet, now - 1n, await sign(buyer, wallet, now - 1n)),
      'PermitExpired',
    )
    await expectCustomError(
      relay(
        merchant.account.address,
        now + 600n,
        await sign(merchant, merchant.account.address, now + 600n),
      ),
      'WalletAlreadyAuthorised',
    )
    await expectCustomError(
      relay(wallet, now + 600n, await sign(merchant, wallet, now + 600n)),
      'InvalidSignature',
    )
    await expectCustomError(relay(wallet, now + 600n, '0x1234'), 'ECDSAInvalidSignatureLength', [
      2n,
    ])
    await harness.mined(relay(wallet, now + 600n, await sign(buyer, wallet, now + 600n)))
    expect(
      await Promise.all([
        harness.readRouter('authorizedWallets', [wallet]),
        harness.readRouter('nonces', [wallet]),
      ]),
    ).toEqual([true, 1n])

    const setOperator = (from: Wallet, operator: Address) =>
      from.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'setOperator',
        args: [operator, true],
      })
    await expectCustomError(setOperator(facilitator, merchant.account.address), 'NotAuthorised')
    await expectCustomError(setOperator(merchant, zeroAddress), 'ZeroAddress')
    await harness.mined(setOperator(merchant, facilitator.account.address))
    expect(
      await harness.readRouter('isOperator', [
        merchant.account.address,
        facilitator.account.address,
      ]),
    ).toBe(true)
  })

  it('answers the fee collector’s constants and state, and rotates the treasury through the router', async () => {
    const { addresses, accounts, deployer, buyer } = harness
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
      1_000n,
      10_000n,
      7n * day,
      14n * day,
      addresses.usdc,
      addresses.router,
      accounts.deployer.address,
      zeroAddress,
      0n,
    ])
    // 10 % of the yield, rounded up.
    for (const yieldEarned of [0n, 1n, 9n, 10n, 11n, 123_456_789n]) {
      expect(await read('calculateFee', [yieldEarned])).toBe(feeOnYield(yieldEarned))
      expect(feeOnYield(yieldEarned)).toBe((yieldEarned + 9n) / 10n)
    }
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
    expect([await read('pendingTreasury'), await read('treasuryRotationEffectiveAt')]).toEqual([
      buyer.account.address,
      effectiveAt,
    ])
    await expectCustomError(
      rotate('proposeTreasuryRotation', [accounts.merchant.address]),
      'RotationAlreadyPending',
      [buyer.account.address],
    )
    await harness.mined(rotate('cancelTreasuryRotation'))
    expect(await read('pendingTreasury')).toBe(zeroAddress)
  })

  it('names dvUSDC and keeps it router-minted and non-transferable', async () => {
    const { addresses, merchant, buyer, publicClient } = harness
    const share = ShareTokenArtifact.abi
    const read = (functionName: 'name' | 'symbol' | 'decimals' | 'VAULT_ROUTER') =>
      publicClient.readContract({ address: addresses.shareToken, abi: share, functionName })
    expect(
      await Promise.all([read('name'), read('symbol'), read('decimals'), read('VAULT_ROUTER')]),
    ).toEqual(['Divigent USDC', 'dvUSDC', 6, addresses.router])
    await expectCustomError(
      buyer.writeContract({
        address: addresses.shareToken,
        abi: share,
        functionName: 'mint',
        args: [buyer.account.address, 1n],
      }),
      'OnlyVaultRouter',
      [buyer.account.address],
    )
    await harness.registerAndApprove(merchant)
    await harness.deposit(merchant, usdc(10))
    await expectCustomError(
      merchant.writeContract({
        address: addresses.shareToken,
        abi: share,
        functionName: 'transfer',
        args: [buyer.account.address, 1n],
      }),
      'NonTransferable',
    )
  })
})
