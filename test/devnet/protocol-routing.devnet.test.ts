import { maxUint256 } from 'viem'
import { describe, expect, it } from 'vitest'
import {
  MockAavePoolArtifact,
  MockATokenArtifact,
  MockMorphoVaultArtifact,
  VaultOracleArtifact,
} from '../../src/devnet/artifacts/index.js'
import { defaultAaveLiquidityRateRay, defaultMorphoRateRay } from '../../src/devnet/deploy.js'
import {
  expectCustomError,
  expectForeignError,
  rayPercent,
  usdc,
  useProtocolHarness,
  VAULT_TYPE_AAVE,
  VAULT_TYPE_MORPHO,
} from '../support/protocolHarness.js'

const oracle = VaultOracleArtifact.abi

describe('vault protocol: routing (a deposit goes to the venue the oracle selects)', () => {
  const harness = useProtocolHarness(async (h) => {
    await h.registerAndApprove(h.merchant)
    await h.mintUsdc(h.merchant.account.address, usdc(1_000_000))
  })

  const route = (amount: bigint) => harness.readRouter('getRecommendedRoute', [amount])
  const isVaultSafe = (vaultType: number) => harness.readOracle('isVaultSafe', [vaultType])
  const depositCall = (amount: bigint) => harness.depositCall(harness.merchant, amount)
  const aTokenSupply = () =>
    harness.publicClient.readContract({
      address: harness.addresses.aToken,
      abi: MockATokenArtifact.abi,
      functionName: 'totalSupply',
    })
  /** The least idle USDC at which Aave is still safe: 10 % of the aToken supply, rounded down (§4.5). */
  const safeIdleFloor = async () => ((await aTokenSupply()) * 1000n) / 10_000n
  /** Sets Aave's configuration bitmap to the current one with `mask` set (`set`) or cleared. */
  const setConfigurationBit = async (
    mask: 'FROZEN_MASK' | 'PAUSED_MASK' | 'ACTIVE_MASK',
    set: boolean,
  ) => {
    const [{ data }, bit] = await Promise.all([
      harness.readAavePool('getConfiguration', [harness.addresses.usdc]),
      harness.readAavePool(mask),
    ])
    await harness.aaveKnob('setConfiguration', set ? data | bit : data & ~bit)
  }

  it('routes to Morpho at the seeded rates: its measured rate beats Aave’s 3.5 % by at least 0.2 %', async () => {
    const { addresses } = harness
    expect(defaultAaveLiquidityRateRay).toBe(rayPercent(3.5))
    expect(defaultMorphoRateRay).toBe(rayPercent(4.5))
    const [aave, morpho] = await harness.readOracle('getAllRates')
    if (!aave || !morpho) throw new Error('getAllRates returned fewer than two venues')
    expect(aave).toMatchObject({
      vault: addresses.aavePool,
      vaultType: VAULT_TYPE_AAVE,
      isSafe: true,
    })
    expect(morpho).toMatchObject({
      vault: addresses.morphoVault,
      vaultType: VAULT_TYPE_MORPHO,
      isSafe: true,
    })
    expect(aave.twarRate).toBe(rayPercent(3.5))
    expect(morpho.twarRate - aave.twarRate).toBeGreaterThanOrEqual(
      await harness.readOracle('minDifferentialRay'),
    )
    expect(await harness.readOracle('getOptimalVault')).toEqual([
      addresses.morphoVault,
      VAULT_TYPE_MORPHO,
      morpho.twarRate,
    ])
    expect(await route(usdc(100))).toBe(VAULT_TYPE_MORPHO)
    expect(await harness.deposit(harness.merchant, usdc(100))).toEqual({
      wallet: harness.merchant.account.address,
      usdcAmount: usdc(100),
      dvUsdcMinted: usdc(100),
      vaultType: VAULT_TYPE_MORPHO,
    })
    const [aaveAssets, morphoAssets] = await harness.readRouter('getCurrentAllocation')
    expect(aaveAssets).toBe(0n)
    // The ERC-4626 share conversion rounds down, by at most one unit.
    expect(usdc(100) - morphoAssets).toBeLessThanOrEqual(1n)
  })

  it('routes to Aave when Morpho does not beat it by the threshold', async () => {
    await harness.setRates(rayPercent(4.4), rayPercent(4.5))
    const [aave, morpho] = await harness.readOracle('getAllRates')
    expect(aave?.twarRate).toBe(rayPercent(4.4))
    expect(morpho?.twarRate).toBeGreaterThan(rayPercent(4.4))
    expect((morpho?.twarRate ?? 0n) - rayPercent(4.4)).toBeLessThan(
      await harness.readOracle('minDifferentialRay'),
    )
    expect(await route(usdc(100))).toBe(VAULT_TYPE_AAVE)
    const event = await harness.deposit(harness.merchant, usdc(100))
    expect(event.vaultType).toBe(VAULT_TYPE_AAVE)
    expect(event.dvUsdcMinted).toBe(usdc(100))
    const [aaveAssets, morphoAssets] = await harness.readRouter('getCurrentAllocation')
    // The aToken rounds balances down (in the reserve's favour) by at most one unit.
    expect(usdc(100) - aaveAssets).toBeLessThanOrEqual(1n)
    expect(morphoAssets).toBe(0n)
  })

  it('keeps Aave safe down to exactly 10 % idle liquidity, and routes to Morpho below it', async () => {
    await harness.setRates(rayPercent(8), rayPercent(4.5))
    expect(await route(usdc(100))).toBe(VAULT_TYPE_AAVE)

    await harness.holdClock()
    const floor = await safeIdleFloor()
    await harness.aaveKnob('setIdleLiquidity', floor)
    expect(await isVaultSafe(VAULT_TYPE_AAVE)).toBe(true)
    expect(await route(usdc(100))).toBe(VAULT_TYPE_AAVE)

    await harness.holdClock()
    await harness.aaveKnob('setIdleLiquidity', (await safeIdleFloor()) - 1n)
    expect(await isVaultSafe(VAULT_TYPE_AAVE)).toBe(false)
    // Aave pays more, but it is unsafe: Morpho is chosen.
    const [, vaultType] = await harness.readOracle('getOptimalVault')
    expect(vaultType).toBe(VAULT_TYPE_MORPHO)
    await harness.holdClock()
    expect((await harness.deposit(harness.merchant, usdc(50))).vaultType).toBe(VAULT_TYPE_MORPHO)
  })

  it('counts an Aave reserve with no aToken supply as safe, whatever its idle USDC', async () => {
    const { deployer, addresses } = harness
    // The deployer takes its whole seed back out; the router holds no aUSDC yet.
    await harness.mined(
      deployer.writeContract({
        address: addresses.aavePool,
        abi: MockAavePoolArtifact.abi,
        functionName: 'withdraw',
        args: [addresses.usdc, maxUint256, deployer.account.address],
      }),
    )
    await harness.aaveKnob('setIdleLiquidity', 0n)
    expect(await aTokenSupply()).toBe(0n)
    expect(await isVaultSafe(VAULT_TYPE_AAVE)).toBe(true)
    // With supply, no idle USDC is unsafe.
    await harness.morphoKnob('setMaxDepositCap', 0n)
    await harness.aaveKnob('setIdleLiquidity', usdc(1_000))
    expect((await harness.deposit(harness.merchant, usdc(100))).vaultType).toBe(VAULT_TYPE_AAVE)
    await harness.aaveKnob('setIdleLiquidity', 0n)
    expect(await aTokenSupply()).toBeGreaterThan(0n)
    expect(await isVaultSafe(VAULT_TYPE_AAVE)).toBe(false)
  })

  it('routes to Aave when Morpho trades below peg', async () => {
    expect((await harness.deposit(harness.merchant, usdc(100))).vaultType).toBe(VAULT_TYPE_MORPHO)
    const peg = await harness.readOracle('MORPHO_PEG_ASSETS')
    const shareUnit = await harness.readOracle('SHARE_UNIT')
    expect(await harness.readMorpho('convertToAssets', [shareUnit])).toBeGreaterThanOrEqual(peg)
    expect(await isVaultSafe(VAULT_TYPE_MORPHO)).toBe(true)
    await harness.morphoKnob('simulateLoss', usdc(1))
    expect(await harness.readMorpho('convertToAssets', [shareUnit])).toBeLessThan(peg)
    expect(await isVaultSafe(VAULT_TYPE_MORPHO)).toBe(false)
    expect(await route(usdc(100))).toBe(VAULT_TYPE_AAVE)
    expect((await harness.deposit(harness.merchant, usdc(100))).vaultType).toBe(VAULT_TYPE_AAVE)
  })

  it('passes NoSafeVault through getRecommendedRoute and deposit when neither venue is safe', async () => {
    await harness.morphoKnob('simulateLoss', usdc(1))
    await harness.aaveKnob('setIdleLiquidity', 0n)
    expect([await isVaultSafe(VAULT_TYPE_AAVE), await isVaultSafe(VAULT_TYPE_MORPHO)]).toEqual([
      false,
      false,
    ])
    await expectCustomError(harness.readOracle('getOptimalVault'), 'NoSafeVault', [])
    // The oracle's own error comes out of the router unchanged.
    await expectForeignError(route(usdc(25)), oracle, 'NoSafeVault', [])
    await expectForeignError(depositCall(usdc(25)), oracle, 'NoSafeVault', [])
  })

  it('falls back when Aave’s idle USDC is below the amount, and takes exactly the idle amount', async () => {
    await harness.setRates(rayPercent(6), rayPercent(4.5))
    const amount = usdc(200_000)
    await harness.holdClock()
    await harness.aaveKnob('setIdleLiquidity', amount)
    // Still safe: 200,000 USDC idle is over 10 % of the supply.
    expect(await safeIdleFloor()).toBeLessThan(amount)
    expect(await isVaultSafe(VAULT_TYPE_AAVE)).toBe(true)
    expect(await route(amount)).toBe(VAULT_TYPE_AAVE)
    expect(await route(amount + 1n)).toBe(VAULT_TYPE_MORPHO)
    expect((await harness.deposit(harness.merchant, amount + 1n)).vaultType).toBe(VAULT_TYPE_MORPHO)
    expect((await harness.deposit(harness.merchant, amount)).vaultType).toBe(VAULT_TYPE_AAVE)
  })

  it('treats Aave as unavailable when getConfiguration reverts or the reserve is frozen, paused or inactive', async () => {
    await harness.setRates(rayPercent(6), rayPercent(4.5))
    // The oracle still prefers Aave (it looks at rates and safety only); the router's capacity check does not.
    const [, preferred] = await harness.readOracle('getOptimalVault')
    expect(preferred).toBe(VAULT_TYPE_AAVE)
    expect(await route(usdc(40))).toBe(VAULT_TYPE_AAVE)

    await harness.aaveKnob('setConfigurationReverts', true)
    expect(await route(usdc(40))).toBe(VAULT_TYPE_MORPHO)
    expect((await harness.deposit(harness.merchant, usdc(40))).vaultType).toBe(VAULT_TYPE_MORPHO)
    await harness.aaveKnob('setConfigurationReverts', false)
    expect(await route(usdc(40))).toBe(VAULT_TYPE_AAVE)

    for (const [mask, set] of [
      ['FROZEN_MASK', true],
      ['PAUSED_MASK', true],
      ['ACTIVE_MASK', false],
    ] as const) {
      await setConfigurationBit(mask, set)
      expect(await route(usdc(40)), mask).toBe(VAULT_TYPE_MORPHO)
      await setConfigurationBit(mask, !set)
      expect(await route(usdc(40)), mask).toBe(VAULT_TYPE_AAVE)
    }
  })

  it('falls back when Morpho’s maxDeposit is below the amount or reverts', async () => {
    expect(await route(usdc(40))).toBe(VAULT_TYPE_MORPHO)
    await harness.morphoKnob('setMaxDepositCap', usdc(40))
    expect(await route(usdc(40))).toBe(VAULT_TYPE_MORPHO)
    expect(await route(usdc(40) + 1n)).toBe(VAULT_TYPE_AAVE)
    expect((await harness.deposit(harness.merchant, usdc(40) + 1n)).vaultType).toBe(VAULT_TYPE_AAVE)

    await harness.morphoKnob('setMaxDepositCap', maxUint256)
    await harness.morphoKnob('setMaxDepositReverts', true)
    expect(await route(usdc(40))).toBe(VAULT_TYPE_AAVE)
    expect((await harness.deposit(harness.merchant, usdc(40))).vaultType).toBe(VAULT_TYPE_AAVE)
  })

  it('reverts NoSafeRoute(amount) when neither venue can take the amount', async () => {
    await harness.aaveKnob('setConfigurationReverts', true)
    await harness.morphoKnob('setMaxDepositReverts', true)
    await expectCustomError(route(usdc(25)), 'NoSafeRoute', [usdc(25)])
    await expectCustomError(depositCall(usdc(25)), 'NoSafeRoute', [usdc(25)])
  })

  it('does not fall back to a venue the oracle calls unsafe (NoSafeRoute)', async () => {
    // Aave unsafe, so the oracle picks Morpho; Morpho takes nothing; Aave has capacity but is not safe.
    await harness.aaveKnob('setIdleLiquidity', (await safeIdleFloor()) - 1n)
    await harness.morphoKnob('setMaxDepositCap', 0n)
    const [, preferred] = await harness.readOracle('getOptimalVault')
    expect(preferred).toBe(VAULT_TYPE_MORPHO)
    expect(await isVaultSafe(VAULT_TYPE_AAVE)).toBe(false)
    await expectCustomError(route(usdc(25)), 'NoSafeRoute', [usdc(25)])
  })

  it('keeps the devnet knobs owner-only (OwnableUnauthorizedAccount)', async () => {
    const { merchant, addresses } = harness
    const caller = merchant.account.address
    const attempts = [
      () =>
        merchant.writeContract({
          address: addresses.aavePool,
          abi: MockAavePoolArtifact.abi,
          functionName: 'setLiquidityRate',
          args: [rayPercent(50)],
        }),
      () =>
        merchant.writeContract({
          address: addresses.aavePool,
          abi: MockAavePoolArtifact.abi,
          functionName: 'setConfigurationReverts',
          args: [true],
        }),
      () =>
        merchant.writeContract({
          address: addresses.morphoVault,
          abi: MockMorphoVaultArtifact.abi,
          functionName: 'setConvertToAssetsReverts',
          args: [true],
        }),
      () =>
        merchant.writeContract({
          address: addresses.morphoVault,
          abi: MockMorphoVaultArtifact.abi,
          functionName: 'setMaxDepositCap',
          args: [0n],
        }),
      () =>
        merchant.writeContract({
          address: addresses.morphoVault,
          abi: MockMorphoVaultArtifact.abi,
          functionName: 'setConvertToAssetsGasBurn',
          args: [1n],
        }),
      () =>
        merchant.writeContract({
          address: addresses.oracle,
          abi: oracle,
          functionName: 'setObservationsPaused',
          args: [true],
        }),
    ]
    for (const attempt of attempts) {
      await expectCustomError(attempt(), 'OwnableUnauthorizedAccount', [caller])
    }
  })
})
