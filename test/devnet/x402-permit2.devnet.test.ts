/**
 * x402 payments on the devnet's Base Sepolia as the real test network has them: the vault's USDC (Aave's test
 * token) has no EIP-3009, so x402's own client pays it through Permit2 and the devnet's facilitator (x402's own
 * `ExactEvmScheme`) settles through x402's exact Permit2 proxy, either for a buyer who approved Permit2 once or, with
 * x402's EIP-2612 gas-sponsoring extension, for one who never sent a transaction.
 */
import { x402Client } from '@x402/core/client'
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types'
import {
  createPermit2ApprovalTx,
  PERMIT2_ADDRESS,
  toClientEvmSigner,
  x402ExactPermit2ProxyAddress,
} from '@x402/evm'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { declareEip2612GasSponsoringExtension } from '@x402/extensions'
import { type Address, erc20Abi, type Hex, type PrivateKeyAccount } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { createDevnetFacilitator } from '../../src/devnet/facilitator.js'
import type { Devnet } from '../../src/devnet/startDevnet.js'
import { type DevnetClients, useDevnet } from '../support/devnet.js'

const network = 'eip155:84532'

describe('x402 payments through Permit2 on the devnet’s Base Sepolia (Aave’s test USDC)', () => {
  let devnet: Devnet
  let clients: DevnetClients
  let facilitator: ReturnType<typeof createDevnetFacilitator>
  useDevnet({ chain: 'base-sepolia' }, async (started, built) => {
    devnet = started
    clients = built
    facilitator = createDevnetFacilitator({
      rpcUrl: started.rpcUrl,
      chain: started.viemChain,
      account: privateKeyToAccount(started.accounts.facilitator.privateKey),
    })
  })

  /** The seller's requirement: 0.01 of the vault USDC, paid through Permit2, with the token's EIP-712 domain. */
  const requirements = (asset: Address = devnet.addresses.usdc): PaymentRequirements => ({
    scheme: 'exact',
    network,
    asset,
    amount: '10000',
    payTo: devnet.accounts.merchant.address,
    maxTimeoutSeconds: 300,
    extra: { name: 'USDC', version: '1', assetTransferMethod: 'permit2' },
  })
  const paymentRequired = (
    accepted: PaymentRequirements,
    extensions?: PaymentRequired['extensions'],
  ): PaymentRequired => ({
    x402Version: 2,
    resource: { url: 'http://127.0.0.1/paid', description: 'test', mimeType: 'application/json' },
    accepts: [accepted],
    ...(extensions ? { extensions } : {}),
  })
  /** x402's client for `account`, reading the chain (for gas sponsoring), opted in to the vault's USDC. */
  const buyerOf = (account: PrivateKeyAccount, options: { optIn?: boolean } = {}) => {
    const client = new x402Client().register(
      network,
      new ExactEvmScheme(toClientEvmSigner(account, clients.publicClient)),
    )
    return options.optIn === false
      ? client
      : client.setSpendControls({ allowedAssets: [{ network, asset: devnet.addresses.usdc }] })
  }
  const balanceOf = (owner: Address, token: Address = devnet.addresses.usdc) =>
    clients.publicClient.readContract({
      address: token,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [owner],
    })
  const permit2Allowance = (owner: Address) =>
    clients.publicClient.readContract({
      address: devnet.addresses.usdc,
      abi: erc20Abi,
      functionName: 'allowance',
      args: [owner, PERMIT2_ADDRESS],
    })
  const receiptOf = (hash: string) =>
    clients.publicClient.getTransactionReceipt({ hash: hash as Hex })

  it('refuses the vault’s test USDC unless the buyer opts in to it (x402’s spend controls)', async () => {
    await expect(
      buyerOf(clients.buyer, { optIn: false }).createPaymentPayload(
        paymentRequired(requirements()),
      ),
    ).rejects.toThrow(/rejected by spendControls/)
  })

  it('tells a buyer who never approved Permit2 that an allowance is required', async () => {
    const payment = await buyerOf(clients.buyer).createPaymentPayload(
      paymentRequired(requirements()),
    )
    expect(await facilitator.verify(payment, requirements())).toMatchObject({
      isValid: false,
      invalidReason: 'permit2_allowance_required',
    })
  })

  it('settles through the exact proxy once the buyer has approved Permit2 (one transaction, once)', async () => {
    const { buyer, merchant } = clients
    const approval = createPermit2ApprovalTx(devnet.addresses.usdc)
    const approved = await clients.publicClient.waitForTransactionReceipt({
      hash: await clients.walletFor(buyer).sendTransaction(approval),
    })
    expect(approved.status).toBe('success')
    const nonceAfterApproval = await clients.publicClient.getTransactionCount({
      address: buyer.address,
    })
    const [buyerBefore, merchantBefore] = await Promise.all([
      balanceOf(buyer.address),
      balanceOf(merchant.address),
    ])

    for (const _ of [1, 2]) {
      const payment = await buyerOf(buyer).createPaymentPayload(paymentRequired(requirements()))
      expect(payment.payload).toHaveProperty('permit2Authorization')
      expect(await facilitator.verify(payment, requirements())).toMatchObject({
        isValid: true,
        payer: buyer.address,
      })
      const settled = await facilitator.settle(payment, requirements())
      expect(settled).toMatchObject({ success: true, network, payer: buyer.address })
      const receipt = await receiptOf(settled.transaction)
      expect(receipt.status).toBe('success')
      // The settlement goes to the proxy, not the token, and the facilitator sends it.
      expect(receipt.to).toBe(x402ExactPermit2ProxyAddress.toLowerCase())
      expect(receipt.from).toBe(devnet.accounts.facilitator.address.toLowerCase())

      // The same payment twice: Permit2's nonce is spent.
      expect((await facilitator.settle(payment, requirements())).success).toBe(false)
    }
    expect(await balanceOf(buyer.address)).toBe(buyerBefore - 20_000n)
    expect(await balanceOf(merchant.address)).toBe(merchantBefore + 20_000n)
    // After the approval the buyer sends nothing.
    expect(await clients.publicClient.getTransactionCount({ address: buyer.address })).toBe(
      nonceAfterApproval,
    )
  })

  it('settles for a buyer who never approved Permit2 with x402’s EIP-2612 gas sponsoring (settleWithPermit)', async () => {
    const { buyer, merchant } = clients
    const [buyerBefore, merchantBefore, ethBefore] = await Promise.all([
      balanceOf(buyer.address),
      balanceOf(merchant.address),
      clients.publicClient.getBalance({ address: buyer.address }),
    ])
    const payment = await buyerOf(buyer).createPaymentPayload(
      paymentRequired(requirements(), declareEip2612GasSponsoringExtension()),
    )
    expect(payment.extensions?.eip2612GasSponsoring).toMatchObject({
      info: { from: buyer.address, spender: PERMIT2_ADDRESS, amount: '10000' },
    })
    expect(await facilitator.verify(payment, requirements())).toMatchObject({ isValid: true })
    const settled = await facilitator.settle(payment, requirements())
    expect(settled).toMatchObject({ success: true, payer: buyer.address })
    const receipt = await receiptOf(settled.transaction)
    expect(receipt.to).toBe(x402ExactPermit2ProxyAddress.toLowerCase())

    expect(await balanceOf(buyer.address)).toBe(buyerBefore - 10_000n)
    expect(await balanceOf(merchant.address)).toBe(merchantBefore + 10_000n)
    // The buyer sent no transaction and paid no gas; its permit covered this payment only.
    expect(await clients.publicClient.getBalance({ address: buyer.address })).toBe(ethBefore)
    expect(await clients.publicClient.getTransactionCount({ address: buyer.address })).toBe(0)
    expect(await permit2Allowance(buyer.address)).toBe(0n)
  })

  it('pays Circle’s test USDC, x402’s default asset there, with EIP-3009 and stock spend controls', async () => {
    const circleTestUsdc = devnet.tokens.circleTestUsdc as Address
    const accepted: PaymentRequirements = {
      ...requirements(circleTestUsdc),
      extra: { name: 'USDC', version: '2' },
    }
    const before = await balanceOf(devnet.accounts.merchant.address, circleTestUsdc)
    const payment = await buyerOf(clients.buyer, { optIn: false }).createPaymentPayload(
      paymentRequired(accepted),
    )
    expect(payment.payload).toHaveProperty('authorization')
    const settled = await facilitator.settle(payment, accepted)
    expect(settled.success).toBe(true)
    expect((await receiptOf(settled.transaction)).to).toBe(circleTestUsdc.toLowerCase())
    expect(await balanceOf(devnet.accounts.merchant.address, circleTestUsdc)).toBe(before + 10_000n)
  })
})
