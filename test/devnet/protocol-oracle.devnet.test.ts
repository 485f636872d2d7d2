import fc from 'fast-check'
import { type Hex, parseEventLogs, type TransactionReceipt } from 'viem'
import { describe, expect, it } from 'vitest'
import {
  MockAavePoolArtifact,
  MockATokenArtifact,
  MockMorphoVaultArtifact,
  Multicall3Artifact,
  TestUSDCArtifact,
  VaultOracleArtifact,
} from '../../src/devnet/artifacts/index.js'
import { defaultVenueSeedUsdc } from '../../src/devnet/deploy.js'
import { multicall3Address } from '../../src/sdk/chains.js'
import {
  isAaveSafe,
  isMorphoSafe,
  OracleModel,
  shareUnit,
  twarWindow,
  type VenueReadings,
} from '../support/oracleModel.js'
import {
  chainHistoryRuns,
  rayPercent,
  usdc,
  useProtocolHarness,
  VAULT_TYPE_AAVE,
  VAULT_TYPE_MORPHO,
} from '../support/protocolHarness.js'

const oracle = VaultOracleArtifact.abi
const hour = 3600n

/** The oracle's state views that the model predicts, read by name. */
const modelledViews = [
  'aaveSpotRate',
  'morphoSpotRate',
  'aaveCumulative',
  'morphoCumulative',
  'lastObservationTime',
  'lastMorphoSharePrice',
  'checkpointCount',
  'lastOptimalVaultType',
] as const

/** What the venues read at one block, with the inputs of both safety checks. */
type Readings = VenueReadings & { aTokenSupply: bigint; aaveIdle: bigint }

/** A change to a venue, made in the same second as the observation that follows it. */
type VenueChange =
  | { kind: 'aaveRate'; rate: bigint }
  | { kind: 'morphoRate'; rate: bigint }
  | { kind: 'morphoLoss'; amount: bigint }
  | { kind: 'morphoGain'; amount: bigint }
  | { kind: 'aaveIdle'; amount: bigint }

/**
 * One step of a scenario: `gap` seconds later, change a venue (optionally), then either record an
 * observation or only mine a block, and compare the oracle with the model at that block.
 */
type Step = { gap: bigint; change?: VenueChange; observe: boolean }

describe('vault protocol: the oracle against its model', () => {
  const harness = useProtocolHarness()

  const safetyOf = (readings: Readings) => ({
    aave: isAaveSafe(readings.aTokenSupply, readings.aaveIdle),
    morpho: isMorphoSafe(readings.morphoSharePrice),
  })

  /** The venues' readings at `blockNumber`, in one multicall. */
  async function readingsAt(blockNumber: bigint): Promise<Readings> {
    const { addresses, publicClient } = harness
    const [time, reserve, morphoSharePrice, aTokenSupply, aaveIdle] = await publicClient.multicall({
      allowFailure: false,
      blockNumber,
      contracts: [
        {
          address: multicall3Address,
          abi: Multicall3Artifact.abi,
          functionName: 'getCurrentBlockTimestamp',
        },
        {
          address: addresses.aavePool,
          abi: MockAavePoolArtifact.abi,
          functionName: 'getReserveData',
          args: [addresses.usdc],
        },
        {
          address: addresses.morphoVault,
          abi: MockMorphoVaultArtifact.abi,
          functionName: 'convertToAssets',
          args: [shareUnit],
        },
        { address: addresses.aToken, abi: MockATokenArtifact.abi, functionName: 'totalSupply' },
        {
          address: addresses.usdc,
          abi: TestUSDCArtifact.abi,
          functionName: 'balanceOf',
          args: [addresses.aToken],
        },
      ],
    })
    return {
      time,
      aaveRate: reserve.currentLiquidityRate,
      morphoSharePrice,
      aTokenSupply,
      aaveIdle,
    }
  }

  /** The oracle's views at `blockNumber` (`getOptimalVault` may revert: then `optimal` holds the error). */
  async function oracleViewsAt(blockNumber: bigint) {
    const at = { address: harness.addresses.oracle, abi: oracle } as const
    const [values, [minDifferentialRay, rates], optimal] = await Promise.all([
      harness.publicClient.multicall({
        allowFailure: false,
        blockNumber,
        contracts: modelledViews.map((functionName) => ({ ...at, functionName })) as never,
      }) as Promise<unknown[]>,
      harness.publicClient.multicall({
        allowFailure: false,
        blockNumber,
        contracts: [
          { ...at, functionName: 'minDifferentialRay' },
          { ...at, functionName: 'getAllRates' },
        ],
      }),
      harness.publicClient
        .readContract({ ...at, functionName: 'getOptimalVault', blockNumber })
        .then(
          ([, vaultType, twarRate]) => ({ vaultType, twarRate }),
          (error: unknown) => ({ error }),
        ),
    ])
    const state = Object.fromEntries(modelledViews.map((name, index) => [name, values[index]]))
    return { state, minDifferentialRay, rates, optimal }
  }

  /** The ring's checkpoints at `blockNumber`, oldest first. */
  async function checkpointsAt(blockNumber: bigint, count: bigint) {
    if (count === 0n) return []
    return harness.publicClient.multicall({
      allowFailure: false,
      blockNumber,
      contracts: Array.from({ length: Number(count) }, (_, index) => ({
        address: harness.addresses.oracle,
        abi: oracle,
        functionName: 'getCheckpoint',
        args: [BigInt(index)],
      })) as never,
    }) as Promise<
      {
        timestamp: bigint
        morphoSharePrice: bigint
        aaveCumulative: bigint
        morphoCumulative: bigint
      }[]
    >
  }

  /** The oracle and its model, kept in step. */
  type Tracked = { model: OracleModel }

  /**
   * Rebuilds the model from the chain's own history: the venues as the oracle's constructor saw them, then
   * every `ObservationRecorded` with the venues as that block left them.
   */
  async function modelFromHistory(): Promise<Tracked & { constructedAt: bigint }> {
    const { publicClient, addresses } = harness
    const logs = await publicClient.getContractEvents({
      address: addresses.oracle,
      abi: oracle,
      eventName: 'ObservationRecorded',
      fromBlock: 'earliest',
    })
    const [firstLog] = logs
    if (!firstLog) throw new Error('the devnet recorded no observation when it was deployed')
    // The block that created the oracle: the last one, going back, with its code.
    let constructedAt = firstLog.blockNumber
    while (
      (await publicClient.getCode({
        address: addresses.oracle,
        blockNumber: constructedAt - 1n,
      })) !== undefined
    ) {
      constructedAt -= 1n
    }
    const tracked: Tracked = {
      model: new OracleModel(await readingsAt(constructedAt)),
    }
    for (const log of logs) {
      const readings = await readingsAt(log.blockNumber)
      expect(tracked.model.record(readings)).toBe(true)
    }
    return { ...tracked, constructedAt }
  }

  /** Compares every view of the oracle at `blockNumber` with the model. */
  async function expectOracleMatchesModel(
    tracked: Tracked,
    blockNumber: bigint,
    options: { allCheckpoints?: boolean } = {},
  ) {
    const { model } = tracked
    const [readings, views] = await Promise.all([
      readingsAt(blockNumber),
      oracleViewsAt(blockNumber),
    ])
    const now = readings.time
    const context = `block ${blockNumber} at ${now}`
    expect(views.state, context).toEqual({
      aaveSpotRate: model.aaveSpotRate,
      morphoSpotRate: model.morphoSpotRate,
      aaveCumulative: model.aaveCumulative,
      morphoCumulative: model.morphoCumulative,
      lastObservationTime: model.lastObservationTime,
      lastMorphoSharePrice: model.lastMorphoSharePrice,
      checkpointCount: BigInt(model.checkpoints.length),
      // Set to Aave by the constructor and never written by an observation.
      lastOptimalVaultType: VAULT_TYPE_AAVE,
    })
    const twar = model.twar(now)
    const safety = safetyOf(readings)
    expect(views.rates, context).toEqual([
      {
        vault: harness.addresses.aavePool,
        vaultType: VAULT_TYPE_AAVE,
        spotRate: model.aaveSpotRate,
        twarRate: twar.aave,
        isSafe: safety.aave,
      },
      {
        vault: harness.addresses.morphoVault,
        vaultType: VAULT_TYPE_MORPHO,
        spotRate: model.morphoSpotRate,
        twarRate: twar.morpho,
        isSafe: safety.morpho,
      },
    ])
    const selected = model.select(now, safety, views.minDifferentialRay)
    if (selected) expect(views.optimal, context).toEqual(selected)
    else expect(views.optimal, context).toHaveProperty('error')

    const checkpoints = options.allCheckpoints
      ? await checkpointsAt(blockNumber, BigInt(model.checkpoints.length))
      : (await checkpointsAt(blockNumber, BigInt(model.checkpoints.length))).slice(-1)
    expect(checkpoints, context).toEqual(model.checkpoints.slice(-checkpoints.length))
    return { readings, views, twar, selected }
  }

  /** Sends `send()` in a block at exactly `timestamp`. */
  async function at(timestamp: bigint, send: () => Promise<Hex>): Promise<TransactionReceipt> {
    await harness.testClient.setNextBlockTimestamp({ timestamp })
    return harness.mined(send())
  }

  const recordObservationCall = () =>
    harness.merchant.writeContract({
      address: harness.addresses.oracle,
      abi: oracle,
      functionName: 'recordObservation',
    })

  async function applyChange(change: VenueChange, timestamp: bigint) {
    await harness.testClient.setNextBlockTimestamp({ timestamp })
    switch (change.kind) {
      case 'aaveRate':
        return harness.aaveKnob('setLiquidityRate', change.rate)
      case 'morphoRate':
        return harness.morphoKnob('setRateRay', change.rate)
      case 'morphoLoss':
        return harness.morphoKnob('simulateLoss', change.amount)
      case 'morphoGain':
        // A donation: the vault's USDC rises, and with it the share price.
        return harness.mintUsdc(harness.addresses.morphoVault, change.amount)
      case 'aaveIdle':
        return harness.aaveKnob('setIdleLiquidity', change.amount)
    }
  }

  /**
   * Runs `steps` from the latest block's time, keeping the model in step, and compares the oracle with it
   * after each one.
   */
  async function runSteps(tracked: Tracked, steps: Step[]) {
    let time = await harness.latestTimestamp()
    for (const step of steps) {
      time += step.gap
      if (step.change) await applyChange(step.change, time)
      let blockNumber: bigint
      if (step.observe) {
        const receipt = await at(time, recordObservationCall)
        blockNumber = receipt.blockNumber
        const readings = await readingsAt(blockNumber)
        const recorded = tracked.model.record(readings)
        const events = parseEventLogs({
          abi: oracle,
          eventName: 'ObservationRecorded',
          logs: receipt.logs,
        })
        if (recorded) {
          expect(events.map((event) => event.args)).toEqual([
            {
              timestamp: time,
              aaveRate: tracked.model.aaveSpotRate,
              morphoRate: tracked.model.morphoSpotRate,
            },
          ])
        } else {
          expect(events).toEqual([])
        }
      } else {
        blockNumber = await harness.mineAt(time)
      }
      await expectOracleMatchesModel(tracked, blockNumber)
    }
  }

  it('is built and seeded like the live deployment: first observation 5 minutes after construction', async () => {
    const { publicClient, addresses } = harness
    const tracked = await modelFromHistory()
    const [seed] = await publicClient.getContractEvents({
      address: addresses.oracle,
      abi: oracle,
      eventName: 'ObservationRecorded',
      fromBlock: 'earliest',
    })
    if (!seed) throw new Error('no seed observation')
    const constructed = await readingsAt(tracked.constructedAt)
    const seeded = await readingsAt(seed.blockNumber)
    // The venues already held the deployer's liquidity when the oracle was built.
    expect(constructed.aaveIdle).toBe(defaultVenueSeedUsdc)
    // The aToken's supply is its scaled supply times the liquidity index, rounded as Aave rounds: when
    // the deployment takes long enough for the index to move (a loaded machine), it can read one base
    // unit under what was supplied.
    expect(constructed.aTokenSupply).toBeGreaterThanOrEqual(defaultVenueSeedUsdc - 1n)
    expect(
      await harness.readMorpho('totalAssets', undefined, tracked.constructedAt),
    ).toBeGreaterThanOrEqual(defaultVenueSeedUsdc)
    // 5 minutes of chain time, plus the second or two the deployment itself takes.
    expect(seeded.time - constructed.time).toBeGreaterThanOrEqual(300n)
    expect(seeded.time - constructed.time).toBeLessThan(310n)
    // Right after construction: Aave's rate as the spot, Morpho's spot 0, Morpho's price as the baseline.
    const built = await oracleViewsAt(tracked.constructedAt)
    expect(built.state).toEqual({
      aaveSpotRate: constructed.aaveRate,
      morphoSpotRate: 0n,
      aaveCumulative: 0n,
      morphoCumulative: 0n,
      lastObservationTime: constructed.time,
      lastMorphoSharePrice: constructed.morphoSharePrice,
      checkpointCount: 0n,
      lastOptimalVaultType: 0,
    })
    expect(built.rates.map((rate) => [rate.spotRate, rate.twarRate])).toEqual([
      [constructed.aaveRate, constructed.aaveRate],
      [0n, 0n],
    ])
    // The seed measured Morpho's rate from its share price's rise over those 5 minutes: about 4.5 %.
    expect(tracked.model.morphoSpotRate).toBeGreaterThan(rayPercent(4.4))
    expect(tracked.model.morphoSpotRate).toBeLessThan(rayPercent(4.6))
    await expectOracleMatchesModel(tracked, seed.blockNumber, { allCheckpoints: true })
    await expectOracleMatchesModel(tracked, await harness.latestBlockNumber())
  })

  it('follows the model over more than 48 observations, gaps over 4 hours, and a Morpho price that falls and recovers', async () => {
    const tracked = await modelFromHistory()
    const minutes = (n: number) => BigInt(n * 60)
    await runSteps(tracked, [
      ...Array.from({ length: 6 }, () => ({ gap: minutes(30), observe: true })),
      // Within 5 minutes of the last observation: a no-op. At 5 minutes: recorded.
      { gap: 299n, observe: true },
      { gap: 1n, observe: true },
      { gap: 1n, change: { kind: 'aaveRate', rate: rayPercent(5.25) }, observe: false },
      // A gap longer than the window: the TWAR runs from the newest checkpoint older than 4 hours.
      { gap: 5n * hour, observe: false },
      { gap: 1n * hour, observe: true },
      { gap: 9n * hour, change: { kind: 'aaveRate', rate: rayPercent(2) }, observe: true },
      { gap: 2n * hour, observe: false },
    ])

    // The Morpho price falls: spot 0, the baseline stays; still below it an hour later: still 0.
    const baseline = tracked.model.lastMorphoSharePrice
    await runSteps(tracked, [
      { gap: minutes(20), change: { kind: 'morphoLoss', amount: usdc(2_000) }, observe: true },
      { gap: 1n * hour, observe: true },
    ])
    expect(tracked.model.checkpoints.at(-1)?.morphoSharePrice).toBeLessThan(baseline)
    expect(tracked.model.morphoSpotRate).toBe(0n)
    expect(tracked.model.lastMorphoSharePrice).toBe(baseline)

    // It recovers past the old baseline: measured from the baseline, over the last interval only.
    await runSteps(tracked, [
      { gap: minutes(10), observe: false },
      { gap: minutes(40), change: { kind: 'morphoGain', amount: usdc(2_500) }, observe: true },
    ])
    expect(tracked.model.morphoSpotRate).toBeGreaterThan(0n)
    expect(tracked.model.lastMorphoSharePrice).toBeGreaterThan(baseline)

    // Enough observations, at varied gaps and Aave rates, to go round the ring of 48.
    await runSteps(
      tracked,
      Array.from({ length: 41 }, (_, index) => ({
        gap: minutes(index % 7 === 0 ? 300 : 15 + index),
        ...(index % 5 === 0
          ? { change: { kind: 'aaveRate', rate: rayPercent(3 + (index % 4)) } as const }
          : {}),
        observe: true,
      })),
    )
    // The ring wrapped: it holds the last 48 of more than 48 observations.
    expect(tracked.model.observations).toBeGreaterThan(48)
    expect(tracked.model.checkpoints).toHaveLength(48)
    await expectOracleMatchesModel(tracked, await harness.latestBlockNumber(), {
      allCheckpoints: true,
    })
  })

  it('follows the model on random venue changes and observation gaps (fast-check)', async () => {
    const rate = fc.bigInt({ min: 0n, max: rayPercent(20) })
    const amount = fc.bigInt({ min: usdc(1), max: usdc(20_000) })
    const change: fc.Arbitrary<VenueChange> = fc.oneof(
      fc.record({ kind: fc.constant('aaveRate' as const), rate }),
      fc.record({ kind: fc.constant('morphoRate' as const), rate }),
      fc.record({ kind: fc.constant('morphoLoss' as const), amount }),
      fc.record({ kind: fc.constant('morphoGain' as const), amount }),
      fc.record({
        kind: fc.constant('aaveIdle' as const),
        amount: fc.bigInt({ min: 0n, max: usdc(300_000) }),
      }),
    )
    // Every step observes once at least 5 minutes after the last; some also try too early first.
    const step = fc.record({
      early: fc.option(fc.bigInt({ min: 1n, max: 299n }), { freq: 4 }),
      gap: fc.oneof(
        { weight: 6, arbitrary: fc.bigInt({ min: 300n, max: 3600n }) },
        { weight: 2, arbitrary: fc.bigInt({ min: 3600n, max: 4n * hour }) },
        { weight: 1, arbitrary: fc.bigInt({ min: 4n * hour + 1n, max: 30n * hour }) },
      ),
      change: fc.option(change, { freq: 2 }),
    })
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 50, maxLength: 56 }), async (generated) => {
        const snapshot = await harness.snapshot()
        try {
          const tracked = await modelFromHistory()
          // An early attempt `early` seconds after the last observation, then the real one `gap` after it.
          const steps: Step[] = generated.flatMap(({ early, gap, change }) => [
            ...(early === null ? [] : [{ gap: early, observe: true }]),
            { gap: gap - (early ?? 0n), observe: true, ...(change ? { change } : {}) },
          ])
          await runSteps(tracked, steps)
          expect(tracked.model.observations).toBeGreaterThan(48)
        } finally {
          await harness.revert(snapshot)
        }
      }),
      { ...chainHistoryRuns, numRuns: 2 },
    )
  })

  it('switches the route to Aave within hours of its rate rising above Morpho’s', async () => {
    await harness.settleRates()
    const tracked = await modelFromHistory()
    expect((await harness.readOracle('getOptimalVault'))[1]).toBe(VAULT_TYPE_MORPHO)
    const changedAt = (await harness.latestTimestamp()) + 60n
    const steps: Step[] = [
      { gap: 60n, change: { kind: 'aaveRate', rate: rayPercent(6) }, observe: false },
      // A keeper (or the deposits themselves) observes every 30 minutes.
      ...Array.from({ length: 16 }, () => ({ gap: 1800n, observe: true })),
    ]
    let switchedAt: bigint | undefined
    let time = changedAt - 60n
    for (const step of steps) {
      await runSteps(tracked, [step])
      time += step.gap
      const [, vaultType] = await harness.readOracle('getOptimalVault')
      if (vaultType === VAULT_TYPE_AAVE && switchedAt === undefined) switchedAt = time
    }
    if (switchedAt === undefined) throw new Error('the route never switched to Aave')
    // Not at once (the TWAR still remembers Morpho's lead), but well within the 4-hour window.
    expect(switchedAt - changedAt).toBeGreaterThan(1800n)
    expect(switchedAt - changedAt).toBeLessThanOrEqual(4n * hour)
  })

  it('selects Morpho when its TWAR beats Aave’s by exactly minDifferentialRay, and Aave at one ray less', async () => {
    const start = (await harness.latestTimestamp()) + 10n
    const queryAt = start + 300n + 2n * twarWindow + 600n
    /** Aave at `aaveRate` from `start`, three observations as `settleRates` makes them, a query 10 minutes on. */
    const scenario = async (aaveRate: bigint) => {
      const snapshot = await harness.snapshot()
      try {
        await applyChange({ kind: 'aaveRate', rate: aaveRate }, start)
        for (const observedAt of [
          start + 300n,
          start + 300n + twarWindow,
          start + 300n + 2n * twarWindow,
        ]) {
          await at(observedAt, recordObservationCall)
        }
        await harness.mineAt(queryAt)
        const [aave, morpho] = await harness.readOracle('getAllRates')
        const [, vaultType] = await harness.readOracle('getOptimalVault')
        return { aaveTwar: aave?.twarRate, morphoTwar: morpho?.twarRate ?? 0n, vaultType }
      } finally {
        await harness.revert(snapshot)
      }
    }
    const minDifferential = await harness.readOracle('minDifferentialRay')
    // The Morpho TWAR does not depend on Aave's rate: measure it once, then place Aave's exactly below it.
    const { morphoTwar } = await scenario(rayPercent(3.5))
    expect(await scenario(morphoTwar - minDifferential)).toEqual({
      aaveTwar: morphoTwar - minDifferential,
      morphoTwar,
      vaultType: VAULT_TYPE_MORPHO,
    })
    expect(await scenario(morphoTwar - minDifferential + 1n)).toEqual({
      aaveTwar: morphoTwar - minDifferential + 1n,
      morphoTwar,
      vaultType: VAULT_TYPE_AAVE,
    })
  })

  it('wraps the TWAR difference in uint224 when the cumulative sums pass 2^224', async () => {
    const { publicClient, testClient, addresses } = harness
    // Find aaveCumulative's storage slot by its value, after making that value unmistakable.
    await harness.settleRates()
    const value = await harness.readOracle('aaveCumulative')
    const slots = await Promise.all(
      Array.from({ length: 16 }, (_, slot) =>
        publicClient.getStorageAt({ address: addresses.oracle, slot: numberToSlot(slot) }),
      ),
    )
    const matches = slots.flatMap((word, slot) => (word && BigInt(word) === value ? [slot] : []))
    expect(matches).toHaveLength(1)
    const slot = numberToSlot(matches[0] as number)
    // 5 hours short of 2^224 at the current Aave rate, so the sum passes 2^224 within the window.
    const nearWrap = (1n << 224n) - (await harness.readOracle('aaveSpotRate')) * 5n * hour
    await testClient.setStorageAt({
      address: addresses.oracle,
      index: slot,
      value: numberToSlot(nearWrap),
    })
    expect(await harness.readOracle('aaveCumulative')).toBe(nearWrap)

    // The model starts from the oracle's state, with the cumulative sum moved by the same amount.
    const tracked = await modelFromHistory()
    tracked.model.aaveCumulative = nearWrap
    const steps: Step[] = Array.from({ length: 12 }, () => ({ gap: 3600n, observe: true }))
    await runSteps(tracked, steps)
    expect(tracked.model.aaveCumulative).toBeGreaterThan(1n << 224n)
    const { twar } = await expectOracleMatchesModel(tracked, await harness.latestBlockNumber(), {
      allCheckpoints: true,
    })
    expect(twar.aave).toBe(await harness.readOracle('aaveSpotRate'))
  })
})

/** A storage word (32-byte hex) holding `value`. */
function numberToSlot(value: number | bigint): Hex {
  return `0x${BigInt(value).toString(16).padStart(64, '0')}`
}
