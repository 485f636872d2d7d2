import { parseEventLogs } from 'viem'
import { describe, expect, it } from 'vitest'
import {
  MockAavePoolArtifact,
  MockMorphoVaultArtifact,
  VaultOracleArtifact,
  VaultRouterArtifact,
} from '../../src/devnet/artifacts/index.js'
import { defaultAaveLiquidityRateRay, defaultMorphoRateRay } from '../../src/devnet/deploy.js'
import {
  expectCustomError,
  rayPercent,
  usdc,
  useProtocolHarness,
  VAULT_TYPE_AAVE,
  VAULT_TYPE_MORPHO,
} from './protocolHarness.js'

const router = VaultRouterArtifact.abi
const oracle = VaultOracleArtifact.abi

describe('vault protocol: routing and the oracle', () => {
  const harness = useProtocolHarness((h) => h.registerAndApprove(h.merchant))

  const allocation = () =>
    harness.publicClient.readContract({
      address: harness.addresses.router,
      abi: router,
      functionName: 'getCurrentAllocation',
    })
  const recommendedRoute = (amount: bigint) =>
    harness.publicClient.readContract({
      address: harness.addresses.router,
      abi: router,
      functionName: 'getRecommendedRoute',
      args: [amount],
    })
  const isVaultSafe = (vaultType: number) =>
    harness.publicClient.readContract({
      address: harness.addresses.oracle,
      abi: oracle,
      functionName: 'isVaultSafe',
      args: [vaultType],
    })
  const setIdleLiquidity = (amount: bigint) =>
    harness.mined(
      harness.deployer.writeContract({
        address: harness.addresses.aavePool,
        abi: MockAavePoolArtifact.abi,
        functionName: 'setIdleLiquidity',
        args: [amount],
      }),
    )
  const simulateMorphoLoss = (amount: bigint) =>
    harness.mined(
      harness.deployer.writeContract({
        address: harness.addresses.morphoVault,
        abi: MockMorphoVaultArtifact.abi,
        functionName: 'simulateLoss',
        args: [amount],
      }),
    )

  it('is seeded by the deployer with Aave at 3.5 %, Morpho at 4.5 %, and the oracle constants', async () => {
    const { publicClient, addresses, deployer } = harness
    const read = <name extends 'MAX_STALENESS' | 'minDifferentialRay' | 'owner' | 'isFresh'>(
      functionName: name,
    ) => publicClient.readContract({ address: addresses.oracle, abi: oracle, functionName })
    expect(defaultAaveLiquidityRateRay).toBe(rayPercent(3.5))
    expect(defaultMorphoRateRay).toBe(rayPercent(4.5))
    expect(await read('MAX_STALENESS')).toBe(7200n)
    expect(await read('minDifferentialRay')).toBe(2n * 10n ** 24n)
    expect(await read('owner')).toBe(deployer.account.address)
    expect(await read('isFresh')).toBe(true)
    expect(
      await publicClient.readContract({
        address: addresses.oracle,
        abi: oracle,
        functionName: 'getAllRates',
      }),
    ).toEqual([
      {
        vault: addresses.aavePool,
        vaultType: VAULT_TYPE_AAVE,
        spotRate: rayPercent(3.5),
        twarRate: rayPercent(3.5),
        isSafe: true,
      },
      {
        vault: addresses.morphoVault,
        vaultType: VAULT_TYPE_MORPHO,
        spotRate: rayPercent(4.5),
        twarRate: rayPercent(4.5),
        isSafe: true,
      },
    ])
    // Aave's rate is the third field of its legacy ReserveData.
    const reserve = await publicClient.readContract({
      address: addresses.aavePool,
      abi: MockAavePoolArtifact.abi,
      functionName: 'getReserveData',
      args: [addresses.usdc],
    })
    expect(reserve.currentLiquidityRate).toBe(rayPercent(3.5))
    expect(reserve.aTokenAddress).toBe(addresses.aToken)
  })

  it('routes to Morpho when it beats Aave by at least 0.2 %', async () => {
    const { publicClient, addresses } = harness
    expect(
      await publicClient.readContract({
        address: addresses.oracle,
        abi: oracle,
        functionName: 'getOptimalVault',
      }),
    ).toEqual([addresses.morphoVault, VAULT_TYPE_MORPHO, rayPercent(4.5)])
    expect(await recommendedRoute(usdc(100))).toBe(VAULT_TYPE_MORPHO)
    const event = await harness.deposit(harness.merchant, usdc(100))
    expect(event).toEqual({
      wallet: harness.merchant.account.address,
      usdcAmount: usdc(100),
      dvUsdcMinted: usdc(100),
      vaultType: VAULT_TYPE_MORPHO,
    })
    expect(await allocation()).toEqual([0n, usdc(100)])

    // Exactly at the threshold Morpho still wins (4.5 % vs 4.3 %).
    await harness.setRates(rayPercent(4.3), rayPercent(4.5))
    expect((await harness.deposit(harness.merchant, usdc(10))).vaultType).toBe(VAULT_TYPE_MORPHO)
  })

  it('routes to Aave when Morpho does not beat it by the threshold', async () => {
    await harness.setRates(rayPercent(4.4), rayPercent(4.5))
    expect(await recommendedRoute(usdc(100))).toBe(VAULT_TYPE_AAVE)
    const event = await harness.deposit(harness.merchant, usdc(100))
    expect(event.vaultType).toBe(VAULT_TYPE_AAVE)
    expect(event.dvUsdcMinted).toBe(usdc(100))
    const [aaveAssets, morphoAssets] = await allocation()
    // The aToken rounds balances down (in the reserve's favour) by at most one unit.
    expect(aaveAssets).toBeGreaterThanOrEqual(usdc(100) - 1n)
    expect(aaveAssets).toBeLessThanOrEqual(usdc(100))
    expect(morphoAssets).toBe(0n)
  })

  it('averages rates over recent observations, and ignores observations within 5 minutes', async () => {
    const { publicClient, addresses, deployer, mined, devnet, merchant } = harness
    await mined(
      deployer.writeContract({
        address: addresses.aavePool,
        abi: MockAavePoolArtifact.abi,
        functionName: 'setLiquidityRate',
        args: [rayPercent(6)],
      }),
    )
    const lastBefore = await publicClient.readContract({
      address: addresses.oracle,
      abi: oracle,
      functionName: 'lastObservationTime',
    })
    // Too soon after the seeding observation: a no-op.
    const early = await mined(
      merchant.writeContract({
        address: addresses.oracle,
        abi: oracle,
        functionName: 'recordObservation',
      }),
    )
    expect(parseEventLogs({ abi: oracle, logs: early.logs })).toHaveLength(0)

    await devnet.advanceTime(5 * 60)
    const recorded = await mined(
      merchant.writeContract({
        address: addresses.oracle,
        abi: oracle,
        functionName: 'recordObservation',
      }),
    )
    const [event] = parseEventLogs({
      abi: oracle,
      eventName: 'ObservationRecorded',
      logs: recorded.logs,
    })
    expect(event?.args.aaveRate).toBe(rayPercent(6))
    expect(event?.args.morphoRate).toBe(rayPercent(4.5))
    expect(event?.args.timestamp).toBeGreaterThanOrEqual(lastBefore + 300n)

    const [aave] = await publicClient.readContract({
      address: addresses.oracle,
      abi: oracle,
      functionName: 'getAllRates',
    })
    expect(aave?.spotRate).toBe(rayPercent(6))
    expect(aave?.twarRate).toBe((rayPercent(3.5) + rayPercent(6)) / 2n)
    // Aave's average (4.75 %) now beats Morpho's 4.5 %.
    expect(await recommendedRoute(usdc(10))).toBe(VAULT_TYPE_AAVE)
  })

  it('routes to Morpho when Aave is unsafe (utilisation over 90 %) even if Aave pays more', async () => {
    await harness.setRates(rayPercent(8), rayPercent(4.5))
    expect((await harness.deposit(harness.merchant, usdc(100))).vaultType).toBe(VAULT_TYPE_AAVE)
    expect(await isVaultSafe(VAULT_TYPE_AAVE)).toBe(true)

    // Borrowers take all but 9 % of the supplied USDC.
    await setIdleLiquidity(usdc(9))
    expect(await isVaultSafe(VAULT_TYPE_AAVE)).toBe(false)
    const event = await harness.deposit(harness.merchant, usdc(50))
    expect(event.vaultType).toBe(VAULT_TYPE_MORPHO)
    const [, morphoAssets] = await allocation()
    expect(morphoAssets).toBe(usdc(50))
  })

  it('routes to Aave when Morpho trades below peg', async () => {
    expect((await harness.deposit(harness.merchant, usdc(100))).vaultType).toBe(VAULT_TYPE_MORPHO)
    expect(await isVaultSafe(VAULT_TYPE_MORPHO)).toBe(true)
    await simulateMorphoLoss(usdc(1))
    expect(await isVaultSafe(VAULT_TYPE_MORPHO)).toBe(false)
    expect(await recommendedRoute(usdc(100))).toBe(VAULT_TYPE_AAVE)
    expect((await harness.deposit(harness.merchant, usdc(100))).vaultType).toBe(VAULT_TYPE_AAVE)
  })

  it('reverts NoSafeVault / NoSafeRoute when neither venue is safe', async () => {
    const { publicClient, addresses, merchant } = harness
    await harness.deposit(merchant, usdc(100)) // Morpho
    await simulateMorphoLoss(usdc(1))
    expect((await harness.deposit(merchant, usdc(100))).vaultType).toBe(VAULT_TYPE_AAVE)
    await setIdleLiquidity(0n)

    await expectCustomError(
      publicClient.readContract({
        address: addresses.oracle,
        abi: oracle,
        functionName: 'getOptimalVault',
      }),
      'NoSafeVault',
      [],
    )
    await expectCustomError(recommendedRoute(usdc(25)), 'NoSafeRoute', [usdc(25)])
    await expectCustomError(
      merchant.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'deposit',
        args: [usdc(25), merchant.account.address, 0n],
      }),
      'NoSafeRoute',
      [usdc(25)],
    )
  })

  it("falls back to the other safe venue when the oracle's choice cannot take the deposit", async () => {
    const { publicClient, addresses, deployer, mined } = harness
    await harness.setRates(rayPercent(6), rayPercent(4.5))
    const configuration = await publicClient.readContract({
      address: addresses.aavePool,
      abi: MockAavePoolArtifact.abi,
      functionName: 'getConfiguration',
      args: [addresses.usdc],
    })
    const frozenMask = await publicClient.readContract({
      address: addresses.aavePool,
      abi: MockAavePoolArtifact.abi,
      functionName: 'FROZEN_MASK',
    })
    await mined(
      deployer.writeContract({
        address: addresses.aavePool,
        abi: MockAavePoolArtifact.abi,
        functionName: 'setConfiguration',
        args: [configuration.data | frozenMask],
      }),
    )
    // The oracle still prefers Aave (it only looks at rates and safety); the router's capacity check does not.
    const [, preferred] = await publicClient.readContract({
      address: addresses.oracle,
      abi: oracle,
      functionName: 'getOptimalVault',
    })
    expect(preferred).toBe(VAULT_TYPE_AAVE)
    expect((await harness.deposit(harness.merchant, usdc(40))).vaultType).toBe(VAULT_TYPE_MORPHO)
  })

  it('keeps the devnet knobs owner-only (OwnableUnauthorizedAccount)', async () => {
    const { merchant, addresses } = harness
    const caller = merchant.account.address
    await expectCustomError(
      merchant.writeContract({
        address: addresses.aavePool,
        abi: MockAavePoolArtifact.abi,
        functionName: 'setLiquidityRate',
        args: [rayPercent(50)],
      }),
      'OwnableUnauthorizedAccount',
      [caller],
    )
    await expectCustomError(
      merchant.writeContract({
        address: addresses.morphoVault,
        abi: MockMorphoVaultArtifact.abi,
        functionName: 'setConvertToAssetsReverts',
        args: [true],
      }),
      'OwnableUnauthorizedAccount',
      [caller],
    )
    await expectCustomError(
      merchant.writeContract({
        address: addresses.oracle,
        abi: oracle,
        functionName: 'setObservationsPaused',
        args: [true],
      }),
      'OwnableUnauthorizedAccount',
      [caller],
    )
  })
})
