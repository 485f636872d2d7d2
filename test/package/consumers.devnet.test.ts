/**
 * The package where sellers' apps are: the packed tarball, installed once, from npm's cache
 * where it can (`--prefer-offline`: `npm ci` cached the tarballs, but npm 11 asks for full package
 * metadata that only the registry may have) into a fresh CommonJS app (what `npm init -y` makes) with the
 * README's Express install line, and an ES module app beside it (a folder of its own, `"type":
 * "module"`, on the same node_modules). Each runs the README's seller example, CommonJS through
 * `require` and ESM through `import`, on both devnet chains, and an x402 buyer pays it.
 */

import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeAddressesFile } from '../../harness/addressesFile.js'
import { expressSeller, packPackage } from '../../harness/localRegistry.js'
import { buyerFetch, paymentResponseOf } from '../../harness/merchantApps.js'
import { type Devnet, startDevnet } from '../../src/devnet/startDevnet.js'
import { spawnWatched, type WatchedProcess } from '../support/watchedProcess.js'

const run = promisify(execFile)
type Format = 'commonjs' | 'module'
type Chain = 'base' | 'base-sepolia'

/** The README's seller (README.md, "For sellers"), in plain JavaScript, for either chain. */
function sellerSource(format: Format): string {
  const load = {
    commonjs: `const express = require('express')
const { createPublicClient, createWalletClient } = require('viem')
const { privateKeyToAccount } = require('viem/accounts')
const { base, baseSepolia } = require('viem/chains')
const { createVaultClient, formatUsdc, loadVaultAddresses, vaultHttp } = require('x402-vault')
const { createPaywall } = require('x402-vault/express')`,
    module: `import express from 'express'
import { createPublicClient, createWalletClient } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { base, baseSepolia } from 'viem/chains'
import { createVaultClient, formatUsdc, loadVaultAddresses, vaultHttp } from 'x402-vault'
import { createPaywall } from 'x402-vault/express'`,
  }[format]
  // As the README, but for the devnet: its addresses (VAULT_ADDRESSES), either chain, and a reserve
  // of the test's choosing (two sellers in turn sweep the same wallet).
  const body = `const chainName = process.env.VAULT_CHAIN
const chain = chainName === 'base' ? base : baseSepolia
const merchant = privateKeyToAccount(process.env.MERCHANT_PRIVATE_KEY)
const transport = vaultHttp(process.env.RPC_URL)
const vault = createVaultClient({
  publicClient: createPublicClient({ chain, transport }),
  walletClient: createWalletClient({ account: merchant, chain, transport }),
  chain: chainName,
  addresses: await loadVaultAddresses(process.env.VAULT_ADDRESSES, { chain: chainName }),
})
await vault.verifyAddresses()

const paywall = await createPaywall({
  vault,
  payTo: merchant.address,
  facilitator: { url: process.env.X402_FACILITATOR_URL },
  routes: {
    'GET /weather': { price: '0.01', description: 'Weather now', mimeType: 'application/json' },
  },
  sweep: {
    minIdleThreshold: '25',
    reserve: process.env.SWEEP_RESERVE_USDC,
    onIdleDeposit: ({ idleAmount, txHash }) =>
      console.log(\`swept \${formatUsdc(idleAmount)} USDC: \${txHash}\`),
  },
})

const app = express()
app.use(paywall.middleware)
app.get('/weather', (req, res) => res.json({ sky: 'clear' }))
const server = app.listen(0, '127.0.0.1', () => console.log(\`listening \${server.address().port}\`))
process.on('SIGTERM', () => server.close(() => paywall.close().then(() => console.log('closed'))))`
  // CommonJS has no top-level await: the same body in an async main.
  return format === 'module'
    ? `${load}\n\n${body}\n`
    : `${load}\n\nasync function main() {\n${body}\n}\nmain()\n`
}

let work: string
/** The CommonJS app; the ES module app is its `esm` folder. */
let app: string
const devnets = {} as Record<Chain, Devnet>
const running: WatchedProcess[] = []

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'x402-vault-consumers-'))
  app = join(work, 'app')
  await mkdir(join(app, 'esm'), { recursive: true })
  // The two devnets start while npm packs and installs.
  const [{ tarball }, base, baseSepolia] = await Promise.all([
    packPackage(work),
    startDevnet({ chain: 'base', facilitator: true }),
    startDevnet({ chain: 'base-sepolia', facilitator: true }),
  ])
  devnets.base = base
  devnets['base-sepolia'] = baseSepolia
  // What `npm init -y` writes: a CommonJS package.
  await writeFile(
    join(app, 'package.json'),
    JSON.stringify({ name: 'seller', version: '1.0.0', main: 'index.js', type: 'commonjs' }),
  )
  await writeFile(join(app, 'esm/package.json'), JSON.stringify({ type: 'module' }))
  await writeFile(join(app, 'seller.js'), sellerSource('commonjs'))
  await writeFile(join(app, 'esm/seller.js'), sellerSource('module'))
  await run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, ...expressSeller],
    {
      cwd: app,
    },
  )
}, 240_000)

afterAll(async () => {
  for (const seller of running) if (seller.child.exitCode === null) seller.child.kill('SIGKILL')
  await Promise.all(Object.values(devnets).map((devnet) => devnet.stop()))
  if (work) await rm(work, { recursive: true, force: true })
})

/**
 * Starts the app's seller on `chain`, has each buyer pay GET /weather in turn, waits for the sweep and
 * stops it. The CommonJS and ESM sellers of one chain run one after the other: they share the
 * merchant's key.
 */
async function sellAndSweep(
  format: Format,
  chain: Chain,
  buyers: ('stock' | 'opt-in')[],
  sweep: { reserve: string; swept: string },
) {
  const devnet = devnets[chain]
  const seller = spawnWatched(
    `the ${format} seller on ${chain}`,
    'node',
    [format === 'module' ? 'esm/seller.js' : 'seller.js'],
    {
      cwd: app,
      env: {
        VAULT_CHAIN: chain,
        RPC_URL: devnet.rpcUrl,
        MERCHANT_PRIVATE_KEY: devnet.accounts.merchant.privateKey,
        VAULT_ADDRESSES: await writeAddressesFile(devnet),
        X402_FACILITATOR_URL: devnet.facilitatorUrl as string,
        SWEEP_RESERVE_USDC: sweep.reserve,
      },
    },
  )
  running.push(seller)
  const [, port] = await seller.waitFor(/^listening (\d+)$/m)
  for (const spendControls of buyers) {
    const pay = buyerFetch(devnet, fetch, devnet.accounts.buyer.privateKey, spendControls)
    const response = await pay(`http://127.0.0.1:${port}/weather`)
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ sky: 'clear' })
    expect(paymentResponseOf(response)).toMatchObject({
      success: true,
      network: `eip155:${devnet.chainId}`,
    })
  }
  await seller.waitFor(
    new RegExp(`^swept ${sweep.swept.replace('.', '\\.')} USDC: 0x[0-9a-f]{64}$`, 'm'),
  )
  expect(await seller.stop()).toBe(0)
  expect(seller.stdout()).toMatch(/^closed$/m)
  expect(seller.stderr()).toBe('')
}

/** The merchant's 1,000 USDC and a 0.01 USDC sale, above a 500 USDC reserve. */
const firstSweep = { reserve: '500', swept: '500.01' }
/** The 500 USDC kept and a second 0.01 USDC sale, above the README's 10 USDC reserve. */
const secondSweep = { reserve: '10', swept: '490.01' }

describe('the packed package in a fresh CommonJS app and a fresh ESM app', () => {
  // The two chains' devnets are independent: their cases run at the same time.
  it.concurrent('on base, a buyer with x402 default spend controls pays the README seller, CommonJS then ESM', async () => {
    await sellAndSweep('commonjs', 'base', ['stock'], firstSweep)
    await sellAndSweep('module', 'base', ['stock'], secondSweep)
  })

  // On Base Sepolia the route accepts the vault's USDC (Aave's test token) and Circle's test USDC, the
  // one x402 pays by default there. A stock buyer pays Circle's, which stays liquid: the sweep that
  // follows the opted-in buyer's payment (`allowedAssets`) moves the vault's asset only, to the unit.
  it.concurrent('on base-sepolia, a stock buyer and one that opts in to the vault asset pay the README seller, CommonJS then ESM', async () => {
    await sellAndSweep('commonjs', 'base-sepolia', ['stock', 'opt-in'], firstSweep)
    await sellAndSweep('module', 'base-sepolia', ['opt-in', 'stock'], secondSweep)
  })
})
