import {
  type Address,
  concat,
  type Hex,
  hexToBigInt,
  maxUint256,
  numberToHex,
  parseEventLogs,
  parseSignature,
  slice,
  zeroAddress,
} from 'viem'
import { describe, expect, it } from 'vitest'
import {
  MockAavePoolArtifact,
  TestUSDCArtifact,
  VaultOracleArtifact,
  VaultRouterArtifact,
} from '../../src/devnet/artifacts/index.js'
import { assetsToShares } from '../../src/sdk/internal/shareMath.js'
import {
  eventArgs,
  expectCustomError,
  type ProtocolHarness,
  usdc,
  useProtocolHarness,
} from '../support/protocolHarness.js'

const router = VaultRouterArtifact.abi
const day = 24 * 3600

/** Runtime code answering every call with ERC-1271's magic value `isValidSignature.selector`. */
const approveEverySignatureBytecode = '0x631626ba7e60e01b60005260206000f3'
const secp256k1Order = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n

describe('vault protocol: registration and deposit rules', () => {
  const harness = useProtocolHarness()

  /** `signer`'s EIP-712 InitializeFor signature registering `wallet` (the signer itself by default). */
  const signInitializeFor = (
    wallet: ProtocolHarness['merchant'],
    nonce: bigint,
    deadline: bigint,
    signer = wallet,
  ) =>
    signer.signTypedData({
      domain: {
        name: 'DivigentVaultRouter',
        version: '1',
        chainId: harness.devnet.chainId,
        verifyingContract: harness.addresses.router,
      },
      types: {
        InitializeFor: [
          { name: 'wallet', type: 'address' },
          { name: 'deadline', type: 'uint256' },
          { name: 'nonce', type: 'uint256' },
        ],
      },
      primaryType: 'InitializeFor',
      message: { wallet: wallet.account.address, deadline, nonce },
    })
  /** `initializeFor` relayed by the facilitator account, which pays the gas. */
  const initializeFor = (wallet: Address, deadline: bigint, signature: Hex) =>
    harness.facilitator.writeContract({
      address: harness.addresses.router,
      abi: router,
      functionName: 'initializeFor',
      args: [wallet, deadline, signature],
    })

  it('requires registration and the wallet or its operator as caller (NotAuthorised)', async () => {
    const { merchant, buyer, addresses, mined, publicClient } = harness
    await expectCustomError(harness.depositCall(merchant, usdc(100)), 'NotAuthorised', [])

    await harness.registerAndApprove(merchant)
    // A registered wallet, but the caller is neither the wallet nor its operator.
    await expectCustomError(
      harness.depositCall(buyer, usdc(100), { forWallet: merchant.account.address }),
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
    await mined(harness.depositCall(buyer, usdc(100), { forWallet: merchant.account.address }))
    expect(await harness.usdcBalance(merchant.account.address)).toBe(merchantUsdcBefore - usdc(100))
    expect(await harness.usdcBalance(buyer.account.address)).toBe(buyerUsdcBefore)
    expect(await harness.shareBalance(merchant.account.address)).toBe(usdc(100))
    expect(await harness.shareBalance(buyer.account.address)).toBe(0n)
  })

  it('registers once with initialize (WalletAuthorised, then WalletAlreadyAuthorised)', async () => {
    const { merchant, addresses, mined, publicClient } = harness
    const receipt = await mined(harness.initializeCall(merchant))
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
    await expectCustomError(harness.initializeCall(merchant), 'WalletAlreadyAuthorised', [])
  })

  it('registers a wallet from its EIP-712 InitializeFor signature, relayed up to its deadline', async () => {
    const { merchant, buyer, mined, testClient } = harness
    const wallet = merchant.account.address
    const deadline = (await harness.latestTimestamp()) + 3600n
    const signature = await signInitializeFor(merchant, 0n, deadline)
    await expectCustomError(
      initializeFor(wallet, deadline, await signInitializeFor(merchant, 0n, deadline, buyer)),
      'InvalidSignature',
      [],
    )
    // The deadline's own second is still in time.
    await testClient.setNextBlockTimestamp({ timestamp: deadline })
    const receipt = await mined(initializeFor(wallet, deadline, signature))
    expect(eventArgs(router, 'WalletAuthorised', receipt.logs)).toEqual({ wallet })
    expect(await harness.readRouter('authorizedWallets', [wallet])).toBe(true)
    expect(await harness.readRouter('nonces', [wallet])).toBe(1n)
  })

  it('checks initializeFor in the live order: deadline, then registration, then the signature (§4.6)', async () => {
    const { merchant, buyer, mined } = harness
    const wallet = merchant.account.address
    const now = await harness.latestTimestamp()
    const deadline = now + 3600n
    const forged = await signInitializeFor(merchant, 0n, deadline, buyer)
    // Expired and badly signed: the deadline wins.
    const past = now - 1n
    await expectCustomError(
      initializeFor(wallet, past, await signInitializeFor(merchant, 0n, past, buyer)),
      'PermitExpired',
      [],
    )
    await mined(harness.initializeCall(merchant))
    // Registered, expired and badly signed: still the deadline; registered and badly signed: registration.
    await expectCustomError(
      initializeFor(wallet, past, await signInitializeFor(merchant, 0n, past, buyer)),
      'PermitExpired',
      [],
    )
    await expectCustomError(initializeFor(wallet, deadline, forged), 'WalletAlreadyAuthorised', [])
  })

  it('recovers initializeFor signatures with plain ECDSA: OpenZeppelin errors, no ERC-1271', async () => {
    const { merchant, buyer, testClient } = harness
    const wallet = merchant.account.address
    const deadline = (await harness.latestTimestamp()) + 3600n
    const signature = await signInitializeFor(merchant, 0n, deadline)
    const { r, s, yParity } = parseSignature(signature)

    await expectCustomError(
      initializeFor(wallet, deadline, slice(signature, 0, 64)),
      'ECDSAInvalidSignatureLength',
      [64n],
    )
    // The same signature with the high s value (n - s) is malleable; OpenZeppelin refuses it.
    const highS = numberToHex(secp256k1Order - hexToBigInt(s), { size: 32 })
    await expectCustomError(
      initializeFor(
        wallet,
        deadline,
        concat([r, highS, numberToHex(28 - (yParity ?? 0), { size: 1 })]),
      ),
      'ECDSAInvalidSignatureS',
      [highS],
    )
    await expectCustomError(
      initializeFor(wallet, deadline, concat([r, s, numberToHex(29, { size: 1 })])),
      'ECDSAInvalidSignature',
      [],
    )

    // A smart wallet that approves every signature through ERC-1271 is still refused.
    const smartWallet = buyer.account.address
    await testClient.setCode({ address: smartWallet, bytecode: approveEverySignatureBytecode })
    await expectCustomError(
      initializeFor(smartWallet, deadline, await signInitializeFor(buyer, 0n, deadline, merchant)),
      'InvalidSignature',
      [],
    )
  })

  it('lets only a registered wallet set operators (NotAuthorised before ZeroAddress)', async () => {
    const { merchant, buyer, addresses, mined } = harness
    const setOperator = (operator: Address) =>
      merchant.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'setOperator',
        args: [operator, true],
      })
    await expectCustomError(setOperator(buyer.account.address), 'NotAuthorised', [])
    await expectCustomError(setOperator(zeroAddress), 'NotAuthorised', [])
    await mined(harness.initializeCall(merchant))
    await expectCustomError(setOperator(zeroAddress), 'ZeroAddress', [])
    await mined(setOperator(buyer.account.address))
    expect(
      await harness.readRouter('isOperator', [merchant.account.address, buyer.account.address]),
    ).toBe(true)
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
    await expectCustomError(harness.depositCall(merchant, minDeposit - 1n), 'InvalidAmount', [])
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
    const { merchant } = harness
    await harness.registerAndApprove(merchant)
    await expectCustomError(
      harness.depositCall(merchant, usdc(50), { minSharesOut: usdc(50) + 1n }),
      'SlippageExceeded',
      [usdc(50), usdc(50) + 1n],
    )
  })

  it('reverts ZeroAmount when a deposit would mint no shares', async () => {
    const { merchant, deployer, addresses, devnet } = harness
    await harness.registerAndApprove(merchant)
    // After day 91 there is no cap. Someone supplies 20M USDC to Aave on the router's behalf: the router holds
    // that much aUSDC while no dvUSDC exists, so 10 USDC is worth less than one share.
    await devnet.advanceTime(91 * day)
    const donation = usdc(20_000_000)
    await harness.mintUsdc(deployer.account.address, donation)
    await harness.mined(
      deployer.writeContract({
        address: addresses.usdc,
        abi: TestUSDCArtifact.abi,
        functionName: 'approve',
        args: [addresses.aavePool, donation],
      }),
    )
    await harness.mined(
      deployer.writeContract({
        address: addresses.aavePool,
        abi: MockAavePoolArtifact.abi,
        functionName: 'supply',
        args: [addresses.usdc, donation, addresses.router, 0],
      }),
    )
    await harness.recordObservation()
    await harness.holdClock()
    const vault = await harness.vaultTotals()
    expect(assetsToShares(usdc(10), vault)).toBe(0n)
    await expectCustomError(harness.depositCall(merchant, usdc(10)), 'ZeroAmount', [])
  })

  it('steps the TVL cap exactly at DEPLOYMENT_TIME + 31 days and + 91 days (TVLCapExceeded)', async () => {
    const { merchant, testClient } = harness
    await harness.mintUsdc(merchant.account.address, usdc(5_000_000))
    await harness.registerAndApprove(merchant)
    const [deployedAt, day31, day91, initialCap, day31Cap, removed] = await Promise.all([
      harness.readRouter('DEPLOYMENT_TIME'),
      harness.readRouter('DAY_31_OFFSET'),
      harness.readRouter('DAY_91_OFFSET'),
      harness.readRouter('TVL_CAP_INITIAL'),
      harness.readRouter('TVL_CAP_DAY_31'),
      harness.readRouter('TVL_CAP_REMOVED'),
    ])
    expect([day31, day91]).toEqual([BigInt(31 * day), BigInt(91 * day)])
    expect([initialCap, day31Cap, removed]).toEqual([usdc(500_000), usdc(2_000_000), maxUint256])
    expect(await harness.readRouter('currentTVLCap')).toBe(initialCap)

    const depositAt = (timestamp: bigint, amount: bigint) =>
      testClient
        .setNextBlockTimestamp({ timestamp })
        .then(() => harness.depositCall(merchant, amount))
    /** One second before `offset`: the old cap holds, in the view and in a deposit; at `offset` the new one. */
    const crossStep = async (offset: bigint, oldCap: bigint, newCap: bigint) => {
      const step = deployedAt + offset
      await harness.mineAt(step - 1n)
      expect(await harness.readRouter('currentTVLCap')).toBe(oldCap)
      const overOldCap = oldCap - (await harness.readRouter('totalVaultAssets')) + 1n
      await expectCustomError(depositAt(step - 1n, overOldCap), 'TVLCapExceeded', [
        overOldCap,
        oldCap,
      ])
      const receipt = await harness.mined(depositAt(step, overOldCap))
      expect(await harness.readRouter('currentTVLCap', undefined, receipt.blockNumber)).toBe(newCap)
    }
    await crossStep(day31, initialCap, day31Cap)
    await crossStep(day91, day31Cap, removed)
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

    await expectCustomError(harness.depositCall(merchant, usdc(100)), 'DepositsPausedError', [])
    // The pause is checked first, before registration.
    await expectCustomError(harness.depositCall(buyer, usdc(1)), 'DepositsPausedError')

    const usdcBefore = await harness.usdcBalance(merchant.account.address)
    await mined(harness.withdrawCall(merchant, dvUsdcMinted))
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
    await expectCustomError(harness.depositCall(merchant, usdc(10)), 'StaleOracle', [])

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
