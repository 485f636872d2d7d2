/**
 * Stock x402 buyers for the schemes beyond `exact` (harness/merchantApps.ts has the `exact` one): x402's
 * fetch wrapper over x402's own `upto` or `batch-settlement` EVM client scheme, signing with a devnet
 * key and reading the chain, spend controls on and opted in to the vault's USDC, as a real buyer would.
 * Both pay the vault's USDC through Permit2 on the devnet's Base Sepolia: the buyer must have approved
 * Permit2 once (`approvePermit2Once` in harness/merchant.ts).
 */
import { x402Client, x402HTTPClient } from '@x402/core/client'
import type { SchemeNetworkClient } from '@x402/core/types'
import { toClientEvmSigner } from '@x402/evm'
import {
  BatchSettlementEvmScheme,
  type BatchSettlementEvmSchemeOptions,
} from '@x402/evm/batch-settlement/client'
import { UptoEvmScheme } from '@x402/evm/upto/client'
import { wrapFetchWithPayment } from '@x402/fetch'
import { createPublicClient, type Hex, http } from 'viem'
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts'
import type { Devnet } from '../src/devnet/startDevnet.js'

/**
 * A fetch that pays `upto` routes with x402's stock upto client: it authorises the route's maximum, and
 * the seller settles what the request used.
 *
 * @param devnet - The devnet.
 * @param baseFetch - What reaches the merchant app; default the global fetch.
 * @param privateKey - The buyer's key; default the devnet's buyer.
 * @returns The paying fetch.
 * @example
 * const pay = uptoBuyerFetch(devnet)
 * const response = await pay(`${baseUrl}/metered`)
 */
export function uptoBuyerFetch(
  devnet: Devnet,
  baseFetch: typeof fetch = fetch,
  privateKey: Hex = devnet.accounts.buyer.privateKey,
): typeof fetch {
  return payingFetch(devnet, baseFetch, privateKey, (signer) => new UptoEvmScheme(signer))
}

/**
 * A fetch that pays `batch-settlement` routes with x402's stock batch-settlement client: its first
 * request to a seller deposits into x402's escrow (what the seller announces, ten times the price by
 * default), the next ones sign vouchers, and it tops the channel up when the deposit runs out. The
 * client keeps its channels in its own memory, so a new one with the same key and `salt` would not know
 * a channel an earlier one opened: give each buyer of a run its own `salt`.
 *
 * @param devnet - The devnet.
 * @param baseFetch - What reaches the merchant app; default the global fetch.
 * @param privateKey - The buyer's key; default the devnet's buyer.
 * @param options - x402's client options, such as `salt` (which channel) or `depositPolicy`.
 * @returns The paying fetch.
 * @example
 * const pay = batchSettlementBuyerFetch(devnet, fetch, undefined, { salt: keccak256(toHex('bench')) })
 */
export function batchSettlementBuyerFetch(
  devnet: Devnet,
  baseFetch: typeof fetch = fetch,
  privateKey: Hex = devnet.accounts.buyer.privateKey,
  options: BatchSettlementEvmSchemeOptions = {},
): typeof fetch {
  return payingFetch(
    devnet,
    baseFetch,
    privateKey,
    (signer) => new BatchSettlementEvmScheme(signer, options),
  )
}

function payingFetch(
  devnet: Devnet,
  baseFetch: typeof fetch,
  privateKey: Hex,
  scheme: (signer: ReturnType<typeof toClientEvmSigner>) => SchemeNetworkClient,
): typeof fetch {
  const network = `eip155:${devnet.chainId}` as const
  const publicClient = createPublicClient({
    chain: devnet.viemChain,
    transport: http(devnet.rpcUrl),
  })
  const account: PrivateKeyAccount = privateKeyToAccount(privateKey)
  const client = new x402Client()
    .register(network, scheme(toClientEvmSigner(account, publicClient)))
    .setSpendControls({ allowedAssets: [{ network, asset: devnet.addresses.usdc }] })
  return wrapFetchWithPayment(baseFetch, new x402HTTPClient(client))
}
