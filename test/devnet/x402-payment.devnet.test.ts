import { x402Client } from '@x402/core/client'
import { HTTPFacilitatorClient } from '@x402/core/http'
import type { PaymentRequirements } from '@x402/core/types'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { createPublicClient, erc20Abi, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Devnet, startDevnet } from '../../src/devnet/startDevnet.js'

/**
 * An EIP-3009 payment on the devnet's Base, where the vault's USDC is Circle's at its live address: x402's stock
 * client pays it with its default spend controls, as any buyer on Base would. (The Permit2 path of the test network
 * is in x402-permit2.devnet.test.ts.)
 */
const network = 'eip155:8453'

describe('a real x402 payment on the devnet (Base, EIP-3009)', () => {
  let devnet: Devnet
  let requirements: PaymentRequirements

  beforeAll(async () => {
    devnet = await startDevnet({ chain: 'base', facilitator: true })
    requirements = {
      scheme: 'exact',
      network,
      asset: devnet.addresses.usdc,
      amount: '10000',
      payTo: devnet.accounts.merchant.address,
      maxTimeoutSeconds: 300,
      extra: { name: 'USD Coin', version: '2' },
    }
  })
  afterAll(() => devnet?.stop())

  async function signPayment() {
    const buyer = new x402Client().register(
      network,
      new ExactEvmScheme(privateKeyToAccount(devnet.accounts.buyer.privateKey)),
    )
    return buyer.createPaymentPayload({
      x402Version: 2,
      resource: { url: 'http://127.0.0.1/paid', description: 'test', mimeType: 'application/json' },
      accepts: [requirements],
    })
  }

  it('moves 0.01 USDC from the buyer to the merchant, settled by the local facilitator', async () => {
    const publicClient = createPublicClient({
      chain: devnet.viemChain,
      transport: http(devnet.rpcUrl),
    })
    const balance = (owner: `0x${string}`) =>
      publicClient.readContract({
        address: devnet.addresses.usdc,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [owner],
      })
    const [buyerBefore, merchantBefore, facilitatorEthBefore] = await Promise.all([
      balance(devnet.accounts.buyer.address),
      balance(devnet.accounts.merchant.address),
      publicClient.getBalance({ address: devnet.accounts.facilitator.address }),
    ])

    const facilitator = new HTTPFacilitatorClient({ url: devnet.facilitatorUrl as string })
    const supported = await facilitator.getSupported()
    expect(supported.kinds).toContainEqual(
      expect.objectContaining({ x402Version: 2, scheme: 'exact', network }),
    )

    const payment = await signPayment()
    const verified = await facilitator.verify(payment, requirements)
    expect(verified).toMatchObject({ isValid: true, payer: devnet.accounts.buyer.address })

    const settled = await facilitator.settle(payment, requirements)
    expect(settled.success).toBe(true)
    expect(settled.network).toBe(network)
    expect(settled.transaction).toMatch(/^0x[0-9a-f]{64}$/)

    const receipt = await publicClient.getTransactionReceipt({
      hash: settled.transaction as `0x${string}`,
    })
    expect(receipt.status).toBe('success')
    expect(receipt.from.toLowerCase()).toBe(devnet.accounts.facilitator.address.toLowerCase())
    expect(await balance(devnet.accounts.buyer.address)).toBe(buyerBefore - 10_000n)
    expect(await balance(devnet.accounts.merchant.address)).toBe(merchantBefore + 10_000n)
    // The facilitator, not the buyer, paid the gas.
    expect(
      await publicClient.getBalance({ address: devnet.accounts.facilitator.address }),
    ).toBeLessThan(facilitatorEthBefore)

    // The same authorization cannot be settled twice.
    const replay = await facilitator.verify(payment, requirements)
    expect(replay.isValid).toBe(false)
  })

  it('rejects a payment for more than the buyer signed', async () => {
    const facilitator = new HTTPFacilitatorClient({ url: devnet.facilitatorUrl as string })
    const payment = await signPayment()
    const verified = await facilitator.verify(payment, { ...requirements, amount: '20000' })
    expect(verified.isValid).toBe(false)
    expect(verified.invalidReason).toBeTruthy()
  })
})
