import {
  type Address,
  decodeFunctionData,
  getAbiItem,
  type Hash,
  type Hex,
  hashTypedData,
  isAddressEqual,
} from 'viem'
import { getLogs, getTransaction } from 'viem/actions'
import { x402BatchSettlementAbi } from '../abis/x402.js'
import { x402BatchSettlementAddress } from '../chains.js'
import type { VaultContext } from '../context.js'
import { guard } from '../internal/read.js'
import { type BlockRange, DEFAULT_LOG_SPAN, readInRanges } from '../logRanges.js'
import { forEachLimited } from './balances.js'
import { isLive } from './minedLogs.js'
import { type Draft, ledgerAction } from './types.js'

const claimedEvent = getAbiItem({ abi: x402BatchSettlementAbi, name: 'Claimed' })

/** A channel's identity as the batch-settlement contract hashes it (EIP-712, its own domain). */
const channelConfigTypes = {
  ChannelConfig: [
    { name: 'payer', type: 'address' },
    { name: 'payerAuthorizer', type: 'address' },
    { name: 'receiver', type: 'address' },
    { name: 'receiverAuthorizer', type: 'address' },
    { name: 'token', type: 'address' },
    { name: 'withdrawDelay', type: 'uint40' },
    { name: 'salt', type: 'bytes32' },
  ],
} as const

type ChannelConfig = {
  payer: Address
  payerAuthorizer: Address
  receiver: Address
  receiverAuthorizer: Address
  token: Address
  withdrawDelay: number
  salt: Hex
}

/**
 * How many vouchers each `batch-settlement` settle paid. A settle pays the wallet everything
 * claimed for it in the token since its previous settle, and each `Claimed` event is one voucher taken
 * (a channel's latest, covering every request since that channel's last claim; a voucher claimed
 * again moves nothing and emits nothing). `Claimed` does not name the channel's receiver, and a
 * channel's config appears in the logs only when it is created (perhaps long before), so the receiver
 * is read from the claim transactions' calldata (`claim`, `claimWithSignature`, or those inside the
 * contract's `multicall`): the `Claimed` logs of the contract from the first block scanned to the last
 * settle (read in ranges), and one `eth_getTransactionByHash` per claim transaction among them. A
 * settle's count is kept only when its claims add up to its amount exactly: otherwise part of it was
 * claimed before the first block scanned, and the count is `null`.
 */
export async function countVouchers<entry extends Draft>(
  ctx: VaultContext,
  wallet: Address,
  entries: entry[],
  blocks: BlockRange,
  maxBlockRange: bigint | undefined,
): Promise<Map<entry, number | null>> {
  const counts = new Map<entry, number | null>()
  const settles = entries.filter((e) => e.x402Scheme === 'batch-settlement')
  if (settles.length === 0) return counts
  // The entries are oldest first.
  const lastSettle = (settles.at(-1) as entry).blockNumber
  const claims = await guard(ctx, `${ledgerAction} (voucher claims)`, async () => {
    const found = []
    for await (const range of readInRanges({
      fromBlock: blocks.fromBlock,
      toBlock: lastSettle,
      limit: { maxRange: maxBlockRange ?? DEFAULT_LOG_SPAN },
      read: (range) =>
        getLogs(ctx.publicClient, {
          address: x402BatchSettlementAddress,
          event: claimedEvent,
          ...range,
        }),
    })) {
      found.push(...range.result.filter(isLive))
    }
    return found
  })
  // The wallet's channels among those claimed, and their tokens, from the claim transactions.
  const tokenOf = new Map<Hash, Address>()
  await forEachLimited([...new Set(claims.map((log) => log.transactionHash))], async (hash) => {
    const transaction = await guard(ctx, `${ledgerAction} (transaction ${hash})`, () =>
      getTransaction(ctx.publicClient, { hash }),
    )
    if (!transaction.to || !isAddressEqual(transaction.to, x402BatchSettlementAddress)) return
    for (const config of claimedChannels(transaction.input)) {
      if (!isAddressEqual(config.receiver, wallet)) continue
      tokenOf.set(channelId(ctx, config), config.token)
    }
  })
  const at = (e: { blockNumber: bigint; logIndex: number }) => [e.blockNumber, e.logIndex] as const
  const before = (a: readonly [bigint, number], b: readonly [bigint, number]) =>
    a[0] < b[0] || (a[0] === b[0] && a[1] < b[1])
  const previous = new Map<string, readonly [bigint, number]>()
  for (const settle of settles) {
    const token = settle.token.toLowerCase()
    const since = previous.get(token)
    const paid = claims.filter((log) => {
      const claimToken = tokenOf.get(log.args.channelId as Hash)
      if (!claimToken || claimToken.toLowerCase() !== token) return false
      const position = at({ blockNumber: log.blockNumber, logIndex: log.logIndex })
      return (since === undefined || before(since, position)) && before(position, at(settle))
    })
    const sum = paid.reduce((total, log) => total + (log.args.claimAmount as bigint), 0n)
    counts.set(settle, sum === settle.amount ? paid.length : null)
    previous.set(token, at(settle))
  }
  return counts
}

/** The channels a call of the contract claims for: its rows' configs, through `multicall` too. */
function claimedChannels(input: Hex): ChannelConfig[] {
  try {
    const call = decodeFunctionData({ abi: x402BatchSettlementAbi, data: input })
    if (call.functionName === 'multicall') return call.args[0].flatMap(claimedChannels)
    if (call.functionName !== 'claim' && call.functionName !== 'claimWithSignature') return []
    return call.args[0].map((row) => row.voucher.channel as ChannelConfig)
  } catch {
    return []
  }
}

/** A channel's id: the EIP-712 hash of its config under the contract's domain on this chain. */
function channelId(ctx: VaultContext, config: ChannelConfig): Hash {
  return hashTypedData({
    domain: {
      name: 'x402 Batch Settlement',
      version: '1',
      chainId: ctx.chainId,
      verifyingContract: x402BatchSettlementAddress,
    },
    types: channelConfigTypes,
    primaryType: 'ChannelConfig',
    message: config,
  })
}
