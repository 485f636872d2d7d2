import { createPublicClient } from 'viem'
import { RequestCounter } from '../harness/requestCounter.js'
import { createVaultClient, parseUsdc, vaultHttp } from '../src/index.js'
import type { BenchContext } from './context.js'
import { percentile, roundMs } from './stats.js'

/** One SDK call: its worst round-trip count over the samples, its budget and latency. */
export type SdkCall = { roundTrips: number; budget: number; p50Ms: number; p95Ms: number }

/**
 * Measures the SDK calls under the MCP tools, in process (no MCP, no stdio): round trips counted at
 * the transport's fetch, and latency on the devnet, over a batching transport (`batch: true`, as the MCP
 * server uses): a plan's multicall and its simulation start in the same tick and share one request.
 * Budgets: verification 2 (`eth_chainId` and one multicall), each read 1,
 * each plan 1.
 *
 * @param ctx - The devnet, the prepared merchant wallet, the sample count.
 * @returns The calls by name.
 * @example
 * const sdk = await measureSdkCalls(ctx)
 */
export async function measureSdkCalls(ctx: BenchContext): Promise<Record<string, SdkCall>> {
  const samples = ctx.smoke ? 2 : 25
  const counter = new RequestCounter()
  const vault = createVaultClient({
    publicClient: createPublicClient({
      chain: ctx.devnet.viemChain,
      transport: vaultHttp(ctx.devnet.rpcUrl, { fetchFn: counter.fetchFn, batch: true }),
    }),
    chain: ctx.devnet.chain,
    addresses: ctx.devnet.addresses,
  })
  const wallet = ctx.wallet
  const amount = parseUsdc('25')
  const calls: [string, number, () => Promise<unknown>][] = [
    ['verifyAddresses', 2, () => vault.verifyAddresses()],
    ['getStatus', 1, () => vault.getStatus()],
    ['getYield', 1, () => vault.getYield()],
    ['getPosition', 1, () => vault.getPosition({ wallet })],
    ['planApproveUsdc', 1, () => vault.planApproveUsdc({ wallet, amount })],
    ['planDeposit', 1, () => vault.planDeposit({ wallet, amount })],
    ['planWithdraw (amount)', 1, () => vault.planWithdraw({ wallet, amount })],
    ['planWithdraw (shares)', 1, () => vault.planWithdraw({ wallet, shares: amount })],
  ]
  const results: Record<string, SdkCall> = {}
  for (const [name, budget, run] of calls) {
    ctx.progress(`SDK: ${name}`)
    let roundTrips = 0
    const durations: number[] = []
    for (let sample = 0; sample < samples; sample++) {
      const started = performance.now()
      const { requests } = await counter.measure(run)
      durations.push(performance.now() - started)
      roundTrips = Math.max(roundTrips, requests)
    }
    results[name] = {
      roundTrips,
      budget,
      p50Ms: roundMs(percentile(durations, 50)),
      p95Ms: roundMs(percentile(durations, 95)),
    }
  }
  return results
}
