/**
 * The main job on the devnet, end to end and offline:
 * a buyer pays a merchant with x402 (settled by a local facilitator), the merchant's idle USDC above
 * a reserve goes into the vault, time passes, yield shows, and the merchant withdraws.
 *
 * Run: npm run demo
 */
import { x402Client } from '@x402/core/client'
import { HTTPFacilitatorClient } from '@x402/core/http'
import type { PaymentRequirements } from '@x402/core/types'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { createPublicClient, createWalletClient, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { startDevnet } from '../src/devnet/index.js'
import { createVaultClient, formatUsdc, parseUsdc, unwrapField } from '../src/index.js'

const payments = 5
const price = parseUsdc('0.01')
const reserve = parseUsdc('100')

const devnet = await startDevnet({ chain: 'base-sepolia', facilitator: true })
const say = (line = '') => process.stdout.write(`${line}\n`)

try {
  say(`x402-vault demo on a local devnet (${devnet.chain}, chain id ${devnet.chainId})`)
  say(`  rpc ${devnet.rpcUrl}   facilitator ${devnet.facilitatorUrl}`)
  say()

  const merchant = privateKeyToAccount(devnet.accounts.merchant.privateKey)
  const publicClient = createPublicClient({
    chain: devnet.viemChain,
    transport: http(devnet.rpcUrl),
  })
  const walletClient = createWalletClient({
    account: merchant,
    chain: devnet.viemChain,
    transport: http(devnet.rpcUrl),
  })
  const vault = createVaultClient({
    publicClient,
    walletClient,
    chain: devnet.chain,
    addresses: devnet.addresses,
  })
  await vault.verifyAddresses()
  say('1. The vault client verified every address on chain.')

  // The buyer pays the merchant; the facilitator verifies and settles on chain.
  const requirements: PaymentRequirements = {
    scheme: 'exact',
    network: vault.network,
    asset: vault.addresses.usdc,
    amount: price.toString(),
    payTo: merchant.address,
    maxTimeoutSeconds: 300,
    extra: { name: 'USD Coin', version: '2' },
  }
  const buyer = new x402Client()
    .register(
      vault.network,
      new ExactEvmScheme(privateKeyToAccount(devnet.accounts.buyer.privateKey)),
    )
    .setSpendControls(false)
  const facilitator = new HTTPFacilitatorClient({ url: devnet.facilitatorUrl as string })
  for (let i = 0; i < payments; i++) {
    const payment = await buyer.createPaymentPayload({
      x402Version: 2,
      resource: {
        url: 'http://127.0.0.1/weather',
        description: 'weather',
        mimeType: 'application/json',
      },
      accepts: [requirements],
    })
    const verified = await facilitator.verify(payment, requirements)
    if (!verified.isValid) throw new Error(`payment ${i + 1} invalid: ${verified.invalidReason}`)
    const settled = await facilitator.settle(payment, requirements)
    if (!settled.success) throw new Error(`payment ${i + 1} not settled: ${settled.errorReason}`)
  }
  const merchantBalance = unwrapField((await vault.getPosition(merchant.address)).liquidUsdc)
  say(
    `2. The buyer paid ${payments} × ${formatUsdc(price)} USDC with x402; the merchant holds ${formatUsdc(merchantBalance)} USDC.`,
  )

  await vault.ensureInitializedAndWait({ wallet: merchant.address })
  const idle = merchantBalance - reserve
  const deposit = await vault.depositAndWait({ amount: idle })
  say(
    `3. The merchant registered and deposited its idle ${formatUsdc(idle)} USDC above a ${formatUsdc(reserve)} USDC reserve`,
  )
  say(`   (tx ${deposit.txHash}, ${formatUsdc(deposit.sharesMinted)} shares).`)

  const days = 30
  await devnet.advanceTime(days * 24 * 3600)
  const after = await vault.getPosition(merchant.address)
  const yields = await vault.getYield()
  say(
    `4. ${days} days later the position is worth ${formatUsdc(unwrapField(after.currentValue, 'currentValue'))} USDC:`,
  )
  say(
    `   ${formatUsdc(unwrapField(after.accruedYield, 'accruedYield'))} USDC of yield (Aave ${unwrapField(yields.aave.spotApy)}, Morpho ${unwrapField(yields.morpho.spotApy)}).`,
  )

  const withdrawn = await vault.withdrawAndWait({ amount: parseUsdc('50') })
  const end = await vault.getPosition(merchant.address)
  say(
    `5. The merchant withdrew ${formatUsdc(withdrawn.usdcReturned)} USDC (tx ${withdrawn.txHash});`,
  )
  say(
    `   it now holds ${formatUsdc(unwrapField(end.liquidUsdc, 'liquidUsdc'))} USDC liquid and ${formatUsdc(unwrapField(end.currentValue, 'currentValue'))} USDC in the vault.`,
  )
  say()
  say('Done: every step ran on real transactions on the local chain.')
} finally {
  await devnet.stop()
}
