import { type Hex, parseSignature } from 'viem'
import { describe, expect, it } from 'vitest'
import {
  MockMorphoVaultArtifact,
  TestUSDCArtifact,
  VaultOracleArtifact,
  VaultRouterArtifact,
} from '../../src/devnet/artifacts/index.js'
import {
  expectCustomError,
  expectForeignError,
  expectRevertReason,
  type ProtocolHarness,
  usdc,
  useProtocolHarness,
} from '../support/protocolHarness.js'

const router = VaultRouterArtifact.abi

/**
 * Each test makes two of the deposit's checks fail at once and asserts which error wins, in the live
 * router's order (modifiers, amount, TVL cap, pull, oracle freshness, oracle choice, route).
 */
describe('vault protocol: the order of a deposit’s checks', () => {
  const harness = useProtocolHarness((h) => h.registerAndApprove(h.merchant))

  type Wallet = ProtocolHarness['merchant']

  /** `caller` deposits `amount` for `wallet` (itself by default). */
  const deposit = (amount: bigint, caller: Wallet = harness.merchant, wallet = caller) =>
    harness.depositCall(caller, amount, { forWallet: wallet.account.address })
  /** `depositWithPermit` with a permit signed by `wallet` for the router, or a junk signature. */
  const depositWithPermit = async (
    amount: bigint,
    deadline: bigint,
    options: { wallet?: Wallet; caller?: Wallet; validSignature?: boolean } = {},
  ) => {
    const wallet = options.wallet ?? harness.merchant
    const caller = options.caller ?? wallet
    const signature: Hex =
      options.validSignature === false
        ? `0x${'11'.repeat(64)}1b`
        : await harness.signUsdcPermit(wallet, {
            spender: harness.addresses.router,
            value: amount,
            nonce: 0n,
            deadline,
          })
    const { r, s, v } = parseSignature(signature)
    return caller.writeContract({
      address: harness.addresses.router,
      abi: router,
      functionName: 'depositWithPermit',
      args: [amount, wallet.account.address, deadline, Number(v), r, s, 0n],
    })
  }
  const pauseDeposits = () =>
    harness.mined(
      harness.deployer.writeContract({
        address: harness.addresses.router,
        abi: router,
        functionName: 'pauseDeposits',
      }),
    )
  /** Stops observations (the devnet knob) and lets the oracle go stale. */
  const makeOracleStale = async () => {
    await harness.mined(
      harness.deployer.writeContract({
        address: harness.addresses.oracle,
        abi: VaultOracleArtifact.abi,
        functionName: 'setObservationsPaused',
        args: [true],
      }),
    )
    await harness.devnet.advanceTime(7200 + 1)
  }
  /** Neither venue safe: Morpho below peg, Aave with no idle USDC. */
  const makeNoVenueSafe = async () => {
    await harness.morphoKnob('simulateLoss', usdc(1))
    await harness.aaveKnob('setIdleLiquidity', 0n)
  }
  const setAllowance = (wallet: Wallet, amount: bigint) =>
    harness.mined(
      wallet.writeContract({
        address: harness.addresses.usdc,
        abi: TestUSDCArtifact.abi,
        functionName: 'approve',
        args: [harness.addresses.router, amount],
      }),
    )

  it('paused before unregistered (DepositsPausedError)', async () => {
    await pauseDeposits()
    await expectCustomError(deposit(usdc(100), harness.buyer), 'DepositsPausedError', [])
  })

  it('unregistered, or a caller that is not the wallet’s operator, before below minimum (NotAuthorised)', async () => {
    await expectCustomError(deposit(1n, harness.buyer), 'NotAuthorised', [])
    await expectCustomError(deposit(1n, harness.buyer, harness.merchant), 'NotAuthorised', [])
  })

  it('below minimum before the TVL cap (InvalidAmount)', async () => {
    const { merchant } = harness
    await harness.mintUsdc(merchant.account.address, usdc(500_000))
    await harness.deposit(merchant, usdc(499_995))
    const cap = await harness.readRouter('currentTVLCap')
    // 9.999999 USDC is below the minimum and would also break the cap; 10 USDC breaks the cap alone.
    expect((await harness.readRouter('totalVaultAssets')) + usdc(10) - 1n).toBeGreaterThan(cap)
    await expectCustomError(deposit(usdc(10) - 1n), 'InvalidAmount', [])
    await expectCustomError(deposit(usdc(10)), 'TVLCapExceeded', [usdc(10), cap])
  })

  it('the TVL cap before a missing balance (TVLCapExceeded)', async () => {
    const overCap = usdc(500_000) + 1n
    // The merchant holds 1,000 USDC.
    await expectCustomError(deposit(overCap), 'TVLCapExceeded', [overCap, usdc(500_000)])
  })

  it('a missing allowance before a missing balance: the token’s own reason strings', async () => {
    const { merchant } = harness
    const tooMuch = (await harness.usdcBalance(merchant.account.address)) + 1n
    await setAllowance(merchant, 0n)
    await expectRevertReason(deposit(tooMuch), 'ERC20: transfer amount exceeds allowance')
    await setAllowance(merchant, tooMuch)
    await expectRevertReason(deposit(tooMuch), 'ERC20: transfer amount exceeds balance')
  })

  it('the pull before a stale oracle (the token’s error)', async () => {
    const { merchant } = harness
    await makeOracleStale()
    const tooMuch = (await harness.usdcBalance(merchant.account.address)) + 1n
    await expectRevertReason(deposit(tooMuch), 'ERC20: transfer amount exceeds balance')
    await expectCustomError(deposit(usdc(100)), 'StaleOracle', [])
  })

  it('a stale oracle before no safe venue (StaleOracle), and before a reverting Morpho view', async () => {
    await makeOracleStale()
    await makeNoVenueSafe()
    await expectCustomError(deposit(usdc(100)), 'StaleOracle', [])
    await harness.morphoKnob('setConvertToAssetsReverts', true)
    await expectCustomError(deposit(usdc(100)), 'StaleOracle', [])
  })

  it('no safe venue before the route’s capacity checks (NoSafeVault, not NoSafeRoute)', async () => {
    await makeNoVenueSafe()
    await harness.aaveKnob('setConfigurationReverts', true)
    await harness.morphoKnob('setMaxDepositReverts', true)
    await expectForeignError(deposit(usdc(100)), VaultOracleArtifact.abi, 'NoSafeVault', [])
    // With a safe venue again, the capacity checks decide.
    await harness.aaveKnob('setIdleLiquidity', usdc(1_000_000))
    await expectCustomError(deposit(usdc(100)), 'NoSafeRoute', [usdc(100)])
  })

  it('the raw Morpho error from the oracle before the route (ConvertToAssetsDisabled)', async () => {
    await harness.morphoKnob('setConvertToAssetsReverts', true)
    await harness.aaveKnob('setConfigurationReverts', true)
    await expectForeignError(
      deposit(usdc(100)),
      MockMorphoVaultArtifact.abi,
      'ConvertToAssetsDisabled',
      [],
    )
  })

  it('depositWithPermit: the modifiers before an expired deadline', async () => {
    const past = (await harness.latestTimestamp()) - 1n
    await expectCustomError(
      depositWithPermit(usdc(100), past, { wallet: harness.buyer }),
      'NotAuthorised',
      [],
    )
    await pauseDeposits()
    await expectCustomError(depositWithPermit(usdc(100), past), 'DepositsPausedError', [])
  })

  it('depositWithPermit: an expired deadline before a missing allowance, which comes before the amount', async () => {
    const { merchant } = harness
    await setAllowance(merchant, 0n)
    const past = (await harness.latestTimestamp()) - 1n
    await expectCustomError(depositWithPermit(usdc(100), past), 'PermitExpired', [])
    // In time, but the permit fails (swallowed): the allowance check names the shortfall, even below the minimum.
    const deadline = (await harness.latestTimestamp()) + 3600n
    await expectCustomError(
      depositWithPermit(usdc(100), deadline, { validSignature: false }),
      'InsufficientPermitAllowance',
      [0n, usdc(100)],
    )
    await expectCustomError(
      depositWithPermit(1n, deadline, { validSignature: false }),
      'InsufficientPermitAllowance',
      [0n, 1n],
    )
    // A valid permit gives the allowance; then the deposit's own checks run.
    await expectCustomError(depositWithPermit(1n, deadline), 'InvalidAmount', [])
  })
})
