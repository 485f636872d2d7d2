/**
 * The whole product on the devnet, offline: an Express merchant behind `createPaywall`, an agent paying
 * it with x402 (settled by the local facilitator) from its vault position (`vault.attachToClient` recalls each
 * payment just before x402 signs it), the sweeper moving the merchant's idle USDC above a reserve into
 * the vault, a month of yield, and the MCP server (the built bin, over stdio) answering a real MCP client.
 *
 * Run: npm run demo   (it builds `dist/` first: the MCP server runs from there, as `npx x402-vault mcp`)
 */

import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { x402Client } from '@x402/core/client'
import { decodePaymentResponseHeader } from '@x402/core/http'
import {
  toClientEvmSigner,
  x402ExactPermit2ProxyABI,
  x402ExactPermit2ProxyAddress,
} from '@x402/evm'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { wrapFetchWithPayment } from '@x402/fetch'
import express from 'express'
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  decodeFunctionData,
  type Hash,
  http,
  isAddressEqual,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import {
  createVaultClient,
  formatUsdc,
  type IdleDeposit,
  parseUsdc,
  type Recall,
  unwrapField,
  usdcAbi,
} from 'x402-vault'
import { type Devnet, startDevnet, writeAddressesFile } from 'x402-vault/devnet'
import { createPaywall } from 'x402-vault/express'

const price = parseUsdc('2.5')
const agentFunds = parseUsdc('20')
const payments = 4
const threshold = '10'
const reserve = '100'
const days = 30
const mcpBin = join(import.meta.dirname, '../dist/mcp/bin.js')

const say = (line = '') => process.stdout.write(`${line}\n`)
/** A USDC amount right-aligned in a fixed width, so that columns of amounts line up. */
const usdc = (amount: bigint) => `${formatUsdc(amount).padStart(12)} USDC`
/** A label and a value on one line, the labels padded to one width. */
const row = (label: string, value: string) => say(`   ${label.padEnd(26)}${value}`)

/** Which step is running: a failure names it. */
let step = 'starting the devnet'
const cleanups: (() => Promise<void>)[] = []

async function main() {
  const devnet = await startDevnet({
    chain: 'base-sepolia',
    facilitator: true,
    fundUsdc: parseUsdc('100'),
  })
  cleanups.push(() => devnet.stop())
  say(`x402-vault demo: the whole product on a local devnet (nothing leaves this machine)`)
  say(`   chain ${devnet.chain} (id ${devnet.chainId}) at ${devnet.rpcUrl}`)
  say(`   x402 facilitator at ${devnet.facilitatorUrl}`)
  say()

  step = 'starting the Express merchant'
  const merchant = await startMerchant(devnet)
  say(`1. An Express merchant sells GET /forecast for ${formatUsdc(price)} USDC.`)
  say(
    `   createPaywall sweeps idle USDC above a ${reserve} USDC reserve once it reaches ${threshold} USDC.`,
  )
  row('merchant wallet', merchant.address)
  row('wallet balance', usdc(await merchant.liquid()))
  say()

  step = 'preparing the agent'
  const agent = await startAgent(devnet)
  say(
    `2. An agent keeps its ${formatUsdc(agentFunds)} USDC in the vault (0 liquid) and pays GET /forecast`,
  )
  say(
    `   ${payments} times with @x402/fetch; vault.attachToClient recalls each payment before x402 signs it:`,
  )
  row('agent wallet', agent.address)
  const pay = agent.pay
  for (let i = 1; i <= payments; i++) {
    const response = await pay(`${merchant.url}/forecast`)
    if (response.status !== 200) throw new Error(`payment ${i} answered HTTP ${response.status}`)
    await response.json()
    const recall = agent.recalls[i - 1]
    row(
      `payment ${i}`,
      `${usdc(price)}   recalled ${usdc(recall?.amount ?? 0n)}   merchant wallet ${usdc(await merchant.liquid())}`,
    )
    if (i === 1) say(await howPaid(devnet, response))
    if (i === 1) {
      // A manual sweep in the sweeper's own queue shows the rule holding the money back.
      const sweep = await merchant.paywall.sweeper.sweep()
      if (sweep.deposited) throw new Error('the sweeper deposited below the threshold')
      say(`   idle ${formatUsdc(sweep.idleAmount)} USDC < ${threshold} USDC: stays in the wallet`)
    }
  }
  say()

  step = 'waiting for the sweeper to deposit'
  const deposits = await merchant.depositsUpTo(parseUsdc(reserve))
  say(`3. The sweeper deposited the idle USDC above the reserve (onIdleDeposit):`)
  for (const deposit of deposits) {
    row('balance seen', usdc(deposit.walletBalance))
    row('reserve kept', usdc(deposit.reserveFloor))
    row('deposited', usdc(deposit.idleAmount))
    row('transaction', deposit.txHash)
  }
  const before = await merchant.vault.getPosition({ wallet: merchant.address })
  row('wallet balance now', usdc(await merchant.liquid()))
  row('position in the vault', usdc(unwrapField(before.currentValue, 'currentValue')))
  const recalled = agent.recalls.reduce((sum, recall) => sum + recall.amount, 0n)
  const swept = deposits.reduce((sum, deposit) => sum + deposit.idleAmount, 0n)
  say(`   The money went round:`)
  row('agent vault → agent wallet', `${usdc(recalled)} in ${agent.recalls.length} recalls`)
  row('agent wallet → merchant', `${usdc(price * BigInt(payments))} in ${payments} payments`)
  row('merchant → merchant vault', `${usdc(swept)} in ${deposits.length} sweep(s)`)
  row('agent wallet now', usdc(await agent.liquid()))
  say()

  step = 'accruing a month of yield'
  // The venues accrue the month; the chain's clock stays at wall time, so x402 payments keep working
  // (advanceTime would put the chain ahead of the buyers' signed deadlines).
  await devnet.advanceYield(days * 24 * 3600)
  const after = await merchant.vault.getPosition({ wallet: merchant.address })
  const yields = await merchant.vault.getYield()
  say(`4. ${days} days of yield later (devnet.advanceYield; the clock did not move):`)
  row('position then', usdc(unwrapField(before.currentValue, 'currentValue')))
  row('position now', usdc(unwrapField(after.currentValue, 'currentValue')))
  row('yield earned', usdc(unwrapField(after.accruedYield, 'accruedYield')))
  row(
    'venue APYs',
    `Aave ${unwrapField(yields.aave.spotApy)}, Morpho ${unwrapField(yields.morpho.spotApy)}`,
  )
  say()

  step = 'paying after the month of yield'
  const later = await pay(`${merchant.url}/forecast`)
  if (later.status !== 200) throw new Error(`the payment answered HTTP ${later.status}`)
  row(
    'a payment now',
    `HTTP ${later.status}, recalled ${usdc(agent.recalls.at(-1)?.amount ?? 0n)}: payments still work`,
  )
  await agent.detach()
  say()

  step = 'closing the merchant'
  await merchant.close()

  step = 'starting the MCP server'
  const mcp = await connectMcp(devnet)
  say(`5. The MCP server (dist/mcp/bin.js over stdio) answers a real MCP client:`)
  step = 'calling vault_status over MCP'
  const status = await callTool(mcp, 'vault_status', {})
  row(
    'vault_status',
    `deposits ${status.depositsPaused ? 'paused' : 'open'}, ${usdcText(status.totalAssets)} under management`,
  )
  step = 'calling vault_get_position over MCP'
  const position = await callTool(mcp, 'vault_get_position', { wallet: merchant.address })
  row('vault_get_position', `the merchant's position is worth ${usdcText(position.currentValue)}`)
  step = 'calling vault_plan_deposit over MCP'
  // The buyer's wallet is new to the vault: never registered, no allowance for the router.
  const plan = await callTool(mcp, 'vault_plan_deposit', {
    wallet: devnet.accounts.buyer.address,
    amountUsdc: '25',
  })
  row('vault_plan_deposit', `25 USDC from the buyer's wallet, new to the vault:`)
  row('', `needsApproval ${plan.needsApproval}, needsRegistration ${plan.needsRegistration}`)
  for (const { step: n, description } of plan.steps as { step: number; description: string }[]) {
    // The first clause says it; the rest (function, allowance) is for the AI client.
    row('', `unsigned step ${n}: ${description.split(' (')[0]}`)
  }
  say()
  say('Done: every step ran on real transactions, and nothing was signed by the MCP server.')
}

/**
 * The agent: a new wallet that the devnet's buyer funds with USDC (and anvil with gas), registered with
 * the vault, all of its USDC deposited, and `vault.attachToClient` on its x402 client.
 */
async function startAgent(devnet: Devnet) {
  const account = privateKeyToAccount(generatePrivateKey())
  const transport = http(devnet.rpcUrl)
  const publicClient = createPublicClient({ chain: devnet.viemChain, transport })
  await createTestClient({ mode: 'anvil', chain: devnet.viemChain, transport }).setBalance({
    address: account.address,
    value: 10n ** 18n,
  })
  const funder = createWalletClient({
    account: privateKeyToAccount(devnet.accounts.buyer.privateKey),
    chain: devnet.viemChain,
    transport,
  })
  const funded = await funder.writeContract({
    address: devnet.addresses.usdc,
    abi: usdcAbi,
    functionName: 'transfer',
    args: [account.address, agentFunds],
  })
  await publicClient.waitForTransactionReceipt({ hash: funded })
  const vault = createVaultClient({
    publicClient,
    walletClient: createWalletClient({ account, chain: devnet.viemChain, transport }),
    chain: devnet.chain,
    addresses: devnet.addresses,
  })
  await vault.ensureInitializedAndWait()
  await vault.depositAndWait({ amount: agentFunds })
  const network = `eip155:${devnet.chainId}` as const
  const client = new x402Client()
    .register(network, new ExactEvmScheme(toClientEvmSigner(account, publicClient)))
    .setSpendControls({
      allowedAssets: [{ network, asset: devnet.addresses.usdc, maxAmountPerPayment: `${price}` }],
    })
  const recalls: Recall[] = []
  const attachment = vault.attachToClient(client, { onRecall: (recall) => recalls.push(recall) })
  return {
    address: account.address,
    recalls,
    pay: wrapFetchWithPayment(fetch, client),
    liquid: () => vault.getUsdcBalance({ wallet: account.address }),
    detach: () => attachment.detach(),
  }
}

/** The merchant: an Express app on a loopback port behind `createPaywall`, its vault client and deposits. */
async function startMerchant(devnet: Devnet) {
  const account = privateKeyToAccount(devnet.accounts.merchant.privateKey)
  const transport = http(devnet.rpcUrl)
  const vault = createVaultClient({
    publicClient: createPublicClient({ chain: devnet.viemChain, transport }),
    walletClient: createWalletClient({ account, chain: devnet.viemChain, transport }),
    chain: devnet.chain,
    addresses: devnet.addresses,
  })
  await vault.verifyAddresses()

  const deposits: IdleDeposit[] = []
  let depositArrived = () => {}
  const problems: string[] = []
  const paywall = await createPaywall({
    vault,
    payTo: account.address,
    facilitator: { url: devnet.facilitatorUrl as string },
    routes: {
      'GET /forecast': {
        price: formatUsdc(price),
        description: "Tomorrow's forecast",
        mimeType: 'application/json',
      },
    },
    sweep: {
      minIdleThreshold: threshold,
      reserve,
      onIdleDeposit: (deposit) => {
        deposits.push(deposit)
        depositArrived()
      },
      onNonFatalError: ({ phase, error }) => problems.push(`${phase}: ${error.message}`),
    },
  })
  const app = express()
  app.use(paywall.middleware)
  app.get('/forecast', (_req, res) => {
    res.json({ sky: 'clear', high: 21 })
  })
  const server = createServer(app)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const close = async () => {
    await paywall.close()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  cleanups.push(close)
  const liquid = async () =>
    unwrapField((await vault.getPosition({ wallet: account.address })).liquidUsdc, 'liquidUsdc')

  return {
    address: account.address,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    vault,
    paywall,
    liquid,
    close: async () => {
      cleanups.splice(cleanups.indexOf(close), 1)
      await close()
    },
    /** The deposits once the wallet is down to `floor`: the sweeper runs after the paid responses. */
    async depositsUpTo(floor: bigint, timeoutMs = 30_000): Promise<IdleDeposit[]> {
      const deadline = Date.now() + timeoutMs
      const failOnProblem = () => {
        if (problems.length > 0) throw new Error(`the sweeper reported ${problems[0]}`)
      }
      while ((await liquid()) > floor) {
        failOnProblem()
        if (Date.now() > deadline) throw new Error(`no deposit within ${timeoutMs / 1000} s`)
        await new Promise<void>((resolve) => {
          depositArrived = resolve
          setTimeout(resolve, 200)
        })
      }
      // The balance falls once the deposit is mined, before the sweep that sent it has seen its
      // receipt and reported it to onIdleDeposit: wait for that sweep to end.
      await paywall.sweeper.idle()
      failOnProblem()
      return deposits
    },
  }
}

/** One line on how the agent paid, read from the settlement transaction the facilitator sent. */
async function howPaid(devnet: Devnet, response: Response): Promise<string> {
  const header = response.headers.get('PAYMENT-RESPONSE')
  if (!header) throw new Error('the paid response has no PAYMENT-RESPONSE header')
  const hash = decodePaymentResponseHeader(header).transaction as Hash
  const publicClient = createPublicClient({
    chain: devnet.viemChain,
    transport: http(devnet.rpcUrl),
  })
  const settlement = await publicClient.getTransaction({ hash })
  if (settlement.to && isAddressEqual(settlement.to, x402ExactPermit2ProxyAddress)) {
    // Base Sepolia's USDC has no EIP-3009: x402 pays it through Permit2. A buyer who never approved
    // Permit2 signs an EIP-2612 permit that the facilitator submits with the payment (gas sponsoring).
    const { functionName } = decodeFunctionData({
      abi: x402ExactPermit2ProxyABI,
      data: settlement.input,
    })
    const sponsored = functionName === 'settleWithPermit' ? ' with a sponsored permit' : ''
    return `   paid through Permit2${sponsored} (Base Sepolia's USDC has no EIP-3009)`
  }
  return `   paid with EIP-3009 (transferWithAuthorization)`
}

/** The built MCP server on stdio, its stderr kept off our stdout, and a real MCP client on it. */
async function connectMcp(devnet: Devnet) {
  const folder = await mkdtemp(join(tmpdir(), 'x402-vault-demo-'))
  cleanups.push(() => rm(folder, { recursive: true, force: true }))
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [mcpBin],
    env: {
      PATH: process.env.PATH ?? '',
      BASE_SEPOLIA_RPC_URL: devnet.rpcUrl,
      VAULT_ADDRESSES: await writeAddressesFile(devnet, join(folder, 'addresses.json')),
      MCP_LOG_LEVEL: 'error',
    },
    stderr: 'pipe',
  })
  let stderr = ''
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8')
  })
  const client = new Client({ name: 'x402-vault-demo', version: '1.0.0' })
  try {
    await client.connect(transport)
  } catch (error) {
    throw new Error(`${(error as Error).message} ${stderr.trim().split('\n').at(-1) ?? ''}`)
  }
  cleanups.push(() => client.close())
  return client
}

async function callTool(client: Client, name: string, args: Record<string, unknown>) {
  const answer = await client.callTool({ name, arguments: args })
  const text = (answer.content as { type: string; text?: string }[])[0]?.text ?? ''
  if (answer.isError) throw new Error(`${name} refused: ${text}`)
  return answer.structuredContent as Record<string, unknown>
}

/** An MCP amount (`{ usdc, atomic }`) as text; anything else (an unavailable field) as its JSON. */
function usdcText(value: unknown): string {
  const amount = value as { usdc?: unknown } | null
  return typeof amount?.usdc === 'string' ? `${amount.usdc} USDC` : JSON.stringify(value)
}

let exitCode = 0
try {
  await main()
} catch (error) {
  process.stderr.write(
    `demo failed while ${step}: ${error instanceof Error ? error.message : String(error)}\n`,
  )
  exitCode = 1
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {})
}
process.exit(exitCode)
