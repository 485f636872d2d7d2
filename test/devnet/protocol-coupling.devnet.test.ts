import { maxUint256, toFunctionSelector } from 'viem'
import { describe, expect, it } from 'vitest'
import {
  MockATokenArtifact,
  MockMorphoVaultArtifact,
  VaultOracleArtifact,
  VaultRouterArtifact,
} from '../../src/devnet/artifacts/index.js'
import { sharesToAssets } from '../../src/sdk/internal/shareMath.js'
import {
  eventArgs,
  expectCustomError,
  revertOf,
  usdc,
  useProtocolHarness,
  VAULT_TYPE_AAVE,
  VAULT_TYPE_MORPHO,
} from '../support/protocolHarness.js'

const router = VaultRouterArtifact.abi
/** What the Morpho stand-in reverts with while its `convertToAssets` knob is on. */
const morphoError = toFunctionSelector('ConvertToAssetsDisabled()')

/**
 * When the Morpho vault's `convertToAssets` reverts, what fails with its raw
 * error, what degrades, and what never asks Morpho at all.
 */
describe('vault protocol: coupling to a failing Morpho view', () => {
  const harness = useProtocolHarness((h) => h.registerAndApprove(h.merchant))

  const merchantAddress = () => harness.merchant.account.address
  const depositCall = (amount: bigint) => harness.depositCall(harness.merchant, amount)
  /** Asserts that each read reverts with the Morpho vault's own error. Thunks: no rejection sits unobserved. */
  const expectMorphoError = async (reads: Record<string, () => Promise<unknown>>) => {
    for (const [name, read] of Object.entries(reads)) {
      const reverted = await revertOf(read()).catch((cause: Error) => {
        throw new Error(`${name}: ${cause.message}`)
      })
      expect(reverted.raw, name).toBe(morphoError)
    }
  }
  const oracleReadsThatAskMorpho = () => ({
    'isVaultSafe(1)': () => harness.readOracle('isVaultSafe', [VAULT_TYPE_MORPHO]),
    getAllRates: () => harness.readOracle('getAllRates'),
    getOptimalVault: () => harness.readOracle('getOptimalVault'),
    recordObservation: () =>
      harness.publicClient.simulateContract({
        account: harness.merchant.account,
        address: harness.addresses.oracle,
        abi: VaultOracleArtifact.abi,
        functionName: 'recordObservation',
      }),
    getRecommendedRoute: () => harness.readRouter('getRecommendedRoute', [usdc(10)]),
    deposit: () => depositCall(usdc(10)),
  })

  it('never asks Morpho when the router holds no Morpho shares: views answer, withdrawals are paid from Aave', async () => {
    const { merchant } = harness
    // Only Aave takes deposits meanwhile.
    await harness.morphoKnob('setMaxDepositCap', 0n)
    const { dvUsdcMinted, vaultType } = await harness.deposit(merchant, usdc(100))
    expect(vaultType).toBe(VAULT_TYPE_AAVE)
    await harness.morphoKnob('setMaxDepositCap', maxUint256)
    await harness.devnet.advanceTime(30 * 86_400)
    // A fresh oracle, and past the 5 minutes in which a new observation would be a no-op.
    await harness.recordObservation()
    await harness.morphoKnob('setConvertToAssetsReverts', true)
    await harness.devnet.advanceTime(300)

    await harness.holdClock()
    const aaveHeld = await harness.publicClient.readContract({
      address: harness.addresses.aToken,
      abi: MockATokenArtifact.abi,
      functionName: 'balanceOf',
      args: [harness.addresses.router],
    })
    expect(await harness.readRouter('totalVaultAssets')).toBe(aaveHeld)
    const vault = { totalAssets: aaveHeld, totalShares: dvUsdcMinted }
    const value = sharesToAssets(dvUsdcMinted, vault)
    expect(await harness.readRouter('getPosition', [merchantAddress()])).toEqual([
      usdc(100),
      value,
      value - usdc(100),
    ])
    expect(await harness.readRouter('convertToAssets', [dvUsdcMinted])).toBe(value)
    const net = await harness.readRouter('previewRedeem', [dvUsdcMinted, merchantAddress()])
    expect(
      await harness.readRouter('previewWithdrawNet', [usdc(50), merchantAddress()]),
    ).toBeGreaterThan(0n)
    expect(await harness.readRouter('withdrawCapacity')).toMatchObject({
      aaveAssetsHeld: aaveHeld,
      morphoAssetsHeld: 0n,
      morphoWithdrawCap: 0n,
      morphoReachable: true,
    })
    expect(await harness.readRouter('getCurrentAllocation')).toEqual([aaveHeld, 0n])

    // The oracle does ask Morpho, with no try.
    expect(await harness.readOracle('isVaultSafe', [VAULT_TYPE_AAVE])).toBe(true)
    await expectMorphoError(oracleReadsThatAskMorpho())

    await harness.holdClock()
    const receipt = await harness.withdraw(merchant, dvUsdcMinted)
    expect(eventArgs(router, 'Withdrawn', receipt.logs).usdcReturned).toBe(net)
  })

  it('with Morpho shares held: valuing views revert with Morpho’s error, capacity degrades, withdraw is MorphoUnreachable', async () => {
    const { merchant, buyer } = harness
    expect((await harness.deposit(merchant, usdc(100))).vaultType).toBe(VAULT_TYPE_MORPHO)
    await harness.morphoKnob('setMaxDepositCap', 0n)
    expect((await harness.deposit(merchant, usdc(100))).vaultType).toBe(VAULT_TYPE_AAVE)
    await harness.morphoKnob('setMaxDepositCap', maxUint256)
    const [aaveBefore] = await harness.readRouter('getCurrentAllocation')
    await harness.morphoKnob('setConvertToAssetsReverts', true)
    // Past the 5 minutes in which a new observation would be a no-op.
    await harness.devnet.advanceTime(300)

    const shares = await harness.shareBalance(merchantAddress())
    await expectMorphoError({
      totalVaultAssets: () => harness.readRouter('totalVaultAssets'),
      pricePerShare: () => harness.readRouter('pricePerShare'),
      convertToAssets: () => harness.readRouter('convertToAssets', [shares]),
      convertToShares: () => harness.readRouter('convertToShares', [usdc(1)]),
      previewDeposit: () => harness.readRouter('previewDeposit', [usdc(1)]),
      getPosition: () => harness.readRouter('getPosition', [merchantAddress()]),
      previewRedeem: () => harness.readRouter('previewRedeem', [shares, merchantAddress()]),
      previewWithdrawNet: () =>
        harness.readRouter('previewWithdrawNet', [usdc(1), merchantAddress()]),
      ...oracleReadsThatAskMorpho(),
    })
    // A wallet without shares gets its position without the venues being asked.
    expect(await harness.readRouter('getPosition', [buyer.account.address])).toEqual([0n, 0n, 0n])

    const capacity = await harness.readRouter('withdrawCapacity')
    expect(capacity).toMatchObject({
      morphoAssetsHeld: 0n,
      morphoWithdrawCap: 0n,
      morphoReachable: false,
      totalWithdrawCap: capacity.aaveWithdrawCap,
    })
    expect(capacity.aaveAssetsHeld).toBeGreaterThanOrEqual(aaveBefore)
    // The Aave cap is the smaller of the aUSDC held and the USDC the aToken holds: here the aUSDC.
    expect(capacity.aaveAssetsHeld).toBeLessThan(capacity.aaveIdleLiquidity)
    expect(capacity.aaveWithdrawCap).toBe(capacity.aaveAssetsHeld)
    expect(await harness.readRouter('getCurrentAllocation')).toEqual([capacity.aaveAssetsHeld, 0n])
    await expectCustomError(harness.withdraw(merchant, usdc(1)), 'MorphoUnreachable', [])

    await harness.morphoKnob('setConvertToAssetsReverts', false)
    expect((await harness.readRouter('withdrawCapacity')).morphoReachable).toBe(true)
    await harness.withdraw(merchant, shares)
  })

  it('answers getPosition early when nobody holds dvUSDC (S = 0), even with Morpho shares in the router', async () => {
    // Morpho shares sent to the router by someone else: totalVaultAssets must ask Morpho, getPosition must not.
    await harness.mined(
      harness.deployer.writeContract({
        address: harness.addresses.morphoVault,
        abi: MockMorphoVaultArtifact.abi,
        functionName: 'transfer',
        args: [harness.addresses.router, 10n ** 18n],
      }),
    )
    await harness.morphoKnob('setConvertToAssetsReverts', true)
    await expectMorphoError({ totalVaultAssets: () => harness.readRouter('totalVaultAssets') })
    expect(await harness.readRouter('getPosition', [merchantAddress()])).toEqual([0n, 0n, 0n])
  })
})
