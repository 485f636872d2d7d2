/**
 * `getPaymentAuthorizationState` and `findPaymentSettlement` on the devnet, on both chains: a real x402
 * client signs a payment (EIP-3009 on Base, Permit2 on Base Sepolia), the devnet's facilitator settles it
 * or not, and the reads say what the chain shows: unused, used (with its settlement found by transaction
 * and by search), expired, and used without a transfer (the payer cancelled it).
 */
import { x402Client } from '@x402/core/client'
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types'
import {
  PERMIT2_ADDRESS,
  x402ExactPermit2ProxyABI,
  x402ExactPermit2ProxyAddress,
  x402UptoPermit2ProxyABI,
  x402UptoPermit2ProxyAddress,
} from '@x402/evm'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { type Hash, type Hex, parseAbi, toFunctionSelector } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { formatAbiItem } from 'viem/utils'
import { describe, expect, it } from 'vitest'
import { approvePermit2Once, transferToMerchant } from '../../harness/merchant.js'
import { createDevnetFacilitator } from '../../src/devnet/facilitator.js'
import type { Devnet } from '../../src/devnet/startDevnet.js'
import {
  findPaymentSettlement,
  getPaymentAuthorizationState,
  paymentAuthorizationOf,
  readX402UsdcAsset,
} from '../../src/index.js'
import { x402ExactPermit2ProxyAbi, x402UptoPermit2ProxyAbi } from '../../src/sdk/abis/x402.js'
import {
  x402ExactPermit2ProxyAddress as ourExactProxyAddress,
  x402UptoPermit2ProxyAddress as ourUptoProxyAddress,
  permit2Address,
} from '../../src/sdk/chains.js'
import { type DevnetClients, useDevnet } from '../support/devnet.js'
import { expectVaultError } from '../support/expectVaultError.js'

const chains = [
  { chain: 'base', method: 'eip3009' },
  { chain: 'base-sepolia', method: 'permit2' },
] as const

describe('the x402 constants', () => {
  it("match @x402/evm's: Permit2's address", () => {
    expect(permit2Address).toBe(PERMIT2_ADDRESS)
  })

  // @x402/evm publishes no ABI of the batch-settlement contract (its facilitator keeps it to itself):
  // x402BatchSettlementAbi is checked by x402's own facilitator and clients on the devnet instead.
  it.each([
    [
      'exact',
      ourExactProxyAddress,
      x402ExactPermit2ProxyAddress,
      x402ExactPermit2ProxyAbi,
      x402ExactPermit2ProxyABI,
    ],
    [
      'upto',
      ourUptoProxyAddress,
      x402UptoPermit2ProxyAddress,
      x402UptoPermit2ProxyAbi,
      x402UptoPermit2ProxyABI,
    ],
  ] as const)(
    "match @x402/evm's: the %s proxy's address, and each call and event we read of it",
    (_scheme, ourAddress, theirAddress, ours, theirs) => {
      expect(ourAddress).toBe(theirAddress)
      const selectors = (abi: readonly { type: string }[]) =>
        abi
          .filter((item) => item.type === 'function')
          .map((item) => toFunctionSelector(formatAbiItem(item as never)))
      const events = (abi: readonly { type: string }[]) =>
        abi.filter((item) => item.type === 'event').map((item) => formatAbiItem(item as never))
      const ourSelectors = selectors(ours)
      expect(ourSelectors.length).toBeGreaterThan(0)
      for (const selector of ourSelectors) expect(selectors(theirs)).toContain(selector)
      for (const event of events(ours)) expect(events(theirs)).toContain(event)
    },
  )
})

describe.each(chains)('on $chain ($method)', ({ chain, method }) => {
  let devnet: Devnet
  let t: DevnetClients
  let requirementsFor: (maxTimeoutSeconds: number) => PaymentRequirements
  useDevnet({ chain }, async (d, clients) => {
    devnet = d
    t = clients
    await approvePermit2Once(devnet)
    const asset = await readX402UsdcAsset(t.readOnly)
    requirementsFor = (maxTimeoutSeconds) => ({
      scheme: 'exact',
      network: `eip155:${devnet.chainId}`,
      asset: asset.address,
      amount: '500000',
      payTo: devnet.accounts.merchant.address,
      maxTimeoutSeconds,
      extra: {
        name: asset.name,
        version: asset.version,
        assetTransferMethod: asset.assetTransferMethod,
      },
    })
  })

  /** A payment the devnet's buyer signs with a stock x402 client (opted in to the vault's USDC). */
  async function signPayment(maxTimeoutSeconds = 300) {
    const network = `eip155:${devnet.chainId}` as const
    const client = new x402Client().register(network, new ExactEvmScheme(t.buyer))
    client.setSpendControls({ allowedAssets: [{ network, asset: devnet.addresses.usdc }] })
    const requirements = requirementsFor(maxTimeoutSeconds)
    const paymentPayload = await client.createPaymentPayload({
      x402Version: 2,
      resource: { url: 'http://shop.test/paid', description: 'paid', mimeType: 'application/json' },
      accepts: [requirements],
    })
    return { paymentPayload, requirements }
  }

  const facilitator = () =>
    createDevnetFacilitator({
      rpcUrl: devnet.rpcUrl,
      chain: devnet.viemChain,
      account: privateKeyToAccount(devnet.accounts.facilitator.privateKey),
    })

  async function settle(paymentPayload: PaymentPayload, requirements: PaymentRequirements) {
    const result = await facilitator().settle(paymentPayload, requirements)
    expect(result).toMatchObject({ success: true })
    return result.transaction as Hash
  }

  it('reads what the payment authorises, without the chain', async () => {
    const { paymentPayload } = await signPayment()
    const authorization = paymentAuthorizationOf(paymentPayload)
    expect(authorization).toMatchObject({
      method,
      network: `eip155:${devnet.chainId}`,
      asset: devnet.addresses.usdc,
      payer: devnet.accounts.buyer.address,
      payTo: devnet.accounts.merchant.address,
      amount: 500_000n,
      nonce: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    })
    const nowSeconds = BigInt(Math.floor(Date.now() / 1000))
    // x402's client signs validBefore (Permit2: deadline, + 1 here) as now + maxTimeoutSeconds.
    expect(authorization.validBefore - nowSeconds).toBeGreaterThanOrEqual(298n)
    expect(authorization.validBefore - nowSeconds).toBeLessThanOrEqual(302n)
  })

  it('unused, then used once settled; the settlement is found by its transaction and by searching, in one round trip for the state', async () => {
    const { paymentPayload, requirements } = await signPayment()
    const fromBlock = await t.publicClient.getBlockNumber({ cacheTime: 0 })
    const { result: before, requests } = await t.counter.measure(() =>
      getPaymentAuthorizationState(t.readOnly, { paymentPayload }),
    )
    expect(requests).toBe(1)
    expect(before).toMatchObject({ state: 'unused', blockNumber: fromBlock })
    expect(await findPaymentSettlement(t.readOnly, { paymentPayload, fromBlock })).toBeUndefined()

    const txHash = await settle(paymentPayload, requirements)
    const after = await t.readOnly.getPaymentAuthorizationState({ paymentPayload })
    expect(after.state).toBe('used')
    const expected = {
      txHash,
      method,
      asset: devnet.addresses.usdc,
      payer: devnet.accounts.buyer.address,
      payTo: devnet.accounts.merchant.address,
      amount: 500_000n,
      blockNumber: after.blockNumber,
    }
    expect(await t.readOnly.findPaymentSettlement({ paymentPayload, transaction: txHash })).toEqual(
      expected,
    )
    expect(await t.readOnly.findPaymentSettlement({ paymentPayload, fromBlock })).toEqual(expected)
  })

  it("another payment's transaction, a plain transfer and a hash never mined are no settlement of it", async () => {
    const first = await signPayment()
    const second = await signPayment()
    const firstTx = await settle(first.paymentPayload, first.requirements)
    const transfer = await transferToMerchant(devnet, 500_000n)
    const never = `0x${'ab'.repeat(32)}` as Hash
    for (const transaction of [firstTx, transfer, never]) {
      expect(
        await findPaymentSettlement(t.readOnly, {
          paymentPayload: second.paymentPayload,
          transaction,
        }),
      ).toBeUndefined()
    }
    expect(
      (await getPaymentAuthorizationState(t.readOnly, { paymentPayload: second.paymentPayload }))
        .state,
    ).toBe('unused')
  })

  it('expired: unused, and the chain is past its validBefore', async () => {
    // Signed valid for no time at all: once a block is past it, it can never be settled.
    const { paymentPayload } = await signPayment(0)
    const { validBefore } = paymentAuthorizationOf(paymentPayload)
    for (;;) {
      await t.testClient.mine({ blocks: 1 })
      const block = await t.publicClient.getBlock({ blockTag: 'latest' })
      if (block.timestamp >= validBefore) break
    }
    const read = await getPaymentAuthorizationState(t.readOnly, { paymentPayload })
    expect(read.state).toBe('expired')
    expect(read.blockTimestamp).toBeGreaterThanOrEqual(validBefore)
  })

  it('used without a transfer: the payer cancelled it, so no settlement is found', async () => {
    const { paymentPayload } = await signPayment()
    const authorization = paymentAuthorizationOf(paymentPayload)
    const fromBlock = await t.publicClient.getBlockNumber({ cacheTime: 0 })
    if (method === 'permit2') {
      const nonce = BigInt(authorization.nonce)
      await t.send(t.buyer, {
        to: permit2Address,
        data: encodeInvalidate(nonce >> 8n, 1n << (nonce & 255n)),
        value: 0n,
      })
    } else {
      await cancelEip3009(authorization.nonce)
    }
    expect((await getPaymentAuthorizationState(t.readOnly, { paymentPayload })).state).toBe('used')
    expect(await findPaymentSettlement(t.readOnly, { paymentPayload, fromBlock })).toBeUndefined()
  })

  it('refuses a payment of another network, a malformed transaction, and neither transaction nor fromBlock', async () => {
    const { paymentPayload } = await signPayment()
    const elsewhere = {
      ...paymentPayload,
      accepted: { ...paymentPayload.accepted, network: 'eip155:1' },
    }
    await expectVaultError(
      getPaymentAuthorizationState(t.readOnly, { paymentPayload: elsewhere }),
      'INVALID_ARGUMENT',
    )
    await expectVaultError(
      findPaymentSettlement(t.readOnly, { paymentPayload, transaction: '0x1234' as Hash }),
      'INVALID_ARGUMENT',
    )
    await expectVaultError(
      findPaymentSettlement(t.readOnly, { paymentPayload }),
      'INVALID_ARGUMENT',
    )
    await expectVaultError(
      getPaymentAuthorizationState(t.readOnly, {
        paymentPayload: { ...paymentPayload, payload: { nothing: true } },
      }),
      'INVALID_ARGUMENT',
    )
  })

  function encodeInvalidate(wordPos: bigint, mask: bigint): Hex {
    const selector = toFunctionSelector('invalidateUnorderedNonces(uint256,uint256)')
    const word = (value: bigint) => value.toString(16).padStart(64, '0')
    return `${selector}${word(wordPos)}${word(mask)}` as Hex
  }

  /** The payer cancels an EIP-3009 authorisation (`cancelAuthorization`, signed by it). */
  async function cancelEip3009(nonce: Hex) {
    const { name, version } = await readX402UsdcAsset(t.readOnly)
    const signature = await t.buyer.signTypedData({
      domain: {
        name,
        version,
        chainId: devnet.chainId,
        verifyingContract: devnet.addresses.usdc,
      },
      types: {
        CancelAuthorization: [
          { name: 'authorizer', type: 'address' },
          { name: 'nonce', type: 'bytes32' },
        ],
      },
      primaryType: 'CancelAuthorization',
      message: { authorizer: devnet.accounts.buyer.address, nonce },
    })
    const hash = await t.walletFor(t.buyer).writeContract({
      address: devnet.addresses.usdc,
      abi: parseAbi([
        'function cancelAuthorization(address authorizer, bytes32 nonce, bytes signature)',
      ]),
      functionName: 'cancelAuthorization',
      args: [devnet.accounts.buyer.address, nonce, signature],
    })
    const receipt = await t.publicClient.waitForTransactionReceipt({ hash })
    expect(receipt.status).toBe('success')
  }
})
