/**
 * What the seller measurements share: the merchant's vault client, a merchant app (the test apps'
 * Express app on loopback) behind this package's paywall, and a deadline so that a stuck sweep fails
 * the bench instead of hanging it.
 */
import { createPublicClient, createWalletClient, type Hex, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { frameworks, paidRoutes } from '../harness/merchantApps.js'
import type { Devnet } from '../src/devnet/startDevnet.js'
import {
  type AttachToResourceServerOptions,
  createVaultClient,
  type Sweeper,
  type VaultClient,
} from '../src/index.js'
import { createPaywall } from '../src/plugins/express.js'

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
 * Starts the test apps' Express app (`GET /paid`) on loopback behind `middleware`.
 *
 * @param middleware - x402's middleware or this package's paywall middleware.
 * @returns The shop.
 * @example
 * const shop = await startShop(paywall.middleware)
 */
export async function startShop(middleware: unknown): Promise<Shop> {
  if (!express) throw new Error('the test apps have no Express app')
  const app = await express.start(middleware)
  return { paidUrl: `${app.baseUrl}/paid`, stop: app.stop }
}

/**
 * The merchant's Express app behind `createPaywall` (the devnet's facilitator) with the sweeper on.
 *
 * @param devnet - The devnet, with its facilitator.
 * @param price - The price of `GET /paid`, in USDC.
 * @param sweep - The sweeper's options.
 * @returns The shop; `stop()` also closes the paywall (after the sweep in flight).
 * @example
 * const shop = await openPaywallShop(devnet, '1', { minIdleThreshold: '10', reserve })
 */
export async function openPaywallShop(
  devnet: Devnet,
  price: string,
  sweep: Omit<AttachToResourceServerOptions, 'wallet'>,
): Promise<PaywallShop> {
  const paywall = await createPaywall({
    vault: merchantVaultClient(devnet),
    payTo: devnet.accounts.merchant.address,
    facilitator: { url: facilitatorUrlOf(devnet) },
    routes: paidRoutes(price),
    sweep,
  })
  const shop = await startShop(paywall.middleware)
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
 * @returns The shop; `stop()` also closes the paywall.
 * @example
 * const shop = await openShopWithoutSweeper(devnet, '10')
 */
export async function openShopWithoutSweeper(devnet: Devnet, price: string): Promise<Shop> {
  const paywall = await createPaywall({
    vault: merchantVaultClient(devnet),
    payTo: devnet.accounts.merchant.address,
    facilitator: { url: facilitatorUrlOf(devnet) },
    routes: paidRoutes(price),
    sweep: false,
  })
  const shop = await startShop(paywall.middleware)
  return {
    paidUrl: shop.paidUrl,
    stop: async () => {
      await shop.stop()
      await paywall.close()
    },
  }
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
