import { parseEventLogs, toFunctionSelector } from 'viem'
import { describe, expect, it } from 'vitest'
import {
  FeeCollectorArtifact,
  MockAavePoolArtifact,
  MockMorphoVaultArtifact,
  VaultRouterArtifact,
} from '../../src/devnet/artifacts/index.js'
import {
  expectCustomError,
  rayPercent,
  revertOf,
  usdc,
  useProtocolHarness,
  VAULT_TYPE_AAVE,
  VAULT_TYPE_MORPHO,
} from './protocolHarness.js'

const router = VaultRouterArtifact.abi
const year = 365 * 24 * 3600

describe('vault protocol: withdrawals, fees and degraded reads', () => {
  const harness = useProtocolHarness((h) => h.registerAndApprove(h.merchant))

  const withdraw = (shares: bigint, minUsdcOut = 0n) =>
    harness.merchant.writeContract({
      address: harness.addresses.router,
      abi: router,
      functionName: 'withdraw',
      args: [shares, harness.merchant.account.address, minUsdcOut],
    })
  const withdrawnEvent = async (shares: bigint, minUsdcOut = 0n) => {
    const receipt = await harness.mined(withdraw(shares, minUsdcOut))
    const events = parseEventLogs({ abi: router, eventName: 'Withdrawn', logs: receipt.logs })
    expect(events).toHaveLength(1)
    return { args: events[0]?.args, receipt }
  }
  const readRouter = <
    name extends 'totalVaultAssets' | 'pricePerShare' | 'getCurrentAllocation' | 'withdrawCapacity',
  >(
    functionName: name,
  ) =>
    harness.publicClient.readContract({
      address: harness.addresses.router,
      abi: router,
      functionName,
    })
  const previewRedeem = (shares: bigint) =>
    harness.publicClient.readContract({
      address: harness.addresses.router,
      abi: router,
      functionName: 'previewRedeem',
      args: [shares, harness.merchant.account.address],
    })
  const previewWithdrawNet = (desired: bigint, wallet = harness.merchant.account.address) =>
    harness.publicClient.readContract({
      address: harness.addresses.router,
      abi: router,
      functionName: 'previewWithdrawNet',
      args: [desired, wallet],
    })
  const costBasis = () =>
    harness.publicClient.readContract({
      address: harness.addresses.router,
      abi: router,
      functionName: 'costBasisUSDC',
      args: [harness.merchant.account.address],
    })
  const morphoKnob = (
    functionName: 'setConvertToAssetsReverts' | 'setMaxWithdrawCap',
    arg: boolean | bigint,
  ) =>
    harness.mined(
      harness.deployer.writeContract({
        address: harness.addresses.morphoVault,
        abi: MockMorphoVaultArtifact.abi,
        functionName,
        args: [arg as never],
      }),
    )
  /** 100 USDC in Morpho (default rates), then 100 USDC in Aave (after making Aave the better venue). */
  const depositIntoBothVenues = async () => {
    expect((await harness.deposit(harness.merchant, usdc(100))).vaultType).toBe(VAULT_TYPE_MORPHO)
    await harness.setRates(rayPercent(6), rayPercent(4.5))
    expect((await harness.deposit(harness.merchant, usdc(100))).vaultType).toBe(VAULT_TYPE_AAVE)
  }

  it('computes the fee as ceil(10 % of yield)', async () => {
    const { publicClient, addresses } = harness
    const fee = (yieldEarned: bigint) =>
      publicClient.readContract({
        address: addresses.feeCollector,
        abi: FeeCollectorArtifact.abi,
        functionName: 'calculateFee',
        args: [yieldEarned],
      })
    expect(
      await publicClient.readContract({
        address: addresses.feeCollector,
        abi: FeeCollectorArtifact.abi,
        functionName: 'FEE_BPS',
      }),
    ).toBe(1000n)
    expect(await Promise.all([0n, 1n, 10n, 11n, 45_000_001n].map(fee))).toEqual([
      0n,
      1n,
      1n,
      2n,
      4_500_001n,
    ])
  })

  it('pays the principal plus yield minus a fee of ceil(10 % of the yield) to the treasury', async () => {
    const { merchant, addresses, devnet } = harness
    const treasury = devnet.accounts.deployer.address
    const { dvUsdcMinted } = await harness.deposit(merchant, usdc(1_000))
    await devnet.advanceTime(year)

    const treasuryBefore = await harness.usdcBalance(treasury)
    const merchantBefore = await harness.usdcBalance(merchant.account.address)
    const { args, receipt } = await withdrawnEvent(dvUsdcMinted)
    if (!args) throw new Error('no Withdrawn event')
    const gross = args.usdcReturned + args.feePaid

    expect(args.wallet).toBe(merchant.account.address)
    expect(args.dvUsdcBurned).toBe(dvUsdcMinted)
    // All shares: the whole cost basis is principal, the rest is yield (about 4.5 % of 1,000 USDC).
    expect(args.yieldEarned).toBe(gross - usdc(1_000))
    expect(args.yieldEarned).toBeGreaterThan(usdc(44))
    expect(args.yieldEarned).toBeLessThan(usdc(46))
    expect(args.feePaid).toBe((args.yieldEarned + 9n) / 10n)
    expect(await harness.usdcBalance(treasury)).toBe(treasuryBefore + args.feePaid)
    expect(await harness.usdcBalance(merchant.account.address)).toBe(
      merchantBefore + args.usdcReturned,
    )
    // The fee collector forwarded everything and kept nothing.
    expect(await harness.usdcBalance(addresses.feeCollector)).toBe(0n)
    const [collected] = parseEventLogs({
      abi: FeeCollectorArtifact.abi,
      eventName: 'FeeCollected',
      logs: receipt.logs,
    })
    expect(collected?.args).toEqual({
      wallet: merchant.account.address,
      yieldEarned: args.yieldEarned,
      fee: args.feePaid,
      treasury,
    })
    expect(await costBasis()).toBe(0n)
    expect(await harness.shareBalance(merchant.account.address)).toBe(0n)
  })

  it('takes principal pro rata to the shares redeemed and charges no fee without yield', async () => {
    const { merchant } = harness
    await harness.deposit(merchant, usdc(300))
    const shares = await harness.shareBalance(merchant.account.address)
    const { args } = await withdrawnEvent(shares / 3n)
    // Seconds after depositing, the value is at most the principal: no yield, no fee.
    expect(args?.yieldEarned).toBe(0n)
    expect(args?.feePaid).toBe(0n)
    expect(args?.usdcReturned).toBeLessThanOrEqual(usdc(100))
    expect(args?.usdcReturned).toBeGreaterThanOrEqual(usdc(100) - 1n)
    expect(await costBasis()).toBe(usdc(200))
  })

  it('rejects bad withdrawals (ZeroAmount, InsufficientShares, SlippageExceeded, NotAuthorised)', async () => {
    const { merchant, buyer, addresses } = harness
    const { dvUsdcMinted } = await harness.deposit(merchant, usdc(100))
    await expectCustomError(withdraw(0n), 'ZeroAmount', [])
    await expectCustomError(withdraw(dvUsdcMinted + 1n), 'InsufficientShares', [
      dvUsdcMinted + 1n,
      dvUsdcMinted,
    ])
    const expected = await previewRedeem(dvUsdcMinted)
    await expectCustomError(withdraw(dvUsdcMinted, usdc(101)), 'SlippageExceeded', [
      expected,
      usdc(101),
    ])
    await expectCustomError(
      buyer.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'withdraw',
        args: [dvUsdcMinted, merchant.account.address, 0n],
      }),
      'NotAuthorised',
    )
  })

  it('previewWithdrawNet returns the fewest shares that deliver at least the desired net USDC', async () => {
    const { merchant, buyer, devnet } = harness
    await harness.deposit(merchant, usdc(1_000))
    await devnet.advanceTime(year)

    const desired = usdc(500)
    const shares = await previewWithdrawNet(desired)
    expect(await previewRedeem(shares)).toBeGreaterThanOrEqual(desired)
    expect(await previewRedeem(shares - 1n)).toBeLessThan(desired)
    const { args } = await withdrawnEvent(shares, desired)
    expect(args?.usdcReturned).toBeGreaterThanOrEqual(desired)
    expect(args?.feePaid).toBeGreaterThan(0n)

    await expectCustomError(previewWithdrawNet(0n), 'ZeroAmount', [])
    await expectCustomError(
      previewWithdrawNet(usdc(1), buyer.account.address),
      'NoPositionToWithdraw',
      [],
    )
    const remaining = await harness.shareBalance(merchant.account.address)
    const maxDeliverable = await previewRedeem(remaining)
    await expectCustomError(previewWithdrawNet(maxDeliverable + 1n), 'UnserviceableNet', [
      maxDeliverable + 1n,
      maxDeliverable,
    ])
    expect(await previewWithdrawNet(maxDeliverable)).toBeLessThanOrEqual(remaining)
  })

  it('redirects a short leg to the other venue (ExitRedirected) and reverts InsufficientVaultLiquidity', async () => {
    const { deployer, addresses, mined, merchant } = harness
    await depositIntoBothVenues()
    // Borrowers leave only 10 USDC in Aave.
    await mined(
      deployer.writeContract({
        address: addresses.aavePool,
        abi: MockAavePoolArtifact.abi,
        functionName: 'setIdleLiquidity',
        args: [usdc(10)],
      }),
    )
    const [aaveHeld, aaveIdle, aaveCap, morphoHeld, morphoCap, reachable, totalCap] =
      await readRouter('withdrawCapacity')
    expect(aaveIdle).toBe(usdc(10))
    expect(aaveCap).toBe(usdc(10))
    expect(aaveHeld).toBeGreaterThan(usdc(99))
    expect(morphoCap).toBe(morphoHeld)
    expect(reachable).toBe(true)
    expect(totalCap).toBe(usdc(10) + morphoCap)

    const shares = await harness.shareBalance(merchant.account.address)
    const { receipt, args } = await withdrawnEvent(shares / 2n)
    const [redirect] = parseEventLogs({
      abi: router,
      eventName: 'ExitRedirected',
      logs: receipt.logs,
    })
    if (!redirect || !args) throw new Error('missing events')
    const gross = args.usdcReturned + args.feePaid
    expect(redirect.args.wallet).toBe(merchant.account.address)
    expect(redirect.args.targetAave + redirect.args.targetMorpho).toBe(gross)
    expect(redirect.args.targetAave).toBeGreaterThan(usdc(45))
    expect(redirect.args.actualAave).toBe(usdc(10))
    expect(redirect.args.actualMorpho).toBe(gross - usdc(10))
    expect(redirect.args.shortLeg).toBe(true)

    // The rest is worth ~100 USDC, but Aave is empty and Morpho holds only ~10.
    const reverted = await expectCustomError(
      withdraw(await harness.shareBalance(merchant.account.address)),
      'InsufficientVaultLiquidity',
    )
    const [requested, available] = (reverted.data?.args ?? []) as bigint[]
    expect(requested).toBeGreaterThan(usdc(99))
    expect(available).toBeLessThan(usdc(11))
  })

  it("redirects to Aave when Morpho's maxWithdraw is capped", async () => {
    await depositIntoBothVenues()
    await morphoKnob('setMaxWithdrawCap', usdc(5))
    const [, , , , morphoCap] = await readRouter('withdrawCapacity')
    expect(morphoCap).toBe(usdc(5))
    const { receipt } = await withdrawnEvent(
      (await harness.shareBalance(harness.merchant.account.address)) / 2n,
    )
    const [redirect] = parseEventLogs({
      abi: router,
      eventName: 'ExitRedirected',
      logs: receipt.logs,
    })
    expect(redirect?.args.actualMorpho).toBe(usdc(5))
    expect(redirect?.args.targetMorpho).toBeGreaterThan(usdc(45))
  })

  it("keeps withdrawCapacity and getCurrentAllocation answering while Morpho's convertToAssets reverts", async () => {
    const { merchant, publicClient, addresses } = harness
    await depositIntoBothVenues()
    const [aaveBefore] = await readRouter('getCurrentAllocation')
    await morphoKnob('setConvertToAssetsReverts', true)

    const [aaveHeld, aaveIdle, aaveCap, morphoHeld, morphoCap, reachable, totalCap] =
      await readRouter('withdrawCapacity')
    expect(reachable).toBe(false)
    expect([morphoHeld, morphoCap]).toEqual([0n, 0n])
    expect(aaveHeld).toBeGreaterThanOrEqual(aaveBefore)
    // The cap is the smaller of the aUSDC held and the USDC the aToken holds.
    expect(aaveCap).toBe([aaveHeld, aaveIdle].sort((a, b) => Number(a - b))[0])
    expect(totalCap).toBe(aaveCap)
    const [aaveAssets, morphoAssets] = await readRouter('getCurrentAllocation')
    expect(aaveAssets).toBe(aaveHeld)
    expect(morphoAssets).toBe(0n)

    // The valuation views revert with the venue's own error, like the real deployment.
    const morphoError = toFunctionSelector('ConvertToAssetsDisabled()')
    // Thunks, so that no rejected promise sits unobserved while an earlier one is awaited.
    const valuationReads: (() => Promise<unknown>)[] = [
      () => readRouter('totalVaultAssets'),
      () => readRouter('pricePerShare'),
      () =>
        publicClient.readContract({
          address: addresses.router,
          abi: router,
          functionName: 'getPosition',
          args: [merchant.account.address],
        }),
      () => previewRedeem(usdc(1)),
      () => previewWithdrawNet(usdc(1)),
      () =>
        publicClient.readContract({
          address: addresses.router,
          abi: router,
          functionName: 'previewDeposit',
          args: [usdc(1)],
        }),
    ]
    for (const read of valuationReads) {
      expect((await revertOf(read())).raw).toBe(morphoError)
    }
    // Writes name the cause.
    await expectCustomError(withdraw(usdc(1)), 'MorphoUnreachable', [])
    await expectCustomError(
      merchant.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'deposit',
        args: [usdc(10), merchant.account.address, 0n],
      }),
      'MorphoUnreachable',
      [],
    )

    await morphoKnob('setConvertToAssetsReverts', false)
    expect((await readRouter('withdrawCapacity'))[5]).toBe(true)
  })

  it("bounds Morpho's views by the gas set with setMorphoViewGas", async () => {
    const { deployer, merchant, addresses, mined } = harness
    await harness.deposit(merchant, usdc(100))
    const setGas = (gas: bigint, wallet = deployer) =>
      wallet.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'setMorphoViewGas',
        args: [gas],
      })
    await expectCustomError(setGas(1_000n, merchant), 'NotEmergencyMultisig', [])
    await mined(setGas(1_000n))
    const capacity = await readRouter('withdrawCapacity')
    expect(capacity[5]).toBe(false)
    expect(await readRouter('getCurrentAllocation')).toEqual([0n, 0n])
    await mined(setGas(200_000n))
    expect(await readRouter('getCurrentAllocation')).toEqual([0n, usdc(100)])
  })

  it('rotates the treasury through the emergency multisig after a 2-day delay', async () => {
    const { deployer, buyer, publicClient, addresses, mined, devnet } = harness
    const collector = FeeCollectorArtifact.abi
    const readCollector = <
      name extends 'treasury' | 'pendingTreasury' | 'treasuryRotationEffectiveAt',
    >(
      functionName: name,
    ) =>
      publicClient.readContract({ address: addresses.feeCollector, abi: collector, functionName })
    const call = (
      functionName: 'executeTreasuryRotation' | 'cancelTreasuryRotation',
      wallet = deployer,
    ) =>
      wallet.writeContract({
        // The router's ABI plus the collector's errors, which bubble up through it.
        address: addresses.router,
        abi: [...router, ...collector.filter((item) => item.type === 'error')],
        functionName,
      })
    const newTreasury = buyer.account.address

    await expectCustomError(
      buyer.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'proposeTreasuryRotation',
        args: [newTreasury],
      }),
      'NotEmergencyMultisig',
    )
    const proposal = await mined(
      deployer.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'proposeTreasuryRotation',
        args: [newTreasury],
      }),
    )
    const proposedAt = (await publicClient.getBlock({ blockHash: proposal.blockHash })).timestamp
    expect(await readCollector('pendingTreasury')).toBe(newTreasury)
    expect(await readCollector('treasuryRotationEffectiveAt')).toBe(proposedAt + 2n * 86_400n)
    await expectCustomError(call('executeTreasuryRotation'), 'RotationNotReady', [
      proposedAt + 2n * 86_400n,
    ])

    await devnet.advanceTime(2 * 86_400)
    await mined(call('executeTreasuryRotation'))
    expect(await readCollector('treasury')).toBe(newTreasury)
    expect(await readCollector('pendingTreasury')).toBe(
      '0x0000000000000000000000000000000000000000',
    )
    await expectCustomError(call('cancelTreasuryRotation'), 'NoPendingRotation', [])
  })
})
