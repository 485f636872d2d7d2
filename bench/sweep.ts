import { receiptsFrom, usdcBalance } from '../harness/merchant.js'
import { type DepositMethod, parseUsdc } from '../src/index.js'
import type { BenchContext, Measured } from './context.js'
import { latestBlock, merchantVaultClient } from './seller.js'

/** The transactions and gas of one sweep. */
export type Sweep = {
  /** The budget is 1 when the USDC supports EIP-2612 (permit and deposit in one transaction). */
  txPerSweep: number
  /** The gas used by the sweep's transactions, summed. */
  gasPerSweep: number
  /** How the deposit was made: `depositWithPermit` for a merchant without an allowance. */
  method: DepositMethod
}

/**
 * One sweep of 10 USDC idle (the protocol's minimum deposit) by a merchant without a USDC allowance
 * to the router, as a fresh one: `sweep`, then every transaction the merchant sent meanwhile,
 * from the chain.
 *
 * @param ctx - The devnet. The merchant must have no allowance (`bench/run.ts` revokes it).
 * @returns The transactions, their gas and the deposit method.
 * @example
 * const sweep = await measureSweep(ctx)
 */
export async function measureSweep(ctx: BenchContext): Promise<Measured<Sweep>> {
  const { devnet } = ctx
  const merchant = devnet.accounts.merchant.address
  ctx.progress('sweep: one sweep of 10 USDC')
  const firstBlock = (await latestBlock(devnet)) + 1n
  const balance = await usdcBalance(devnet, merchant)
  const result = await merchantVaultClient(devnet).sweep({
    reserve: balance - parseUsdc('10'),
    minIdleThreshold: '10',
  })
  if (!result.deposited) throw new Error(`the sweep deposited nothing: ${result.reason}`)
  const receipts = await receiptsFrom(devnet, merchant, firstBlock)
  return {
    value: {
      txPerSweep: receipts.length,
      gasPerSweep: Number(receipts.reduce((sum, receipt) => sum + receipt.gasUsed, 0n)),
      method: result.method,
    },
  }
}
