import { type Address, type Hex, parseEther } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { writeAddressesFile } from '../../harness/addressesFile.js'
import { setupSteps } from '../../harness/setupSteps.js'
import { type Devnet, startDevnet } from '../../src/devnet/startDevnet.js'
import { parseUsdc } from '../../src/index.js'
import { devnetClients } from '../support/devnet.js'
import { callToolOk, connectMcp, type McpSession } from '../support/mcp.js'

type Transaction = { to: Address; data: Hex; value: string; functionName: string }

let devnet: Devnet
let t: ReturnType<typeof devnetClients>
let mcp: McpSession

beforeAll(async () => {
  // Once, under a loaded machine, this set-up ran into the hook's timeout without saying where.
  const step = setupSteps('the e2e set-up')
  devnet = await step('start the devnet', () => startDevnet({ chain: 'base-sepolia' }))
  t = devnetClients(devnet)
  const addresses = await step('write the addresses file', () => writeAddressesFile(devnet))
  mcp = await step('connect the stdio MCP server', () =>
    connectMcp({ BASE_SEPOLIA_RPC_URL: devnet.rpcUrl, VAULT_ADDRESSES: addresses }),
  )
})
afterAll(async () => {
  await mcp?.close()
  await devnet?.stop()
})

it('a fresh wallet signs and sends what the plans say: register, approve, deposit, then withdraw by amount, by shares and everything', async () => {
  // The test holds the key; the server only ever sees the address.
  const account = privateKeyToAccount(generatePrivateKey())
  const wallet = account.address
  await t.testClient.setBalance({ address: wallet, value: parseEther('1') })
  await t.asDeployer(devnet.addresses.usdc, 'function mint(address to, uint256 amount)', [
    wallet,
    parseUsdc('80'),
  ])
  const send = async (transaction: Transaction) => {
    const receipt = await t.send(account, { ...transaction, value: BigInt(transaction.value) })
    expect(receipt.status, transaction.functionName).toBe('success')
  }
  const usdcBalance = () => t.readOnly.getUsdcBalance({ wallet })
  const shareBalance = () => t.readOnly.getShareBalance({ wallet })

  const deposit = await callToolOk(mcp.client, 'vault_plan_deposit', {
    wallet,
    amountUsdc: '75',
  })
  const steps = deposit.steps as { transaction: Transaction }[]
  expect(steps.map((step) => step.transaction.functionName)).toEqual([
    'initialize',
    'approve',
    'deposit',
  ])
  for (const step of steps) await send(step.transaction)
  expect(await usdcBalance()).toBe(parseUsdc('5'))
  expect(await shareBalance()).toBeGreaterThanOrEqual(BigInt(deposit.minSharesOut as string))

  // A month of yield, then 30 USDC out by amount: the wallet receives at least that.
  await devnet.advanceTime(30 * 24 * 3600)
  const byAmount = await callToolOk(mcp.client, 'vault_plan_withdraw', {
    wallet,
    amountUsdc: '30',
  })
  const before = await usdcBalance()
  await send(byAmount.transaction as Transaction)
  const received = (await usdcBalance()) - before
  expect(received).toBeGreaterThanOrEqual(parseUsdc('30'))
  expect(received).toBeGreaterThanOrEqual(
    BigInt((byAmount.minUsdcOut as { atomic: string }).atomic),
  )

  // Half the shares by shares: exactly those are burned, and the wallet gets at least minUsdcOut.
  const shares = BigInt(
    (await callToolOk(mcp.client, 'vault_get_position', { wallet })).shares as string,
  )
  const byShares = await callToolOk(mcp.client, 'vault_plan_withdraw', {
    wallet,
    shares: (shares / 2n).toString(),
  })
  const beforeShares = await usdcBalance()
  await send(byShares.transaction as Transaction)
  expect((await usdcBalance()) - beforeShares).toBeGreaterThanOrEqual(
    BigInt((byShares.minUsdcOut as { atomic: string }).atomic),
  )
  expect(await shareBalance()).toBe(shares - shares / 2n)

  // Everything, by amount: the position's withdrawableUsdc.
  const position = await callToolOk(mcp.client, 'vault_get_position', { wallet })
  const withdrawable = position.withdrawableUsdc as { usdc: string; atomic: string }
  const all = await callToolOk(mcp.client, 'vault_plan_withdraw', {
    wallet,
    amountUsdc: withdrawable.usdc,
  })
  const beforeEverything = await usdcBalance()
  await send(all.transaction as Transaction)
  expect((await usdcBalance()) - beforeEverything).toBeGreaterThanOrEqual(
    BigInt(withdrawable.atomic),
  )
  expect(await shareBalance()).toBe(0n)
})
