import { type Hex, maxUint256, parseEventLogs } from 'viem'
import { describe, expect, it } from 'vitest'
import { VaultOracleArtifact, VaultRouterArtifact } from '../../src/devnet/artifacts/index.js'
import { expectCustomError, usdc, useProtocolHarness } from './protocolHarness.js'

const router = VaultRouterArtifact.abi
const day = 24 * 3600

describe('vault protocol: registration and deposit rules', () => {
  const harness = useProtocolHarness()

  it('requires registration and the wallet or its operator as caller (NotAuthorised)', async () => {
    const { merchant, buyer, addresses, mined, publicClient } = harness
    await expectCustomError(
      merchant.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'deposit',
        args: [usdc(100), merchant.account.address, 0n],
      }),
      'NotAuthorised',
      [],
    )

    await harness.registerAndApprove(merchant)
    // A registered wallet, but the caller is neither the wallet nor its operator.
    await expectCustomError(
      buyer.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'deposit',
        args: [usdc(100), merchant.account.address, 0n],
      }),
      'NotAuthorised',
    )

    const operatorReceipt = await mined(
      merchant.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'setOperator',
        args: [buyer.account.address, true],
      }),
    )
    expect(
      parseEventLogs({ abi: router, eventName: 'OperatorSet', logs: operatorReceipt.logs })[0]
        ?.args,
    ).toEqual({ wallet: merchant.account.address, operator: buyer.account.address, approved: true })
    expect(
      await publicClient.readContract({
        address: addresses.router,
        abi: router,
        functionName: 'isOperator',
        args: [merchant.account.address, buyer.account.address],
      }),
    ).toBe(true)

    // The operator deposits the merchant's USDC; shares go to the merchant.
    const buyerUsdcBefore = await harness.usdcBalance(buyer.account.address)
    const merchantUsdcBefore = await harness.usdcBalance(merchant.account.address)
    await mined(
      buyer.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'deposit',
        args: [usdc(100), merchant.account.address, 0n],
      }),
    )
    expect(await harness.usdcBalance(merchant.account.address)).toBe(merchantUsdcBefore - usdc(100))
    expect(await harness.usdcBalance(buyer.account.address)).toBe(buyerUsdcBefore)
    expect(await harness.shareBalance(merchant.account.address)).toBe(usdc(100))
    expect(await harness.shareBalance(buyer.account.address)).toBe(0n)
  })

  it('registers once with initialize (WalletAuthorised, then WalletAlreadyAuthorised)', async () => {
    const { merchant, addresses, mined, publicClient } = harness
    const receipt = await mined(
      merchant.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'initialize',
      }),
    )
    expect(
      parseEventLogs({ abi: router, eventName: 'WalletAuthorised', logs: receipt.logs })[0]?.args,
    ).toEqual({ wallet: merchant.account.address })
    expect(
      await publicClient.readContract({
        address: addresses.router,
        abi: router,
        functionName: 'authorizedWallets',
        args: [merchant.account.address],
      }),
    ).toBe(true)
    await expectCustomError(
      merchant.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'initialize',
      }),
      'WalletAlreadyAuthorised',
      [],
    )
  })

  it('registers a wallet from its EIP-712 InitializeFor signature, relayed by another account', async () => {
    const { merchant, buyer, addresses, mined, publicClient, devnet } = harness
    const deadline = (await harness.latestTimestamp()) + 3600n
    const sign = (nonce: bigint, signer = merchant, signedDeadline = deadline) =>
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
        message: { wallet: merchant.account.address, deadline: signedDeadline, nonce },
      })
    const initializeFor = (signature: Hex, signedDeadline = deadline) =>
      buyer.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'initializeFor',
        args: [merchant.account.address, signedDeadline, signature],
      })

    // Signed by the wrong key, or for a deadline already past.
    await expectCustomError(initializeFor(await sign(0n, buyer)), 'InvalidSignature', [])
    const past = (await harness.latestTimestamp()) - 1n
    await expectCustomError(
      initializeFor(await sign(0n, merchant, past), past),
      'PermitExpired',
      [],
    )

    await mined(initializeFor(await sign(0n)))
    const [registered, nonce] = await Promise.all([
      publicClient.readContract({
        address: addresses.router,
        abi: router,
        functionName: 'authorizedWallets',
        args: [merchant.account.address],
      }),
      publicClient.readContract({
        address: addresses.router,
        abi: router,
        functionName: 'nonces',
        args: [merchant.account.address],
      }),
    ])
    expect(registered).toBe(true)
    expect(nonce).toBe(1n)
    await expectCustomError(initializeFor(await sign(1n)), 'WalletAlreadyAuthorised')
  })

  it('rejects deposits below MIN_DEPOSIT (InvalidAmount) and mints 1:1 on the first deposit', async () => {
    const { merchant, addresses, publicClient } = harness
    await harness.registerAndApprove(merchant)
    const minDeposit = await publicClient.readContract({
      address: addresses.router,
      abi: router,
      functionName: 'MIN_DEPOSIT',
    })
    expect(minDeposit).toBe(usdc(10))
    await expectCustomError(
      merchant.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'deposit',
        args: [minDeposit - 1n, merchant.account.address, 0n],
      }),
      'InvalidAmount',
      [],
    )
    const event = await harness.deposit(merchant, minDeposit)
    expect(event.usdcAmount).toBe(minDeposit)
    expect(event.dvUsdcMinted).toBe(minDeposit)
    expect(
      await publicClient.readContract({
        address: addresses.router,
        abi: router,
        functionName: 'costBasisUSDC',
        args: [merchant.account.address],
      }),
    ).toBe(minDeposit)
  })

  it('reverts SlippageExceeded when fewer shares than minSharesOut would be minted', async () => {
    const { merchant, addresses } = harness
    await harness.registerAndApprove(merchant)
    await expectCustomError(
      merchant.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'deposit',
        args: [usdc(50), merchant.account.address, usdc(50) + 1n],
      }),
      'SlippageExceeded',
      [usdc(50), usdc(50) + 1n],
    )
  })

  it('enforces the TVL cap (TVLCapExceeded), raised at day 31 and removed at day 91', async () => {
    const { merchant, addresses, publicClient, devnet } = harness
    const read = <name extends 'currentTVLCap' | 'DEPLOYMENT_TIME' | 'TVL_CAP_REMOVED'>(
      functionName: name,
    ) => publicClient.readContract({ address: addresses.router, abi: router, functionName })
    await harness.mintUsdc(merchant.account.address, usdc(5_000_000))
    await harness.registerAndApprove(merchant)

    expect(await read('currentTVLCap')).toBe(usdc(500_000))
    expect(await read('TVL_CAP_REMOVED')).toBe(maxUint256)
    const overCap = usdc(500_000) + 1n
    await expectCustomError(
      merchant.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'deposit',
        args: [overCap, merchant.account.address, 0n],
      }),
      'TVLCapExceeded',
      [overCap, usdc(500_000)],
    )
    await harness.deposit(merchant, usdc(400_000))
    await expectCustomError(
      merchant.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'deposit',
        args: [usdc(100_001), merchant.account.address, 0n],
      }),
      'TVLCapExceeded',
      [usdc(100_001), usdc(500_000)],
    )

    // Day 31 starts 30 days after deployment.
    const deployedAt = await read('DEPLOYMENT_TIME')
    const toDay31 = deployedAt + BigInt(30 * day) - (await harness.latestTimestamp())
    await devnet.advanceTime(toDay31)
    expect(await read('currentTVLCap')).toBe(usdc(2_000_000))
    await harness.deposit(merchant, usdc(1_000_000))
    await expectCustomError(
      merchant.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'deposit',
        args: [usdc(700_000), merchant.account.address, 0n],
      }),
      'TVLCapExceeded',
      [usdc(700_000), usdc(2_000_000)],
    )

    const toDay91 = deployedAt + BigInt(90 * day) - (await harness.latestTimestamp())
    await devnet.advanceTime(toDay91)
    expect(await read('currentTVLCap')).toBe(maxUint256)
    const event = await harness.deposit(merchant, usdc(3_000_000))
    expect(event.usdcAmount).toBe(usdc(3_000_000))
  })

  it('pauses deposits (DepositsPausedError) while withdrawals keep working', async () => {
    const { merchant, buyer, deployer, addresses, mined, publicClient } = harness
    await harness.registerAndApprove(merchant)
    const { dvUsdcMinted } = await harness.deposit(merchant, usdc(100))

    await expectCustomError(
      merchant.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'pauseDeposits',
      }),
      'NotEmergencyMultisig',
      [],
    )
    const pauseReceipt = await mined(
      deployer.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'pauseDeposits',
      }),
    )
    expect(
      parseEventLogs({ abi: router, eventName: 'DepositsPaused', logs: pauseReceipt.logs })[0]
        ?.args,
    ).toEqual({ paused: true })
    expect(
      await publicClient.readContract({
        address: addresses.router,
        abi: router,
        functionName: 'depositsPaused',
      }),
    ).toBe(true)

    await expectCustomError(
      merchant.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'deposit',
        args: [usdc(100), merchant.account.address, 0n],
      }),
      'DepositsPausedError',
      [],
    )
    // The pause is checked first, before registration.
    await expectCustomError(
      buyer.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'deposit',
        args: [usdc(1), buyer.account.address, 0n],
      }),
      'DepositsPausedError',
    )

    const usdcBefore = await harness.usdcBalance(merchant.account.address)
    await mined(
      merchant.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'withdraw',
        args: [dvUsdcMinted, merchant.account.address, 0n],
      }),
    )
    expect(await harness.shareBalance(merchant.account.address)).toBe(0n)
    expect(await harness.usdcBalance(merchant.account.address)).toBeGreaterThan(usdcBefore)

    await mined(
      deployer.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'unpauseDeposits',
      }),
    )
    expect((await harness.deposit(merchant, usdc(20))).usdcAmount).toBe(usdc(20))
  })

  it('refuses deposits on a stale oracle (StaleOracle) once observations stop for over 2 hours', async () => {
    const { merchant, deployer, addresses, mined, publicClient, devnet } = harness
    const oracle = VaultOracleArtifact.abi
    await harness.registerAndApprove(merchant)
    expect(
      await publicClient.readContract({
        address: addresses.oracle,
        abi: oracle,
        functionName: 'MAX_STALENESS',
      }),
    ).toBe(7200n)

    // Over 2 hours without an observation is not enough on its own: the deposit records one first.
    await devnet.advanceTime(2 * 3600 + 60)
    expect(
      await publicClient.readContract({
        address: addresses.oracle,
        abi: oracle,
        functionName: 'isFresh',
      }),
    ).toBe(false)
    await harness.deposit(merchant, usdc(10))

    // With recording failing (the devnet knob), the deposit's own attempt is swallowed and the oracle stays stale.
    await mined(
      deployer.writeContract({
        address: addresses.oracle,
        abi: oracle,
        functionName: 'setObservationsPaused',
        args: [true],
      }),
    )
    await expectCustomError(
      merchant.writeContract({
        address: addresses.oracle,
        abi: oracle,
        functionName: 'recordObservation',
      }),
      'ObservationsPaused',
    )
    // Still fresh right after the last observation...
    await harness.deposit(merchant, usdc(10))
    await devnet.advanceTime(2 * 3600 + 1)
    const [lastObservationTime, fresh] = await publicClient.readContract({
      address: addresses.router,
      abi: router,
      functionName: 'oracleStatus',
    })
    expect(fresh).toBe(false)
    expect(
      await publicClient.readContract({
        address: addresses.oracle,
        abi: oracle,
        functionName: 'lastGoodObservationAge',
      }),
    ).toBe((await harness.latestTimestamp()) - lastObservationTime)
    await expectCustomError(
      merchant.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'deposit',
        args: [usdc(10), merchant.account.address, 0n],
      }),
      'StaleOracle',
      [],
    )

    await mined(
      deployer.writeContract({
        address: addresses.oracle,
        abi: oracle,
        functionName: 'setObservationsPaused',
        args: [false],
      }),
    )
    expect((await harness.deposit(merchant, usdc(10))).usdcAmount).toBe(usdc(10))
  })
})
