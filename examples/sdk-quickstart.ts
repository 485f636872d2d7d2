/**
 * The vault SDK in one script: verify the deployment, register, read, plan, deposit and withdraw.
 *
 * Point it at a devnet (`npx x402-vault devnet` prints these lines) or at Base Sepolia:
 *   BASE_SEPOLIA_RPC_URL=…  VAULT_ADDRESSES=…/addresses.json  MERCHANT_PRIVATE_KEY=0x…
 *   npx tsx examples/sdk-quickstart.ts
 */
import { createPublicClient, createWalletClient, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { baseSepolia } from 'viem/chains'
import {
  createVaultClient,
  formatUsdc,
  isUnavailable,
  loadVaultAddresses,
  parseUsdc,
  vaultHttp,
} from 'x402-vault'

const rpcUrl = process.env.BASE_SEPOLIA_RPC_URL
const key = process.env.MERCHANT_PRIVATE_KEY as Hex | undefined
if (!rpcUrl || !key) {
  throw new Error('Set BASE_SEPOLIA_RPC_URL and MERCHANT_PRIVATE_KEY (see `x402-vault devnet`).')
}
// Without VAULT_ADDRESSES the client uses the public Base Sepolia deployment.
const addresses = process.env.VAULT_ADDRESSES
  ? await loadVaultAddresses(process.env.VAULT_ADDRESSES, { chain: 'base-sepolia' })
  : undefined

const account = privateKeyToAccount(key)
const transport = vaultHttp(rpcUrl) // bounded retries on 429/5xx/timeouts, honours Retry-After
const vault = createVaultClient({
  publicClient: createPublicClient({ chain: baseSepolia, transport }),
  walletClient: createWalletClient({ account, chain: baseSepolia, transport }),
  chain: 'base-sepolia',
  addresses,
})

await vault.verifyAddresses() // chain id, code and wiring: 2 RPC round trips
await vault.ensureInitializedAndWait() // registers the wallet once; no-op afterwards

const status = await vault.getStatus() // one round trip, one block
const { aave, morpho, optimal } = await vault.getYield()
console.log('paused:', status.depositsPaused, 'symbol:', status.shareSymbol)
const selected = isUnavailable(optimal) ? `none (${optimal.reason})` : optimal.venue
console.log('APY aave:', aave.spotApy, 'morpho:', morpho.spotApy, 'new deposits go to:', selected)

// Plan without signing (works for any address), then do it for real.
const plan = await vault.planDeposit({ wallet: account.address, amount: parseUsdc('25') })
console.log('needs approval:', plan.needsApproval, 'min shares:', formatUsdc(plan.minSharesOut))

const { txHash, sharesMinted } = await vault.depositAndWait({ amount: parseUsdc('25') })
console.log('deposited 25 USDC:', txHash, formatUsdc(sharesMinted), 'shares')

const { usdcReturned } = await vault.withdrawAndWait({ amount: parseUsdc('10') })
console.log('withdrew', formatUsdc(usdcReturned), 'USDC')

const position = await vault.getPosition({ wallet: account.address })
if (!isUnavailable(position.currentValue)) {
  console.log('position worth', formatUsdc(position.currentValue), 'USDC')
}
