import { getAddress, maxUint256, parseEventLogs, type TransactionReceipt } from 'viem'
import { describe, expect, it } from 'vitest'
import {
  FeeCollectorArtifact,
  TestUSDCArtifact,
  VaultRouterArtifact,
} from '../../src/devnet/artifacts/index.js'
import { feeOnYield, previewRedeem, sharesToAssets } from '../../src/sdk/internal/shareMath.js'
import {
  eventArgs,
  expectCustomError,
  usdc,
  useProtocolHarness,
  VAULT_TYPE_AAVE,
  VAULT_TYPE_MORPHO,
} from '../support/protocolHarness.js'

const router = VaultRouterArtifact.abi
const year = 365 * 24 * 3600

describe('vault protocol: withdrawals and the fee on the yield', () => {
  const harness = useProtocolHarness((h) => h.registerAndApprove(h.merchant))

  const withdrawn = (receipt: TransactionReceipt) => eventArgs(router, 'Withdrawn', receipt.logs)
  const redirects = (receipt: TransactionReceipt) =>
    parseEventLogs({ abi: router, eventName: 'ExitRedirected', logs: receipt.logs }).map(
      (event) => event.args,
    )
  const merchantShares = () => harness.shareBalance(harness.merchant.account.address)
  /** 100 USDC in Morpho (the oracle's choice), then 100 USDC in Aave (Morpho refuses deposits meanwhile). */
  const depositIntoBothVenues = async () => {
    expect((await harness.deposit(harness.merchant, usdc(100))).vaultType).toBe(VAULT_TYPE_MORPHO)
    await harness.morphoKnob('setMaxDepositCap', 0n)
    expect((await harness.deposit(harness.merchant, usdc(100))).vaultType).toBe(VAULT_TYPE_AAVE)
    await harness.morphoKnob('setMaxDepositCap', maxUint256)
  }
  /**
   * The gross value of `shares`, and the pro-rata targets of §4.4 step 3, from the capacity plan and the
   * share supply read at the latest block.
   */
  const exitPlan = async (shares: bigint) => {
    const capacity = await harness.readRouter('withdrawCapacity')
    const { totalShares } = await harness.vaultTotals()
    const held = capacity.aaveAssetsHeld + capacity.morphoAssetsHeld
    const gross = sharesToAssets(shares, { totalAssets: held, totalShares })
    const targetAave = (gross * capacity.aaveAssetsHeld) / held
    return { capacity, gross, targetAave, targetMorpho: gross - targetAave }
  }

  it('computes the fee as ceil(10 % of yield)', async () => {
    const fee = (yieldEarned: bigint) => harness.readFeeCollector('calculateFee', [yieldEarned])
    expect(await harness.readFeeCollector('FEE_BPS')).toBe(1000n)
    expect(await harness.readFeeCollector('BPS_DENOMINATOR')).toBe(10_000n)
    const yields = [0n, 1n, 9n, 10n, 11n, 45_000_001n]
    expect(await Promise.all(yields.map(fee))).toEqual(yields.map((y) => feeOnYield(y)))
    expect(yields.map((y) => feeOnYield(y))).toEqual([0n, 1n, 1n, 1n, 2n, 4_500_001n])
  })

  it('has the fee collector pull exactly the fee from the router to the treasury (FeeCollected)', async () => {
    const { merchant, addresses, devnet } = harness
    const treasury = await harness.readFeeCollector('treasury')
    expect(treasury).toBe(devnet.accounts.deployer.address)
    const { dvUsdcMinted } = await harness.deposit(merchant, usdc(1_000))
    await devnet.advanceTime(year)

    const wallet = await harness.holdingsOf(merchant.account.address)
    const expectedNet = previewRedeem(dvUsdcMinted, await harness.vaultTotals(), wallet)
    expect(
      await harness.readRouter('previewRedeem', [dvUsdcMinted, merchant.account.address]),
    ).toBe(expectedNet)
    const treasuryBefore = await harness.usdcBalance(treasury)
    const merchantBefore = await harness.usdcBalance(merchant.account.address)
    await harness.holdClock()
    const receipt = await harness.withdraw(merchant, dvUsdcMinted)
    const args = withdrawn(receipt)
    const gross = args.usdcReturned + args.feePaid

    expect(args.wallet).toBe(merchant.account.address)
    expect(args.dvUsdcBurned).toBe(dvUsdcMinted)
    expect(args.usdcReturned).toBe(expectedNet)
    // All shares: the whole cost basis is principal, the rest is yield (about 4.5 % of 1,000 USDC).
    expect(args.yieldEarned).toBe(gross - usdc(1_000))
    expect(args.yieldEarned).toBeGreaterThan(usdc(44))
    expect(args.feePaid).toBe(feeOnYield(args.yieldEarned))
    expect(await harness.usdcBalance(treasury)).toBe(treasuryBefore + args.feePaid)
    expect(await harness.usdcBalance(merchant.account.address)).toBe(
      merchantBefore + args.usdcReturned,
    )

    // The collector emits FeeCollected and moves the fee straight from the router to the treasury.
    const collected = parseEventLogs({ abi: FeeCollectorArtifact.abi, logs: receipt.logs })
    expect(collected.map((log) => [getAddress(log.address), log.eventName, log.args])).toEqual([
      [
        addresses.feeCollector,
        'FeeCollected',
        {
          wallet: merchant.account.address,
          yieldEarned: args.yieldEarned,
          feeAmount: args.feePaid,
        },
      ],
    ])
    const feeTransfers = parseEventLogs({
      abi: TestUSDCArtifact.abi,
      eventName: 'Transfer',
      logs: receipt.logs,
      args: { to: treasury },
    })
    expect(feeTransfers.map((log) => log.args)).toEqual([
      { from: addresses.router, to: treasury, value: args.feePaid },
    ])
    expect(await harness.usdcBalance(addresses.feeCollector)).toBe(0n)
    expect(await harness.usdcBalance(addresses.router)).toBe(0n)
    expect(
      await harness.publicClient.readContract({
        address: addresses.usdc,
        abi: TestUSDCArtifact.abi,
        functionName: 'allowance',
        args: [addresses.router, addresses.feeCollector],
      }),
    ).toBe(0n)
    expect(await harness.holdingsOf(merchant.account.address)).toEqual({
      shares: 0n,
      costBasis: 0n,
    })
  })

  it('takes principal pro rata to the shares redeemed, and charges no fee (and no FeeCollected) without yield', async () => {
    const { merchant } = harness
    await harness.deposit(merchant, usdc(300))
    const before = await harness.holdingsOf(merchant.account.address)
    const shares = before.shares / 3n
    const expectedNet = previewRedeem(shares, await harness.vaultTotals(), before)
    await harness.holdClock()
    const receipt = await harness.withdraw(merchant, shares)
    const args = withdrawn(receipt)
    // Seconds after depositing, the value is at most the principal: no yield, no fee.
    expect(args.yieldEarned).toBe(0n)
    expect(args.feePaid).toBe(0n)
    expect(args.usdcReturned).toBe(expectedNet)
    expect(parseEventLogs({ abi: FeeCollectorArtifact.abi, logs: receipt.logs })).toEqual([])
    expect(await harness.holdingsOf(merchant.account.address)).toEqual({
      shares: before.shares - shares,
      costBasis: before.costBasis - (before.costBasis * shares) / before.shares,
    })
  })

  it('rejects bad withdrawals (ZeroAmount, InsufficientShares, SlippageExceeded, NotAuthorised)', async () => {
    const { merchant, buyer } = harness
    const { dvUsdcMinted } = await harness.deposit(merchant, usdc(100))
    await expectCustomError(harness.withdraw(merchant, 0n), 'ZeroAmount', [])
    await expectCustomError(harness.withdraw(merchant, dvUsdcMinted + 1n), 'InsufficientShares', [
      dvUsdcMinted + 1n,
      dvUsdcMinted,
    ])
    const expected = await harness.readRouter('previewRedeem', [
      dvUsdcMinted,
      merchant.account.address,
    ])
    await harness.holdClock()
    await expectCustomError(
      harness.withdraw(merchant, dvUsdcMinted, usdc(101)),
      'SlippageExceeded',
      [expected, usdc(101)],
    )
    await expectCustomError(
      harness.withdrawCall(buyer, dvUsdcMinted, { forWallet: merchant.account.address }),
      'NotAuthorised',
      [],
    )
  })

  it('reverts InsufficientVaultLiquidity(0, 0) when the shares are worth 0 (gross 0)', async () => {
    const { merchant } = harness
    await harness.deposit(merchant, usdc(100))
    // A loss in Morpho: the vault holds less than its share supply, so 1 share is worth 0 base units.
    await harness.morphoKnob('simulateLoss', usdc(1_000))
    const vault = await harness.vaultTotals()
    expect(vault.totalAssets).toBeLessThan(vault.totalShares)
    expect(await harness.readRouter('convertToAssets', [1n])).toBe(0n)
    await expectCustomError(harness.withdraw(merchant, 1n), 'InsufficientVaultLiquidity', [0n, 0n])
  })

  it('redirects a short Aave leg to Morpho (ExitRedirected, shortLegMorpho false)', async () => {
    const { merchant } = harness
    await depositIntoBothVenues()
    // Borrowers leave only 10 USDC in Aave.
    await harness.aaveKnob('setIdleLiquidity', usdc(10))
    const shares = (await merchantShares()) / 2n
    const { capacity, gross, targetAave, targetMorpho } = await exitPlan(shares)
    expect(capacity).toMatchObject({
      aaveIdleLiquidity: usdc(10),
      aaveWithdrawCap: usdc(10),
      morphoWithdrawCap: capacity.morphoAssetsHeld,
      morphoReachable: true,
      totalWithdrawCap: usdc(10) + capacity.morphoAssetsHeld,
    })
    expect(targetAave).toBeGreaterThan(usdc(10))

    await harness.holdClock()
    const receipt = await harness.withdraw(merchant, shares)
    expect(redirects(receipt)).toEqual([
      {
        wallet: merchant.account.address,
        targetAave,
        targetMorpho,
        actualAave: usdc(10),
        actualMorpho: gross - usdc(10),
        shortLegMorpho: false,
      },
    ])
    const args = withdrawn(receipt)
    expect(args.usdcReturned + args.feePaid).toBe(gross)
  })

  it('redirects a short Morpho leg to Aave (shortLegMorpho true) when maxWithdraw is capped', async () => {
    await depositIntoBothVenues()
    await harness.morphoKnob('setMaxWithdrawCap', usdc(5))
    const shares = (await merchantShares()) / 2n
    const { capacity, gross, targetAave, targetMorpho } = await exitPlan(shares)
    expect(capacity.morphoWithdrawCap).toBe(usdc(5))
    expect(targetMorpho).toBeGreaterThan(usdc(5))

    await harness.holdClock()
    const receipt = await harness.withdraw(harness.merchant, shares)
    expect(redirects(receipt)).toEqual([
      {
        wallet: harness.merchant.account.address,
        targetAave,
        targetMorpho,
        actualAave: gross - usdc(5),
        actualMorpho: usdc(5),
        shortLegMorpho: true,
      },
    ])
  })

  it('takes legs within their caps without ExitRedirected', async () => {
    await depositIntoBothVenues()
    const shares = (await merchantShares()) / 2n
    const { gross } = await exitPlan(shares)
    await harness.holdClock()
    const receipt = await harness.withdraw(harness.merchant, shares)
    expect(redirects(receipt)).toEqual([])
    const args = withdrawn(receipt)
    expect(args.usdcReturned + args.feePaid).toBe(gross)
  })

  it('counts a reverting Morpho maxWithdraw as 0: paid from Aave, or InsufficientVaultLiquidity(gross, caps)', async () => {
    const { merchant } = harness
    await depositIntoBothVenues()
    await harness.morphoKnob('setMaxWithdrawReverts', true)
    const { capacity, gross, targetAave, targetMorpho } = await exitPlan(usdc(50))
    expect(capacity.morphoAssetsHeld).toBeGreaterThan(usdc(99))
    expect(capacity.morphoWithdrawCap).toBe(0n)
    expect(capacity.morphoReachable).toBe(true)
    expect(capacity.totalWithdrawCap).toBe(capacity.aaveWithdrawCap)

    await harness.holdClock()
    const receipt = await harness.withdraw(merchant, usdc(50))
    expect(redirects(receipt)).toEqual([
      {
        wallet: merchant.account.address,
        targetAave,
        targetMorpho,
        actualAave: gross,
        actualMorpho: 0n,
        shortLegMorpho: true,
      },
    ])

    // What is left is worth more than Aave alone can pay.
    const rest = await merchantShares()
    const plan = await exitPlan(rest)
    expect(plan.gross).toBeGreaterThan(plan.capacity.totalWithdrawCap)
    await harness.holdClock()
    await expectCustomError(harness.withdraw(merchant, rest), 'InsufficientVaultLiquidity', [
      plan.gross,
      plan.capacity.totalWithdrawCap,
    ])
  })

  it('reverts InsufficientVaultLiquidity(gross, aaveCap + morphoCap) when both venues together cannot pay', async () => {
    const { merchant } = harness
    await depositIntoBothVenues()
    await harness.aaveKnob('setIdleLiquidity', 0n)
    await harness.morphoKnob('setMaxWithdrawCap', usdc(10))
    const shares = await merchantShares()
    const { capacity, gross } = await exitPlan(shares)
    expect(capacity.totalWithdrawCap).toBe(usdc(10))
    await harness.holdClock()
    await expectCustomError(harness.withdraw(merchant, shares), 'InsufficientVaultLiquidity', [
      gross,
      usdc(10),
    ])
  })

  it('caps Aave withdrawals at min(held, idle) while active and not paused (a frozen reserve still pays), else 0', async () => {
    await harness.morphoKnob('setMaxDepositCap', 0n)
    await harness.deposit(harness.merchant, usdc(100))
    const [{ data }, frozen, paused, active] = await Promise.all([
      harness.readAavePool('getConfiguration', [harness.addresses.usdc]),
      harness.readAavePool('FROZEN_MASK'),
      harness.readAavePool('PAUSED_MASK'),
      harness.readAavePool('ACTIVE_MASK'),
    ])
    const aaveCapWith = async (configuration: bigint) => {
      await harness.aaveKnob('setConfiguration', configuration)
      return (await harness.readRouter('withdrawCapacity')).aaveWithdrawCap
    }
    await harness.aaveKnob('setIdleLiquidity', usdc(40))
    expect(await aaveCapWith(data)).toBe(usdc(40))
    expect(await aaveCapWith(data | frozen)).toBe(usdc(40))
    expect(await aaveCapWith(data | paused)).toBe(0n)
    expect(await aaveCapWith(data & ~active)).toBe(0n)
    await harness.aaveKnob('setIdleLiquidity', usdc(1_000))
    const { aaveAssetsHeld, aaveWithdrawCap } = await harness.readRouter('withdrawCapacity')
    expect(aaveWithdrawCap).toBe(usdc(0))
    expect(await aaveCapWith(data)).toBe(aaveAssetsHeld)

    // A paused reserve pays nothing: the withdrawal finds no capacity.
    await harness.aaveKnob('setConfiguration', data | paused)
    const reverted = await expectCustomError(
      harness.withdraw(harness.merchant, usdc(10)),
      'InsufficientVaultLiquidity',
    )
    expect(reverted.data?.args?.[1]).toBe(0n)
  })

  it('gives the Morpho view morphoViewGas (default 350,000; 350,000–1,000,000; MorphoViewGasUpdated)', async () => {
    const { deployer, merchant, addresses, mined } = harness
    const setGas = (gas: bigint, wallet = deployer) =>
      wallet.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'setMorphoViewGas',
        args: [gas],
      })
    expect(await harness.readRouter('morphoViewGas')).toBe(350_000n)
    await expectCustomError(setGas(500_000n, merchant), 'NotEmergencyMultisig', [])
    for (const outOfBounds of [349_999n, 1_000_001n, 0n]) {
      await expectCustomError(setGas(outOfBounds), 'MorphoViewGasOutOfBounds', [
        outOfBounds,
        350_000n,
        1_000_000n,
      ])
    }
    const updated = await mined(setGas(1_000_000n))
    expect(eventArgs(router, 'MorphoViewGasUpdated', updated.logs)).toEqual({
      oldGas: 350_000n,
      newGas: 1_000_000n,
    })
    const lowered = await mined(setGas(350_000n))
    expect(eventArgs(router, 'MorphoViewGasUpdated', lowered.logs)).toEqual({
      oldGas: 1_000_000n,
      newGas: 350_000n,
    })

    // A Morpho view that needs 500,000 gas: out of reach at 350,000, answered at 1,000,000.
    await harness.deposit(merchant, usdc(100))
    await harness.morphoKnob('setConvertToAssetsGasBurn', 500_000n)
    const unbounded = await harness.readRouter('totalVaultAssets')
    expect(unbounded).toBeGreaterThan(usdc(99))
    expect(await harness.readRouter('withdrawCapacity')).toMatchObject({
      morphoAssetsHeld: 0n,
      morphoReachable: false,
    })
    expect(await harness.readRouter('getCurrentAllocation')).toEqual([0n, 0n])
    await expectCustomError(
      harness.withdraw(merchant, await merchantShares()),
      'MorphoUnreachable',
      [],
    )
    await mined(setGas(1_000_000n))
    // Morpho accrues with block time, so the raised limit is compared with the total in its own block.
    const block = await harness.latestBlockNumber()
    const held = await harness.readRouter('totalVaultAssets', undefined, block)
    expect(held).toBeGreaterThanOrEqual(unbounded)
    expect(await harness.readRouter('withdrawCapacity', undefined, block)).toMatchObject({
      morphoAssetsHeld: held,
      morphoReachable: true,
    })
    expect(await harness.readRouter('getCurrentAllocation', undefined, block)).toEqual([0n, held])
  })
})
