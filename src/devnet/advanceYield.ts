import { type Address, type Hex, numberToHex, type PublicClient, type TestClient } from 'viem'
import type { VaultAddresses } from '../index.js'
import { devnetAbis } from './devnetAbis.js'
import { DevnetError } from './errors.js'

const uint40Mask = (1n << 40n) - 1n
/** How many storage slots are searched for a venue's accrual timestamp (both sit in the first ten). */
const slotsSearched = 32

/**
 * Gives the vault's venues `seconds` more of interest at their current rates without moving the
 * chain's clock: the Aave pool's last index update and the Morpho vault's last accrual are dated
 * `seconds` earlier, so each accrues as if that time had passed (and mints the USDC that backs it at
 * its next update, as after a real wait). The position's value grows; block time stays at wall time,
 * so x402 payments, whose authorisations are signed with wall-clock deadlines, keep working.
 *
 * The oracle measures Morpho's rate from its share price between observations: right after this, the
 * jump reads as a very high Morpho rate for its 4-hour window, which can route new deposits there.
 *
 * @param publicClient - A client of the devnet.
 * @param testClient - An anvil test client of the devnet.
 * @param addresses - The devnet's addresses.
 * @param seconds - The interest time to add, such as `30 * 24 * 3600`.
 * @throws {DevnetError} `INVALID_OPTIONS` for a bad `seconds`; `DEPLOY_FAILED` when a venue's
 *   timestamp is not where this expects it.
 */
export async function advanceYield(
  publicClient: PublicClient,
  testClient: TestClient,
  addresses: VaultAddresses,
  seconds: number | bigint,
): Promise<void> {
  if (
    (typeof seconds !== 'number' && typeof seconds !== 'bigint') ||
    (typeof seconds === 'number' && !Number.isSafeInteger(seconds)) ||
    BigInt(seconds) <= 0n
  ) {
    throw new DevnetError(`advanceYield needs a positive whole number of seconds.`, {
      code: 'INVALID_OPTIONS',
      details: { seconds: String(seconds) },
    })
  }
  const span = BigInt(seconds)
  const [reserve, lastAccrual] = await Promise.all([
    publicClient.readContract({
      address: addresses.aavePool,
      abi: devnetAbis.aavePool,
      functionName: 'getReserveData',
      args: [addresses.usdc],
    }),
    publicClient.readContract({
      address: addresses.morphoVault,
      abi: devnetAbis.morphoVault,
      functionName: 'lastAccrual',
    }),
  ])
  const aaveUpdate = BigInt(reserve.lastUpdateTimestamp)
  if (span > aaveUpdate || span > lastAccrual) {
    throw new DevnetError(`advanceYield: ${span} s reaches back before the devnet's genesis.`, {
      code: 'INVALID_OPTIONS',
      details: { seconds: span.toString() },
    })
  }
  // Aave's timestamp is a uint40 packed below a bool; Morpho's a whole uint256 slot.
  await backdate(publicClient, testClient, addresses.aavePool, aaveUpdate, span, uint40Mask)
  await backdate(
    publicClient,
    testClient,
    addresses.morphoVault,
    lastAccrual,
    span,
    2n ** 256n - 1n,
  )
  await testClient.mine({ blocks: 1 })
}

/** Finds the slot whose masked bits hold `timestamp` and writes `timestamp − span` there. */
async function backdate(
  publicClient: PublicClient,
  testClient: TestClient,
  address: Address,
  timestamp: bigint,
  span: bigint,
  mask: bigint,
): Promise<void> {
  const slots = await Promise.all(
    Array.from({ length: slotsSearched }, (_, slot) =>
      publicClient.getStorageAt({ address, slot: numberToHex(slot, { size: 32 }) }),
    ),
  )
  // The low bits must hold the timestamp, and what lies above them (Aave's bool) may be 0 or 1 only.
  const index = slots.findIndex((word) => {
    const value = BigInt(word ?? '0x0')
    return (value & mask) === timestamp && value >> bitLength(mask) <= 1n
  })
  if (index < 0) {
    throw new DevnetError(
      `advanceYield: no accrual timestamp found in the storage of ${address}.`,
      {
        code: 'DEPLOY_FAILED',
        details: { address },
      },
    )
  }
  const value = BigInt(slots[index] ?? '0x0')
  const updated = (value & ~mask) | (timestamp - span)
  await testClient.setStorageAt({
    address,
    index: numberToHex(index, { size: 32 }),
    value: numberToHex(updated, { size: 32 }) as Hex,
  })
}

function bitLength(mask: bigint): bigint {
  return BigInt(mask.toString(2).length)
}
