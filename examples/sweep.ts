/**
 * One sweep of the merchant wallet by hand: deposits the idle USDC above the reserve into the vault
 * when it reaches the threshold, and otherwise says why not. For a cron job, or an edge merchant.
 *
 *   BASE_MAINNET_RPC_URL=… MERCHANT_PRIVATE_KEY=0x… npx tsx examples/sweep.ts
 * Optional: VAULT_CHAIN=base-sepolia (with BASE_SEPOLIA_RPC_URL), VAULT_ADDRESSES,
 * SWEEP_MIN_IDLE_USDC (default 25), SWEEP_RESERVE_USDC (default 10). `x402-vault sweep` does the same.
 */
import { formatUsdc } from 'x402-vault'
import { merchantVaultFromEnv } from './merchantVault.js'

const { vault } = await merchantVaultFromEnv(process.env)
await vault.verifyAddresses()
await vault.ensureInitializedAndWait()

const result = await vault.sweep({
  minIdleThreshold: process.env.SWEEP_MIN_IDLE_USDC ?? '25',
  reserve: process.env.SWEEP_RESERVE_USDC ?? '10',
})
console.log(
  `balance ${formatUsdc(result.walletBalance)} USDC, reserve ${formatUsdc(result.reserveFloor)} USDC, idle ${formatUsdc(result.idleAmount)} USDC`,
)
if (result.deposited) {
  console.log(`deposited ${formatUsdc(result.idleAmount)} USDC: ${result.txHash}`)
} else {
  console.log(`nothing deposited: ${result.reason}`)
}
