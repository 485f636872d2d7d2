/**
 * An Express merchant: GET /weather costs 0.01 USDC, paid with x402; the revenue above a reserve is
 * swept into the vault in the background.
 *
 * Mainnet (Base):
 *   BASE_MAINNET_RPC_URL=… MERCHANT_PRIVATE_KEY=0x… X402_FACILITATOR_URL=… npx tsx examples/express-merchant.ts
 * Test network (Base Sepolia): add VAULT_CHAIN=base-sepolia and use BASE_SEPOLIA_RPC_URL instead.
 * Optional: X402_FACILITATOR_BEARER_TOKEN, VAULT_ADDRESSES, PORT (default 3000),
 * SWEEP_MIN_IDLE_USDC (default 25), SWEEP_RESERVE_USDC (default 10). See examples/merchantVault.ts.
 */
import type { AddressInfo } from 'node:net'
import express from 'express'
import { formatUsdc } from 'x402-vault'
import { createPaywall } from 'x402-vault/express'
import { facilitatorFromEnv, merchantVaultFromEnv } from './merchantVault.js'

const { vault, merchant, testnet } = await merchantVaultFromEnv(process.env)
const facilitator = facilitatorFromEnv(process.env)
await vault.verifyAddresses() // the right chain, contracts with code, wired to each other
await vault.ensureInitializedAndWait() // registers the merchant wallet with the router, once

const paywall = await createPaywall({
  vault,
  payTo: merchant.address,
  facilitator,
  testnet, // the browser paywall page's test-network mode
  routes: {
    'GET /weather': { price: '0.01', description: 'Weather now', mimeType: 'application/json' },
  },
  sweep: {
    minIdleThreshold: process.env.SWEEP_MIN_IDLE_USDC ?? '25',
    reserve: process.env.SWEEP_RESERVE_USDC ?? '10',
    onIdleDeposit: ({ idleAmount, reserveFloor, txHash }) =>
      console.log(
        `deposited ${formatUsdc(idleAmount)} USDC, kept ${formatUsdc(reserveFloor)} USDC: ${txHash}`,
      ),
    onNonFatalError: ({ phase, error }) => console.warn(`sweep ${phase}: ${error.message}`),
  },
})

const app = express()
app.use(paywall.middleware)
app.get('/weather', (_req, res) => {
  res.json({ sky: 'clear', celsius: 21 })
})
const server = app.listen(Number(process.env.PORT ?? 3000), () =>
  console.log(`listening on http://localhost:${(server.address() as AddressInfo).port}`),
)

const shutdown = async () => {
  server.close()
  server.closeAllConnections()
  await paywall.close() // waits for a sweep in flight
  console.log('closed')
}
process.once('SIGTERM', shutdown)
process.once('SIGINT', shutdown)
