/**
 * What the seller measurements share: the merchant's vault client, a merchant app (the test apps'
 * Express app on loopback) behind this package's paywall, and a deadline so that a stuck sweep fails
 * the bench instead of hanging it.
 */
import { HTTPFacilitatorClient, x402ResourceServer } from '@x402/core/server'
import type { SchemeNetworkServer } from '@x402/core/types'
import { BatchSettlementEvmScheme, InMemoryChannelStorage } from '@x402/evm/batch-settlement/server'
import { ExactEvmScheme } from '@x402/evm/exact/server'
import { UptoEvmScheme } from '@x402/evm/upto/server'
import { paymentMiddleware, setSettlementOverrides } from '@x402/express'
import type { Response } from 'express'
import { createPublicClient, createWalletClient, type Hex, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { frameworks, type Handlers, paidRoutes } from '../harness/merchantApps.js'
import type { Devnet } from '../src/devnet/startDevnet.js'
import {
  type AttachToResourceServerOptions,
  createVaultClient,
  readX402UsdcAsset,
  type Sweeper,
  type VaultClient,
  x402UsdcPrice,
} from '../src/index.js'
import {
  type CreatePaywallOptions,
  createPaywall,
  type PaywallScheme,
} from '../src/plugins/express.js'
import { gasSponsoringExtensions } from '../src/plugins/gasSponsoring.js'

const express = frameworks.find((framework) => framework.name === 'express')

/**
 * The merchant's vault client on the devnet, with a wallet client that sends its deposits (or another
 * account's, such as the buyer's).
 *
 * @param devnet - The devnet.
 * @param privateKey - Whose client; default the merchant's.
 * @returns The vault client.
 * @example
 * const vault = merchantVaultClient(devnet)
 */
export function merchantVaultClient(
  devnet: Devnet,
  privateKey: Hex = devnet.accounts.merchant.privateKey,
): VaultClient {
  const account = privateKeyToAccount(privateKey)
  const transport = http(devnet.rpcUrl)
  return createVaultClient({
    publicClient: createPublicClient({ chain: devnet.viemChain, transport, pollingInterval: 50 }),
    walletClient: createWalletClient({ account, chain: devnet.viemChain, transport }),
    chain: devnet.chain,
    addresses: devnet.addresses,
  })
}

/**
 * The devnet's latest block number, read now.
 *
 * @param devnet - The devnet.
 * @returns The block number.
 * @example
 * const firstBlock = (await latestBlock(devnet)) + 1n
 */
export function latestBlock(devnet: Devnet): Promise<bigint> {
  return createPublicClient({
    chain: devnet.viemChain,
    transport: http(devnet.rpcUrl),
  }).getBlockNumber({
    cacheTime: 0,
  })
}

/** A running merchant app: the URL of its paid route and a way to stop it. */
export type Shop = { paidUrl: string; stop: () => Promise<void> }

/** A merchant app behind `createPaywall`: with its sweeper. */
export type PaywallShop = Shop & { sweeper: Sweeper }

/**
 * How a shop's `GET /paid` sells: its scheme (default `exact`); for `upto`, what the handler charges
 * (base units, at most the price; without it the price is settled); for `batch-settlement`, the
 * paywall's `batchSettlement` options.
 */
export type Sells = {
  scheme?: PaywallScheme
  charge?: bigint
  batchSettlement?: CreatePaywallOptions['batchSettlement']
}

/**
 * Starts the test apps' Express app (`GET /paid`) on loopback behind `middleware`.
 *
 * @param middleware - x402's middleware or this package's paywall middleware.
 * @param handlers - What the paid handler does before it answers (a usage-priced one charges).
 * @returns The shop.
 * @example
 * const shop = await startShop(paywall.middleware)
 */
export async function startShop(middleware: unknown, handlers?: Handlers): Promise<Shop> {
  if (!express) throw new Error('the test apps have no Express app')
  const app = await express.start(middleware, handlers)
  return { paidUrl: `${app.baseUrl}/paid`, stop: app.stop }
}

/**
 * The merchant's Express app behind `createPaywall` (the devnet's facilitator) with the sweeper on.
 *
 * @param devnet - The devnet, with its facilitator.
 * @param price - The price of `GET /paid`, in USDC (for `upto`, the most a request may cost).
 * @param sweep - The sweeper's options.
 * @param sells - The scheme, and what a usage-priced handler charges (`paywall.charge`).
 * @returns The shop; `stop()` also closes the paywall (after the sweep in flight, and for
 *   `batch-settlement` after claiming and settling what is owed).
 * @example
 * const shop = await openPaywallShop(devnet, '1', { minIdleThreshold: '10', reserve })
 */
export async function openPaywallShop(
  devnet: Devnet,
  price: string,
  sweep: Omit<AttachToResourceServerOptions, 'wallet'>,
  sells: Sells = {},
): Promise<PaywallShop> {
  const { sweeper, ...shop } = await openCreatePaywallShop(devnet, price, sweep, sells)
  if (!sweeper) throw new Error('createPaywall with sweep options returned no sweeper')
  return { ...shop, sweeper }
}

/** `createPaywall` on the devnet's facilitator selling `GET /paid`, its sweeper on or off. */
async function openCreatePaywallShop(
  devnet: Devnet,
  price: string,
  sweep: Omit<AttachToResourceServerOptions, 'wallet'> | false,
  sells: Sells,
): Promise<Shop & { sweeper: Sweeper | undefined }> {
  const paywall = await createPaywall({
    vault: merchantVaultClient(devnet),
    payTo: devnet.accounts.merchant.address,
    facilitator: { url: facilitatorUrlOf(devnet) },
    routes: paidRoutes(price, sells.scheme),
    sweep,
    ...(sells.batchSettlement ? { batchSettlement: sells.batchSettlement } : {}),
  })
  const { charge } = sells
  const shop = await startShop(
    paywall.middleware,
    charge === undefined
      ? {}
      : { beforePaidAnswer: (res) => void paywall.charge(res as Response, charge) },
  )
  return {
    paidUrl: shop.paidUrl,
    sweeper: paywall.sweeper,
    stop: async () => {
      await shop.stop()
      await paywall.close()
    },
  }
}

/**
 * The merchant's Express app behind `createPaywall` with `sweep: false`, as an instance that
 * `x402-vault sweep --watch` sweeps: it settles sales and sends nothing.
 *
 * @param devnet - The devnet, with its facilitator.
 * @param price - The price of `GET /paid`, in USDC.
 * @param sells - The scheme, and what a usage-priced handler charges.
 * @returns The shop; `stop()` also closes the paywall (for `batch-settlement`, after claiming and
 *   settling what is owed).
 * @example
 * const shop = await openShopWithoutSweeper(devnet, '10')
 */
export async function openShopWithoutSweeper(
  devnet: Devnet,
  price: string,
  sells: Sells = {},
): Promise<Shop> {
  const { paidUrl, stop } = await openCreatePaywallShop(devnet, price, false, sells)
  return { paidUrl, stop }
}

/** x402's own server side of each scheme, as a seller without this package registers it. */
const plainSchemeServers: Record<PaywallScheme, (devnet: Devnet) => SchemeNetworkServer> = {
  exact: () => new ExactEvmScheme(),
  upto: () => new UptoEvmScheme(),
  'batch-settlement': (devnet) =>
    new BatchSettlementEvmScheme(devnet.accounts.merchant.address, {
      storage: new InMemoryChannelStorage(),
    }),
}

/**
 * The same app as {@link openPaywallShop}'s behind x402's own middleware (`@x402/express`'s
 * `paymentMiddleware`): a resource server with the devnet's facilitator and x402's server scheme, the
 * same price in the vault's USDC, and the EIP-2612 gas sponsoring that `createPaywall` declares on a
 * Permit2 asset (with it the buyer's client checks its Permit2 allowance on chain before each payment,
 * 3-6 ms on the devnet: a cost of the payment requirements, not of what the paywall adds). A
 * usage-priced handler charges with x402's `setSettlementOverrides`. No sweeper, and for
 * `batch-settlement` no channel jobs: the vouchers stay in its memory.
 *
 * @param devnet - The devnet, with its facilitator.
 * @param price - The price of `GET /paid`, in USDC (for `upto`, the most a request may cost).
 * @param sells - The scheme and the charge (`batchSettlement` options do not apply).
 * @returns The shop.
 * @example
 * const plain = await openPlainShop(devnet, '1', { scheme: 'upto', charge: 500_000n })
 */
export async function openPlainShop(
  devnet: Devnet,
  price: string,
  sells: Sells = {},
): Promise<Shop> {
  const scheme = sells.scheme ?? 'exact'
  const vault = merchantVaultClient(devnet)
  const resourceServer = new x402ResourceServer(
    new HTTPFacilitatorClient({ url: facilitatorUrlOf(devnet) }),
  ).register(vault.network, plainSchemeServers[scheme](devnet))
  const asset = await readX402UsdcAsset(vault)
  const accepts = {
    scheme,
    network: vault.network,
    payTo: devnet.accounts.merchant.address,
    // The devnet's USDC is not x402's default asset for the network: the price names it.
    price: x402UsdcPrice({ chain: devnet.chain, amount: price, asset }),
  }
  const extensions = await gasSponsoringExtensions(asset)
  const middleware = paymentMiddleware(
    {
      'GET /paid': {
        accepts,
        description: 'A paid answer',
        mimeType: 'application/json',
        ...(extensions ? { extensions } : {}),
      },
    },
    resourceServer,
  )
  const { charge } = sells
  return startShop(
    middleware,
    charge === undefined
      ? {}
      : {
          beforePaidAnswer: (res) =>
            setSettlementOverrides(res as Response, { amount: charge.toString() }),
        },
  )
}

/**
 * The devnet's facilitator URL; the seller measurements need one.
 *
 * @param devnet - A devnet started with `facilitator: true`.
 * @returns Its URL.
 */
export function facilitatorUrlOf(devnet: Devnet): string {
  if (!devnet.facilitatorUrl) throw new Error('the bench devnet has no x402 facilitator')
  return devnet.facilitatorUrl
}

/**
 * `promise`, or a rejection once `timeoutMs` has passed: a stuck sweep fails the bench, never hangs it.
 *
 * @param what - What is awaited, for the error.
 * @param promise - What to wait for.
 * @param timeoutMs - The deadline.
 * @returns What `promise` resolves to.
 * @example
 * await withDeadline('the burst’s deposits', events.until(() => swept), 60_000)
 */
export async function withDeadline<T>(
  what: string,
  promise: Promise<T>,
  timeoutMs: number,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)),
      timeoutMs,
    )
  })
  try {
    return await Promise.race([promise, expired])
  } finally {
    clearTimeout(timer)
  }
}
