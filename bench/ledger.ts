import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  encodeFunctionData,
  type Hex,
  http,
  parseSignature,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { startCountingProxy } from '../harness/countingProxy.js'
import { type Devnet, startDevnet } from '../src/devnet/index.js'
import {
  createVaultClient,
  type VaultChainName,
  VaultError,
  type VaultLedger,
} from '../src/index.js'
import { usdcAbi } from '../src/sdk/abis/index.js'
import { vaultHttp } from '../src/sdk/transport.js'
import { type BenchContext, type Measured, notMeasured } from './context.js'

/** One ledger scan over a busy stretch of chain. */
export type LedgerBench = {
  /** Blocks scanned. */
  blocks: number
  /** x402 settlements (EIP-3009) to the merchant in them. */
  settlements: number
  /** Wall time of `getLedger`, in ms. */
  ms: number
  /** HTTP requests it made to the RPC. */
  requests: number
  /** Whether every balance reconciled. */
  reconciled: boolean
}

/**
 * The ledger of the merchant over 10,000 blocks that hold 1,000 x402 settlements (smoke: 1,000 blocks,
 * 20 settlements): EIP-3009 authorizations signed by the buyer and sent by the facilitator's account, as
 * x402's facilitator settles them, in batches spread over the blocks (anvil mines the gaps). Then one
 * `getLedger` through a counting proxy.
 *
 * It runs on a devnet of its own on `base`, whose USDC has EIP-3009: the bench's Base Sepolia devnet
 * pays through Permit2, as the live test network does.
 *
 * @param ctx - The bench's options and progress.
 * @returns The time, the requests and the scan's size.
 * @example
 * const ledger = await measureLedger(ctx)
 */
export async function measureLedger(ctx: BenchContext): Promise<Measured<LedgerBench>> {
  const devnet = await startDevnet({ chain: 'base' })
  try {
    return await measureLedgerOn(devnet, ctx)
  } finally {
    await devnet.stop()
  }
}

async function measureLedgerOn(devnet: Devnet, ctx: BenchContext): Promise<Measured<LedgerBench>> {
  const blocks = ctx.smoke ? 1_000 : 10_000
  const settlements = ctx.smoke ? 20 : 1_000
  const batches = ctx.smoke ? 10 : 100
  const perBatch = settlements / batches
  const gap = blocks / batches
  ctx.progress(`ledger: ${settlements} settlements over ${blocks} blocks`)

  const chain = devnet.viemChain
  const transport = http(devnet.rpcUrl)
  const publicClient = createPublicClient({ chain, transport })
  const testClient = createTestClient({ mode: 'anvil', chain, transport })
  const buyer = privateKeyToAccount(devnet.accounts.buyer.privateKey)
  const sender = privateKeyToAccount(devnet.accounts.facilitator.privateKey)
  const wallet = createWalletClient({ account: sender, chain, transport })
  const usdc = devnet.addresses.usdc
  const merchant = devnet.accounts.merchant.address
  const name = await publicClient.readContract({
    address: usdc,
    abi: usdcAbi,
    functionName: 'name',
  })
  const fees = await publicClient.estimateFeesPerGas()
  let nonce = await publicClient.getTransactionCount({ address: sender.address })

  const fromBlock = (await publicClient.getBlockNumber()) + 1n
  await testClient.setAutomine(false)
  try {
    for (let batch = 0; batch < batches; batch++) {
      for (let i = 0; i < perBatch; i++) {
        const authorization = {
          from: buyer.address,
          to: merchant,
          value: 10_000n + BigInt(batch * perBatch + i),
          validAfter: 0n,
          validBefore: 2n ** 48n,
          nonce: `0x${(batch * perBatch + i + 1).toString(16).padStart(64, '0')}` as Hex,
        }
        const signature = await buyer.signTypedData({
          domain: { name, version: '2', chainId: devnet.chainId, verifyingContract: usdc },
          types: {
            TransferWithAuthorization: [
              { name: 'from', type: 'address' },
              { name: 'to', type: 'address' },
              { name: 'value', type: 'uint256' },
              { name: 'validAfter', type: 'uint256' },
              { name: 'validBefore', type: 'uint256' },
              { name: 'nonce', type: 'bytes32' },
            ],
          },
          primaryType: 'TransferWithAuthorization',
          message: authorization,
        })
        const { v, r, s } = parseSignature(signature)
        await wallet.sendTransaction({
          to: usdc,
          data: encodeFunctionData({
            abi: usdcAbi,
            functionName: 'transferWithAuthorization',
            args: [
              authorization.from,
              authorization.to,
              authorization.value,
              authorization.validAfter,
              authorization.validBefore,
              authorization.nonce,
              Number(v),
              r,
              s,
            ],
          }),
          gas: 150_000n,
          nonce: nonce++,
          maxFeePerGas: fees.maxFeePerGas * 2n,
          maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
        })
      }
      await testClient.mine({ blocks: gap })
    }
  } finally {
    await testClient.setAutomine(true)
  }
  const toBlock = fromBlock + BigInt(blocks) - 1n

  const proxy = await startCountingProxy(devnet.rpcUrl)
  try {
    const vault = createVaultClient({
      publicClient: createPublicClient({ chain, transport: vaultHttp(proxy.url) }),
      chain: devnet.chain as VaultChainName,
      addresses: devnet.addresses,
    })
    const started = performance.now()
    let measured: { result: VaultLedger; requests: number }
    try {
      measured = await proxy.measure(() =>
        vault.getLedger({ wallet: merchant, fromBlock, toBlock }),
      )
    } catch (error) {
      // The opening balances are read at the block before the scan: anvil may have dropped the state
      // that far back (it keeps a bounded number of past states), as a node that is no archive does.
      if (error instanceof VaultError && error.category === 'rpc') {
        return notMeasured(`the devnet kept no state ${blocks} blocks back: ${error.message}`)
      }
      throw error
    }
    const { result: ledger, requests } = measured
    const ms = Math.round(performance.now() - started)
    const found = ledger.entries.filter((entry) => entry.kind === 'x402').length
    if (found !== settlements) {
      throw new Error(`the ledger found ${found} x402 settlements of ${settlements}`)
    }
    return { value: { blocks, settlements, ms, requests, reconciled: ledger.reconciled } }
  } finally {
    await proxy.close()
  }
}
