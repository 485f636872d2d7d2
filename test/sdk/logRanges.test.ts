/**
 * The log-range scan's backoff, over a reader that refuses ranges the way providers do, and which RPC
 * answers count as "range too large".
 */
import { HttpRequestError, RpcRequestError } from 'viem'
import { describe, expect, it } from 'vitest'
import { isLogRangeTooLarge, readInRanges } from '../../src/sdk/logRanges.js'

const rpcError = (message: string) =>
  new RpcRequestError({ body: {}, url: 'http://rpc', error: { code: -32005, message } })

async function scan(
  fromBlock: bigint,
  toBlock: bigint,
  maxRange: bigint,
  refuse: (size: bigint) => Error | undefined,
) {
  const limit = { maxRange }
  const asked: bigint[] = []
  const done: [bigint, bigint][] = []
  for await (const range of readInRanges({
    fromBlock,
    toBlock,
    limit,
    read: async ({ fromBlock: from, toBlock: to }) => {
      asked.push(to - from + 1n)
      const error = refuse(to - from + 1n)
      if (error) throw error
      return [from, to] as [bigint, bigint]
    },
  })) {
    done.push(range.result)
  }
  return { limit, asked, done }
}

describe('readInRanges', () => {
  it('covers every block once, in order, halving on a refusal that names no size', async () => {
    const { limit, asked, done } = await scan(1n, 1000n, 1000n, (size) =>
      size > 300n ? rpcError('query returned more than 10000 results') : undefined,
    )
    expect(asked.slice(0, 3)).toEqual([1000n, 500n, 250n])
    expect(limit.maxRange).toBe(250n)
    expect(done[0]).toEqual([1n, 250n])
    expect(done.at(-1)?.[1]).toBe(1000n)
    for (let i = 1; i < done.length; i++) expect(done[i]?.[0]).toBe((done[i - 1]?.[1] ?? 0n) + 1n)
  })

  it('goes straight to the range the RPC names, and keeps it', async () => {
    const { limit, asked } = await scan(1n, 5000n, 10_000n, (size) =>
      size > 2000n ? rpcError('eth_getLogs is limited to a 2,000 block range') : undefined,
    )
    expect(asked).toEqual([5000n, 2000n, 2000n, 1000n])
    expect(limit.maxRange).toBe(2000n)
  })

  it('throws other failures, and a single block still refused, as they came', async () => {
    const down = new Error('socket hang up')
    await expect(scan(1n, 10n, 10n, () => down)).rejects.toBe(down)
    const tooLarge = rpcError('response size exceeded')
    await expect(scan(1n, 10n, 10n, () => tooLarge)).rejects.toBe(tooLarge)
  })
})

describe('isLogRangeTooLarge', () => {
  it('knows providers’ refusals, HTTP 413, and tells rate limits apart', () => {
    for (const message of [
      'query returned more than 10000 results. Try with this block range [0x1, 0x2].',
      'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range',
      'block range is too wide',
      'exceed maximum block range: 5000',
      'eth_getLogs is limited to a 10,000 range',
    ])
      expect(isLogRangeTooLarge(rpcError(message)), message).toBe(true)
    expect(
      isLogRangeTooLarge(new HttpRequestError({ url: 'http://rpc', status: 413, body: {} })),
    ).toBe(true)
    expect(isLogRangeTooLarge(rpcError('You have exceeded the rate limit'))).toBe(false)
    expect(isLogRangeTooLarge(rpcError('execution reverted'))).toBe(false)
  })
})
