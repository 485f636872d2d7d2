import { x402Client } from '@x402/core/client'
import { HTTPFacilitatorClient } from '@x402/core/server'
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types'
import { createPermit2ApprovalTx, toClientEvmSigner } from '@x402/evm'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { declareEip2612GasSponsoringExtension } from '@x402/extensions'
import {
  type Address,
  createPublicClient,
  createWalletClient,
  type Hash,
  http,
  type PrivateKeyAccount,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { readX402UsdcAsset, usdcAbi, x402UsdcPrice } from '../src/index.js'
import type { BenchContext, Measured } from './context.js'
import { facilitatorUrlOf, merchantVaultClient } from './seller.js'

/**
 * The gas of one x402 payment path. The buyer sends nothing per payment on any path (it only signs;
 * the bench checks its transaction count), so its gas is the one-off Permit2 approval, if any.
 */
export type X402PathGas = {
  /** Gas the buyer spends once, before its first payment (the Permit2 approval); 0 when none. */
  buyerOnce: number
  /** Gas of the facilitator's settlement transaction, per payment. */
  facilitatorPerPayment: number
}

/** The x402 payment paths' gas, side by side. */
export type X402Gas = {
  /** EIP-3009 `transferWithAuthorization` (Circle's USDC: Base, and x402's default test USDC). */
  eip3009: X402PathGas
  /** Permit2 through x402's exact proxy (`settle`), for a buyer who approved Permit2 once. */
  permit2: X402PathGas
  /**
   * Permit2 with x402's EIP-2612 gas sponsoring (`settleWithPermit`): a buyer who never approved signs
   * a permit for Permit2 that the facilitator submits with the payment. A buyer's first payment.
   */
  permit2Sponsored: X402PathGas
}

/**
 * Measures the gas of each x402 payment path on the devnet's Base Sepolia, through the devnet's
 * facilitator with x402's own client: an EIP-3009 payment in Circle's test USDC (which sits beside the
 * vault's USDC there, as on the live network), a Permit2 payment in the vault's USDC by the devnet's
 * buyer after it approved Permit2 (the approval measured, and left in place: the later seller rows pay
 * as a regular buyer, concurrently), and a sponsored first payment by a new buyer that never sent a
 * transaction.
 *
 * @param ctx - A Base Sepolia devnet with its facilitator; its buyer must not have approved Permit2 yet.
 * @returns Buyer and facilitator gas per path, or why it was not measured.
 * @example
 * const gas = await measureX402Gas(ctx)
 */
export async function measureX402Gas(ctx: BenchContext): Promise<Measured<X402Gas>> {
  const { devnet } = ctx
  const circleUsdc = devnet.tokens.circleTestUsdc
  if (!circleUsdc) {
    return {
      value: null,
      notMeasured: 'a base-sepolia devnet (Circle’s test USDC beside the vault’s)',
    }
  }
  const network = `eip155:${devnet.chainId}` as const
  const transport = http(devnet.rpcUrl)
  const publicClient = createPublicClient({ chain: devnet.viemChain, transport })
  const facilitator = new HTTPFacilitatorClient({ url: facilitatorUrlOf(devnet) })
  const gasOf = async (hash: Hash) =>
    Number((await publicClient.waitForTransactionReceipt({ hash })).gasUsed)
  const walletOf = (account: PrivateKeyAccount) =>
    createWalletClient({ account, chain: devnet.viemChain, transport })
  const sent = (account: PrivateKeyAccount) =>
    publicClient.getTransactionCount({ address: account.address })

  /** Pays `requirement` once as `account` and returns the settlement's gas. */
  async function settle(
    account: PrivateKeyAccount,
    requirement: PaymentRequirements,
    extensions?: PaymentRequired['extensions'],
  ): Promise<number> {
    const client = new x402Client()
      .register(network, new ExactEvmScheme(toClientEvmSigner(account, publicClient)))
      .setSpendControls({
        allowedAssets: [
          { network, asset: devnet.addresses.usdc },
          { network, asset: circleUsdc as Address },
        ],
      })
    const payment = await client.createPaymentPayload({
      x402Version: 2,
      resource: { url: 'http://127.0.0.1/paid', description: 'bench', mimeType: 'text/plain' },
      accepts: [requirement],
      ...(extensions ? { extensions } : {}),
    })
    const before = await sent(account)
    const settled = await facilitator.settle(payment, requirement)
    if (!settled.success) throw new Error(`the x402 settlement failed: ${settled.errorReason}`)
    if ((await sent(account)) !== before) throw new Error('the buyer sent a transaction to pay')
    return gasOf(settled.transaction as Hash)
  }

  const buyer = privateKeyToAccount(devnet.accounts.buyer.privateKey)
  const requirement = (price: ReturnType<typeof x402UsdcPrice>): PaymentRequirements => ({
    scheme: 'exact',
    network,
    payTo: devnet.accounts.merchant.address,
    maxTimeoutSeconds: 300,
    ...price,
  })
  const price = (asset: Awaited<ReturnType<typeof readX402UsdcAsset>>) =>
    x402UsdcPrice({ chain: devnet.chain, amount: '0.01', asset })

  ctx.progress('x402 gas: EIP-3009, Permit2 after an approval, Permit2 with a sponsored permit')
  const vaultUsdc = requirement(price(await readX402UsdcAsset(merchantVaultClient(devnet))))
  const eip3009 = await settle(
    buyer,
    requirement(
      price({ address: circleUsdc, name: 'USDC', version: '2', assetTransferMethod: 'eip3009' }),
    ),
  )
  const approval = await gasOf(
    await walletOf(buyer).sendTransaction(createPermit2ApprovalTx(devnet.addresses.usdc)),
  )
  const permit2 = await settle(buyer, vaultUsdc)

  // A new buyer with USDC and nothing else: no ETH, no approval.
  const newcomer = privateKeyToAccount(generatePrivateKey())
  await gasOf(
    await walletOf(buyer).writeContract({
      address: devnet.addresses.usdc,
      abi: usdcAbi,
      functionName: 'transfer',
      args: [newcomer.address, 1_000_000n],
    }),
  )
  const sponsored = await settle(newcomer, vaultUsdc, declareEip2612GasSponsoringExtension())
  return {
    value: {
      eip3009: { buyerOnce: 0, facilitatorPerPayment: eip3009 },
      permit2: { buyerOnce: approval, facilitatorPerPayment: permit2 },
      permit2Sponsored: { buyerOnce: 0, facilitatorPerPayment: sponsored },
    },
  }
}
