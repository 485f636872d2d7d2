import type { Tool } from '@modelcontextprotocol/sdk/types.js'
import { type Address, decodeFunctionData, encodeFunctionData, getAddress, parseEther } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { readContract, waitForTransactionReceipt } from 'viem/actions'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { writeAddressesFile } from '../../harness/addressesFile.js'
import { type CountingProxy, startCountingProxy } from '../../harness/countingProxy.js'
import packageJson from '../../package.json' with { type: 'json' }
import { type Devnet, startDevnet } from '../../src/devnet/startDevnet.js'
import { parseUsdc, routerAbi, shareTokenAbi, usdcAbi } from '../../src/index.js'
import { vaultTools } from '../../src/mcp/tools/index.js'
import { batchExecutorAbi, compileBatchExecutor, executorCalls } from '../support/batchExecutor.js'
import { devnetClients } from '../support/devnet.js'
import {
  callTool,
  callToolError,
  callToolOk,
  connectMcp,
  expectMatchesOutputSchema,
  type McpSession,
} from '../support/mcp.js'

const readTools = ['vault_status', 'vault_check_yield', 'vault_get_position']
const planTools = ['vault_plan_approve_usdc', 'vault_plan_deposit', 'vault_plan_withdraw']
const warning =
  'Unsigned transaction plan only: this server cannot sign or broadcast. Review it and send it from your own wallet.'
const knobs = {
  pause: 'function pauseDeposits()',
  mint: 'function mint(address to, uint256 amount)',
  convertReverts: 'function setConvertToAssetsReverts(bool reverts)',
  maxWithdraw: 'function setMaxWithdrawCap(uint256 cap)',
  pauseObservations: 'function setObservationsPaused(bool paused)',
}
/** A JSON answer, read field by field in the tests; `ok()` checks it against the output schema. */
// biome-ignore lint/suspicious/noExplicitAny: answers are JSON checked against their listed schema
type Answer = Record<string, any>

/** Holds nothing and is registered nowhere. */
const emptyWallet = '0x000000000000000000000000000000000000dEaD'

let devnet: Devnet
let t: ReturnType<typeof devnetClients>
let proxy: CountingProxy
let mcp: McpSession
let tools: Tool[]
let snapshot: `0x${string}`

beforeAll(async () => {
  devnet = await startDevnet({ chain: 'base-sepolia' })
  t = devnetClients(devnet)
  proxy = await startCountingProxy(devnet.rpcUrl)
  mcp = await connectMcp({
    BASE_SEPOLIA_RPC_URL: proxy.url,
    VAULT_ADDRESSES: await writeAddressesFile(devnet),
    MCP_LOG_LEVEL: 'debug',
  })
  tools = (await mcp.client.listTools()).tools
})
afterAll(async () => {
  await mcp?.close()
  await proxy?.close()
  await devnet?.stop()
})
beforeEach(async () => {
  snapshot = await t.testClient.snapshot()
})
afterEach(async () => {
  proxy.setDown(false)
  await t.testClient.revert({ id: snapshot })
})

function tool(name: string): Tool {
  const found = tools.find((candidate) => candidate.name === name)
  if (!found) throw new Error(`${name} is not listed`)
  return found
}

/**
 * Calls a tool that must succeed and checks its answer against the output schema it lists, and
 * against the tool's full zod schema (the listing says some shapes once, in its description).
 */
async function ok(name: string, args: Record<string, unknown> = {}) {
  const structured = await callToolOk(mcp.client, name, args)
  expectMatchesOutputSchema(tool(name).outputSchema, structured)
  const full = vaultTools.find((candidate) => candidate.name === name)?.outputSchema
  expect(full?.strict().safeParse(structured).error).toBeUndefined()
  return structured as Answer
}

function error(name: string, args: Record<string, unknown>, code: string) {
  return callToolError(mcp.client, name, args, code)
}

/** Deploys the test-only EIP-7702 batch executor from the deployer. */
async function deployBatchExecutor(): Promise<Address> {
  const hash = await t.walletFor(t.deployer).deployContract({
    abi: batchExecutorAbi,
    bytecode: compileBatchExecutor(),
  })
  const receipt = await waitForTransactionReceipt(t.publicClient, { hash })
  if (!receipt.contractAddress) throw new Error('the batch executor was not deployed')
  return receipt.contractAddress
}

/** Registers the merchant and deposits through the SDK (the test's own signer, not the server). */
async function merchantDeposits(usdc: string) {
  await t.vault.ensureInitializedAndWait()
  await t.vault.depositAndWait({ amount: parseUsdc(usdc) })
}

describe('tools/list', () => {
  it('lists every tool with titles, descriptions and read-only, open-world annotations', async () => {
    expect(tools.map((listed) => listed.name)).toEqual([...readTools, ...planTools])
    for (const listed of tools) {
      expect(listed.title, listed.name).toMatch(/\w/)
      expect(listed.description?.length, listed.name).toBeGreaterThan(80)
      expect(listed.annotations, listed.name).toMatchObject({
        readOnlyHint: true,
        openWorldHint: true,
      })
    }
    for (const name of planTools) {
      expect(tool(name).description).toContain('without signing or sending anything')
    }
    expect(mcp.client.getServerVersion()).toMatchObject({
      name: 'x402-vault',
      version: packageJson.version,
    })
    // How the tools fit together, in the order an agent uses them.
    const instructions = mcp.client.getInstructions() ?? ''
    const at = ['1. Read', '2. Plan', '3. Let the user', '4. Read again'].map((step) =>
      instructions.indexOf(step),
    )
    expect(at.every((index) => index >= 0)).toBe(true)
    expect(at).toEqual([...at].sort((a, b) => a - b))
    for (const phrase of ['steps', 'calls', 'wallet_sendCalls', 'never signs or sends']) {
      expect(instructions).toContain(phrase)
    }
  })

  it('shows every input field with a description, and refuses unknown ones in the schema', () => {
    const inputs: Record<string, string[]> = {
      vault_status: [],
      vault_check_yield: [],
      vault_get_position: ['wallet'],
      vault_plan_approve_usdc: ['wallet', 'amountUsdc'],
      vault_plan_deposit: ['wallet', 'amountUsdc', 'slippageBps'],
      vault_plan_withdraw: ['wallet', 'amountUsdc', 'shares', 'slippageBps'],
    }
    for (const listed of tools) {
      const schema = listed.inputSchema as {
        properties?: Record<string, { type?: string; description?: string }>
        additionalProperties?: unknown
      }
      expect(Object.keys(schema.properties ?? {}), listed.name).toEqual(inputs[listed.name])
      for (const [field, property] of Object.entries(schema.properties ?? {})) {
        expect(property.description?.length, `${listed.name}.${field}`).toBeGreaterThan(20)
      }
      expect(schema.additionalProperties, listed.name).toBe(false)
    }
    // Every field listed as required (OpenAI's strict mode), the optional ones nullable.
    expect(tool('vault_plan_withdraw').inputSchema.required).toEqual([
      'wallet',
      'amountUsdc',
      'shares',
      'slippageBps',
    ])
    expect(tool('vault_plan_deposit').inputSchema.required).toEqual([
      'wallet',
      'amountUsdc',
      'slippageBps',
    ])
    expect(tool('vault_plan_deposit').inputSchema.properties?.slippageBps).toMatchObject({
      anyOf: [{ type: 'integer', minimum: 0, maximum: 1000 }, { type: 'null' }],
    })
  })

  it('declares an output schema for every tool, without $refs; plans carry the §6.3 fields', () => {
    for (const listed of tools) {
      expect(listed.outputSchema?.type, listed.name).toBe('object')
      // Some clients cannot follow JSON-Schema references.
      expect(JSON.stringify(listed.outputSchema), listed.name).not.toContain('$ref')
    }
    for (const name of planTools) {
      expect(Object.keys(tool(name).outputSchema?.properties ?? {})).toEqual(
        expect.arrayContaining(['chain', 'chainId', 'warning', 'transaction']),
      )
    }
  })
})

describe('read tools', () => {
  it('vault_status reads the vault, with the share token symbol from the chain', async () => {
    const status = await ok('vault_status')
    const symbol = await readContract(t.publicClient, {
      address: devnet.addresses.shareToken,
      abi: shareTokenAbi,
      functionName: 'symbol',
    })
    expect(status).toMatchObject({
      chain: 'base-sepolia',
      chainId: 84532,
      network: 'eip155:84532',
      depositsPaused: false,
      minDeposit: { usdc: '10', atomic: '10000000' },
      tvlCap: { usdc: '500000', atomic: '500000000000' },
      tvlHeadroom: { usdc: '500000', atomic: '500000000000' },
      shareToken: { address: getAddress(devnet.addresses.shareToken), symbol },
      oracle: { fresh: true, maxStalenessSeconds: '7200' },
      contracts: { router: getAddress(devnet.addresses.router) },
    })
    expect(Number(status.oracle.ageSeconds)).toBeGreaterThanOrEqual(0)
    expect(BigInt(status.blockNumber)).toBeGreaterThan(0n)
  })

  it('vault_check_yield gives each venue’s rates as APY and ray, and the selected venue', async () => {
    const yields = await ok('vault_check_yield')
    for (const venue of ['aave', 'morpho']) {
      expect(yields[venue].venue).toBe(venue)
      expect(yields[venue].spotRate.apy).toMatch(/^\d+\.\d{2}%$/)
      expect(yields[venue].timeWeightedRate.ray).toMatch(/^\d+$/)
      expect(yields[venue].safe).toBe(true)
    }
    expect(['aave', 'morpho']).toContain(yields.selectedVenue.venue)
    expect(yields.oracleFresh).toBe(true)
  })

  it('vault_get_position reports the position, registration and withdrawableUsdc', async () => {
    await merchantDeposits('50')
    const position = await ok('vault_get_position', { wallet: t.merchant.address.toLowerCase() })
    expect(position).toMatchObject({
      wallet: t.merchant.address,
      registered: true,
      liquidUsdc: { usdc: '950', atomic: '950000000' },
      deposited: { usdc: '50', atomic: '50000000' },
    })
    expect(BigInt(position.shares)).toBeGreaterThan(0n)
    expect(BigInt(position.withdrawableUsdc.atomic)).toBeLessThanOrEqual(
      BigInt(position.currentValue.atomic),
    )

    const empty = await ok('vault_get_position', { wallet: emptyWallet })
    expect(empty).toMatchObject({ registered: false, shares: '0', liquidUsdc: { usdc: '0' } })
  })

  it('a sub-read that fails says so in its field while the rest still answers', async () => {
    await merchantDeposits('50') // goes to the lending vault (Morpho), the better rate
    await t.asDeployer(devnet.addresses.morphoVault, knobs.convertReverts, [true])

    const status = await ok('vault_status')
    expect(status.totalAssets).toMatchObject({ unavailable: true })
    expect(status.totalAssets.reason).toMatch(/\w/)
    expect(status.depositsPaused).toBe(false)
    expect(status.withdrawCapacity.morphoReachable).toBe(false)

    const position = await ok('vault_get_position', { wallet: t.merchant.address })
    expect(position.currentValue).toMatchObject({ unavailable: true })
    expect(position.registered).toBe(true)
  })
})

describe('plan tools', () => {
  it('vault_plan_approve_usdc plans usdc.approve(router, amount)', async () => {
    const plan = await ok('vault_plan_approve_usdc', {
      wallet: t.merchant.address,
      amountUsdc: '25.5',
    })
    const router = getAddress(devnet.addresses.router)
    expect(plan).toMatchObject({
      chain: 'base-sepolia',
      chainId: 84532,
      warning,
      transaction: {
        chain: 'base-sepolia',
        chainId: 84532,
        to: getAddress(devnet.addresses.usdc),
        value: '0',
        functionName: 'approve',
        args: [router, '25500000'],
      },
      spender: router,
      amount: { usdc: '25.5', atomic: '25500000' },
      currentAllowance: { usdc: '0', atomic: '0' },
    })
    expect(decodeFunctionData({ abi: usdcAbi, data: plan.transaction.data }).args).toEqual([
      router,
      25_500_000n,
    ])
  })

  it('vault_plan_deposit lists registration, approval and deposit when the wallet needs them', async () => {
    const wallet = t.merchant.address
    const plan = await ok('vault_plan_deposit', { wallet, amountUsdc: '25' })
    expect(plan).toMatchObject({
      warning,
      needsRegistration: true,
      needsApproval: true,
      allowance: { usdc: '0' },
      shortfall: { usdc: '25', atomic: '25000000' },
      // The whole sequence is simulated as one batch, so a new wallet's deposit is checked too.
      simulated: true,
      warnings: [],
      transaction: { functionName: 'deposit', to: getAddress(devnet.addresses.router) },
    })
    expect(BigInt(plan.simulatedShares)).toBeGreaterThanOrEqual(BigInt(plan.minSharesOut))
    expect(plan.transaction.args).toEqual(['25000000', wallet, plan.minSharesOut])
    // Every step in order, as one EIP-5792 batch for a smart wallet.
    expect(plan.calls).toEqual({
      version: '2.0.0',
      chainId: '0x14a34',
      from: wallet,
      atomicRequired: true,
      calls: plan.steps.map((step: Answer) => ({
        to: step.transaction.to,
        data: step.transaction.data,
        value: '0x0',
      })),
    })
    expect(plan.steps.map((step: Answer) => [step.step, step.transaction.functionName])).toEqual([
      [1, 'initialize'],
      [2, 'approve'],
      [3, 'deposit'],
    ])
    expect(plan.initializeTransaction).toEqual(plan.steps[0].transaction)
    expect(plan.steps[2].transaction).toEqual(plan.transaction)
    expect(plan.steps.map((step: Answer) => step.description)).toEqual([
      expect.stringContaining('router.initialize()'),
      expect.stringContaining('usdc.approve'),
      expect.stringContaining('Deposit 25 USDC'),
    ])
    expect(plan.nextSteps).toContain('register')
    expect(plan.nextSteps).toContain('approve 25 USDC')
  })

  it('vault_plan_deposit reads and simulates in one round trip (eth_simulateV1 in the batch)', async () => {
    await t.vault.ensureInitializedAndWait()
    await t.vault.approveUsdcAndWait({ amount: parseUsdc('30') })
    await callToolOk(mcp.client, 'vault_status') // verification is done before counting
    const { result, requests, methods } = await proxy.measure(() =>
      ok('vault_plan_deposit', { wallet: t.merchant.address, amountUsdc: '30', slippageBps: 50 }),
    )
    expect(requests).toBe(1)
    expect(methods).toContain('eth_simulateV1')
    expect(result).toMatchObject({
      needsRegistration: false,
      needsApproval: false,
      initializeTransaction: null,
      simulated: true,
      slippageBps: 50,
    })
    expect(result.steps).toHaveLength(1)
    expect(result.calls.calls).toEqual([
      { to: result.transaction.to, data: result.transaction.data, value: '0x0' },
    ])
    expect(BigInt(result.simulatedShares)).toBeGreaterThanOrEqual(BigInt(result.minSharesOut))
    expect(decodeFunctionData({ abi: routerAbi, data: result.transaction.data })).toMatchObject({
      functionName: 'deposit',
      args: [30_000_000n, t.merchant.address, BigInt(result.minSharesOut)],
    })
  })

  it('vault_plan_withdraw by amount guarantees the amount; by shares burns exactly them', async () => {
    await merchantDeposits('60')
    await devnet.advanceTime(30 * 24 * 3600)
    const wallet = t.merchant.address
    const byAmount = await ok('vault_plan_withdraw', { wallet, amountUsdc: '20', slippageBps: 50 })
    expect(byAmount).toMatchObject({
      warning,
      // No slippage applies by amount: it is not echoed as if it did.
      slippageBps: null,
      mode: 'amount',
      requestedUsdc: { usdc: '20', atomic: '20000000' },
      minUsdcOut: { usdc: '20', atomic: '20000000' },
      transaction: { functionName: 'withdraw', value: '0' },
    })
    expect(BigInt(byAmount.simulatedUsdcOut.atomic)).toBeGreaterThanOrEqual(20_000_000n)
    expect(byAmount.transaction.args).toEqual([byAmount.shares, wallet, '20000000'])

    expect(byAmount.calls.calls).toEqual([
      { to: byAmount.transaction.to, data: byAmount.transaction.data, value: '0x0' },
    ])
    // As a client in strict mode sends it: what it leaves out, null.
    const byShares = await ok('vault_plan_withdraw', {
      wallet,
      amountUsdc: null,
      shares: '5000000',
      slippageBps: 500,
    })
    expect(byShares).toMatchObject({
      mode: 'shares',
      requestedUsdc: null,
      shares: '5000000',
      slippageBps: 500,
    })
    expect(byShares.warnings).toEqual([
      { level: 'warning', code: 'SLIPPAGE_WIDE', message: expect.stringContaining('500 bps') },
    ])
    expect(BigInt(byShares.minUsdcOut.atomic)).toBeLessThanOrEqual(
      BigInt(byShares.expectedUsdcOut.atomic),
    )
    // null is the default, as leaving it out is.
    const byDefault = await ok('vault_plan_withdraw', {
      wallet,
      amountUsdc: '20',
      shares: null,
      slippageBps: null,
    })
    expect(byDefault).toMatchObject({ mode: 'amount', slippageBps: null })
    const deposit = await ok('vault_plan_deposit', { wallet, amountUsdc: '10', slippageBps: null })
    expect(deposit.slippageBps).toBe(10)
  })

  it('a withdrawal by shares worth 0 USDC says it rounds to zero, and the fewest shares that pay', async () => {
    // Right after a deposit, before any yield, the venues read what went in a unit or two down (their
    // own rounding), so a share is worth just under 1 base unit and 1 share unit pays 0. (After a day of
    // yield a share is worth more than 1 unit, and 1 share unit pays 1.)
    await merchantDeposits('60')
    const wallet = t.merchant.address
    const text = await error('vault_plan_withdraw', { wallet, shares: '1' }, 'ZERO_AMOUNT')
    expect(text).toContain('Burning 1 share units (0.000001 shares) pays 0 USDC')
    expect(text).toContain('rounds down to zero')
    expect(text).not.toMatch(/liquidity|Try again later/i)
    const fewest =
      /The fewest shares this wallet can withdraw for something are (\d+) share units/.exec(
        text,
      )?.[1]
    expect(fewest, text).toBeDefined()
    // They do pay, and one share unit fewer does not.
    const paid = await ok('vault_plan_withdraw', { wallet, shares: fewest })
    expect(BigInt(paid.expectedUsdcOut.atomic)).toBeGreaterThan(0n)
    if (BigInt(fewest as string) > 1n) {
      await error(
        'vault_plan_withdraw',
        { wallet, shares: String(BigInt(fewest as string) - 1n) },
        'ZERO_AMOUNT',
      )
    }
  })

  it('each read and each plan makes one RPC round trip', async () => {
    await merchantDeposits('60')
    const wallet = t.merchant.address
    await callToolOk(mcp.client, 'vault_status') // verification is done before counting
    const cases: [string, Record<string, unknown>, number][] = [
      ['vault_status', {}, 1],
      ['vault_check_yield', {}, 1],
      ['vault_get_position', { wallet }, 1],
      ['vault_plan_approve_usdc', { wallet, amountUsdc: '10' }, 1],
      ['vault_plan_deposit', { wallet: emptyWallet, amountUsdc: '10' }, 1], // blocked, with what else
      ['vault_plan_deposit', { wallet: t.buyer.address, amountUsdc: '10' }, 1], // with earlier steps
      ['vault_plan_withdraw', { wallet, amountUsdc: '10' }, 1],
      ['vault_plan_withdraw', { wallet, shares: '1000000' }, 1],
    ]
    for (const [name, args, budget] of cases) {
      const { requests, methods } = await proxy.measure(() => callTool(mcp.client, name, args))
      expect(requests, `${name} ${JSON.stringify(args)}: ${methods.join(', ')}`).toBe(budget)
    }
  })

  it('falls back when the RPC refuses eth_simulateV1, and says so (SIMULATION_UNSUPPORTED)', async () => {
    await merchantDeposits('40')
    await t.vault.approveUsdcAndWait({ amount: parseUsdc('20') })
    const wallet = t.merchant.address
    await callToolOk(mcp.client, 'vault_status') // verification is done before counting
    proxy.setFault({ kind: 'method-not-found', methods: ['eth_simulateV1'] })
    const unsupported = { level: 'warning', code: 'SIMULATION_UNSUPPORTED' }
    // Nothing missing: the deposit alone is simulated in a second round trip, as before.
    const alone = await proxy.measure(() => ok('vault_plan_deposit', { wallet, amountUsdc: '20' }))
    expect(alone.requests).toBe(2)
    expect(alone.result).toMatchObject({ simulated: true, warnings: [unsupported] })
    // Earlier steps: every precondition is read, nothing simulated, no second round trip.
    const steps = await proxy.measure(() =>
      ok('vault_plan_deposit', { wallet: t.buyer.address, amountUsdc: '20' }),
    )
    expect(steps.requests).toBe(1)
    expect(steps.result).toMatchObject({
      simulated: false,
      simulatedShares: null,
      warnings: [unsupported],
    })
    expect(steps.result.steps).toHaveLength(3)
    for (const args of [{ amountUsdc: '10' }, { shares: '1000000' }]) {
      const withdrawal = await proxy.measure(() => ok('vault_plan_withdraw', { wallet, ...args }))
      expect(withdrawal.requests).toBe(2)
      expect(withdrawal.result.warnings).toEqual([expect.objectContaining(unsupported)])
      expect(BigInt(withdrawal.result.simulatedUsdcOut.atomic)).toBeGreaterThan(0n)
    }
  })

  it('an EIP-7702 account runs a new wallet’s deposit calls in one transaction; with a stale oracle the batch reverts whole', async () => {
    const account = privateKeyToAccount(generatePrivateKey())
    await t.testClient.setBalance({ address: account.address, value: parseEther('1') })
    await t.asDeployer(devnet.addresses.usdc, knobs.mint, [account.address, parseUsdc('100')])
    const executor = await deployBatchExecutor()
    const wallet = t.walletFor(account)
    const authorization = await wallet.signAuthorization({
      contractAddress: executor,
      executor: 'self',
    })
    const runCalls = async (calls: Answer) => {
      const hash = await wallet.sendTransaction({
        authorizationList: [authorization],
        to: account.address,
        data: encodeFunctionData({
          abi: batchExecutorAbi,
          functionName: 'execute',
          args: [executorCalls(calls.calls)],
        }),
        gas: 2_000_000n,
      })
      return waitForTransactionReceipt(t.publicClient, { hash })
    }
    const state = async () => {
      const position = await ok('vault_get_position', { wallet: account.address })
      return [position.registered, position.liquidUsdc.usdc, position.shares]
    }

    const plan = await ok('vault_plan_deposit', { wallet: account.address, amountUsdc: '25' })
    expect(plan.steps).toHaveLength(3)
    expect(plan.calls).toMatchObject({ from: account.address, atomicRequired: true })

    // With a stale oracle that cannot record: the plan is refused up front (every precondition, not
    // only the deposit's own), and the same batch, sent anyway, reverts whole.
    const snap = await t.testClient.snapshot()
    await t.asDeployer(devnet.addresses.oracle, knobs.pauseObservations, [true])
    await devnet.advanceTime(3 * 3600)
    const stale = await error(
      'vault_plan_deposit',
      { wallet: account.address, amountUsdc: '25' },
      'STALE_ORACLE',
    )
    expect(stale).toContain('register with the vault router')
    const reverted = await runCalls(plan.calls)
    expect(reverted.status).toBe('reverted')
    expect(await state()).toEqual([false, '100', '0'])
    await t.testClient.revert({ id: snap })

    // Fresh again: one transaction registers, approves and deposits.
    const receipt = await runCalls(plan.calls)
    expect(receipt.status).toBe('success')
    const [registered, liquid, shares] = await state()
    expect([registered, liquid]).toEqual([true, '75'])
    expect(BigInt(shares)).toBeGreaterThanOrEqual(BigInt(plan.minSharesOut))
  })

  it('warns of a stale oracle that the deposit refreshes itself (ORACLE_STALE)', async () => {
    await devnet.advanceTime(3 * 3600)
    const plan = await ok('vault_plan_deposit', { wallet: t.merchant.address, amountUsdc: '10' })
    expect(plan.simulated).toBe(true)
    expect(plan.warnings).toEqual([
      expect.objectContaining({ level: 'warning', code: 'ORACLE_STALE' }),
    ])
  })

  it('an empty position is NO_POSITION by amount and by shares', async () => {
    await t.vault.ensureInitializedAndWait()
    const wallet = t.merchant.address
    for (const args of [{ amountUsdc: '10' }, { shares: '1000000' }]) {
      expect(await error('vault_plan_withdraw', { wallet, ...args }, 'NO_POSITION')).toContain(
        'holds no vault shares',
      )
    }
  })

  it('identical reads in flight share one answer and its RPC calls; plans and other reads do not', async () => {
    const wallet = t.merchant.address
    // JSON-RPC calls, not HTTP requests: the transport batches concurrent calls into one request.
    const callsOf = async (calls: [string, Record<string, unknown>][]) => {
      const { result, methods } = await proxy.measure(() =>
        Promise.all(calls.map(([name, args]) => callTool(mcp.client, name, args))),
      )
      return { results: result.map((answer) => JSON.stringify(answer)), calls: methods.length }
    }
    await callToolOk(mcp.client, 'vault_status')
    const status: [string, Record<string, unknown>] = ['vault_status', {}]
    const one = await callsOf([status])
    const ten = await callsOf(Array.from({ length: 10 }, () => status))
    expect(ten.calls).toBe(one.calls)
    expect(new Set(ten.results).size).toBe(1)
    // Different wallets are different reads.
    const position = (address: string): [string, Record<string, unknown>] => [
      'vault_get_position',
      { wallet: address },
    ]
    const onePosition = await callsOf([position(wallet)])
    const twoPositions = await callsOf([position(wallet), position(t.buyer.address)])
    expect(twoPositions.calls).toBe(2 * onePosition.calls)
    const plan: [string, Record<string, unknown>] = [
      'vault_plan_approve_usdc',
      { wallet, amountUsdc: '10' },
    ]
    const onePlan = await callsOf([plan])
    const threePlans = await callsOf([plan, plan, plan])
    expect(threePlans.calls).toBe(3 * onePlan.calls)
  })
})

describe('errors', () => {
  it('refuses a bad wallet address', async () => {
    for (const wallet of [
      'nope',
      '0x1234',
      '0x70997970C51812dc3A010C7d01b50e0d17dc79c8', // one letter's case changed: bad checksum
      '0x0000000000000000000000000000000000000000',
    ]) {
      const text = await error('vault_get_position', { wallet }, 'INVALID_ADDRESS')
      expect(text).toContain('0x followed by 40 hex digits')
    }
    await error('vault_plan_deposit', { amountUsdc: '10' }, 'INVALID_ADDRESS')
    await error('vault_get_position', { wallet: 42 }, 'INVALID_ADDRESS')
    // A private key pasted as the wallet is refused without being repeated.
    const key = devnet.accounts.buyer.privateKey
    const text = await error('vault_get_position', { wallet: key }, 'INVALID_ADDRESS')
    expect(text).toContain('32 bytes')
    expect(text).not.toContain(key.slice(2))
  })

  it('refuses an amount with more than 6 decimals, a sign, an exponent, an empty string or zero', async () => {
    const wallet = t.merchant.address
    const cases: [string, RegExp][] = [
      ['1.1234567', /at most 6 decimals/],
      ['-5', /signs are not allowed/],
      ['+5', /signs are not allowed/],
      ['1e3', /exponents are not allowed/],
      ['', /empty/],
      [' 5', /spaces/],
      ['0', /greater than 0/],
    ]
    for (const name of ['vault_plan_approve_usdc', 'vault_plan_deposit', 'vault_plan_withdraw']) {
      for (const [amountUsdc, why] of cases) {
        const text = await error(name, { wallet, amountUsdc }, 'INVALID_AMOUNT')
        expect(text, `${name} ${amountUsdc}`).toMatch(why)
        expect(text).toContain('such as "12.5"')
      }
    }
    await error('vault_plan_deposit', { wallet, amountUsdc: 12.5 }, 'INVALID_AMOUNT')
  })

  it('refuses slippage out of range', async () => {
    const wallet = t.merchant.address
    for (const slippageBps of [1001, -1, 2.5, '10']) {
      const text = await error(
        'vault_plan_deposit',
        { wallet, amountUsdc: '10', slippageBps },
        'INVALID_SLIPPAGE',
      )
      expect(text).toContain('from 0 to 1000')
    }
    await error(
      'vault_plan_withdraw',
      { wallet, shares: '1', slippageBps: 5000 },
      'INVALID_SLIPPAGE',
    )
  })

  it('refuses unknown extra keys, naming the ones the tool takes, without echoing values', async () => {
    const key = `0x${'ab'.repeat(32)}`
    const text = await error(
      'vault_plan_deposit',
      { wallet: t.merchant.address, amountUsdc: '10', privateKey: key },
      'INVALID_ARGUMENT',
    )
    expect(text).toContain('"privateKey"')
    expect(text).toContain('wallet, amountUsdc, slippageBps')
    expect(text).not.toContain(key)
    await error('vault_status', { verbose: true }, 'INVALID_ARGUMENT')
  })

  it('vault_plan_withdraw needs exactly one of amountUsdc and shares, and a valid share count', async () => {
    const wallet = t.merchant.address
    expect(await error('vault_plan_withdraw', { wallet }, 'INVALID_ARGUMENT')).toContain(
      'amountUsdc',
    )
    expect(
      await error(
        'vault_plan_withdraw',
        { wallet, amountUsdc: '1', shares: '1' },
        'INVALID_ARGUMENT',
      ),
    ).toContain('not both')
    for (const shares of ['abc', '0', '1.5', '-1', '']) {
      await error('vault_plan_withdraw', { wallet, shares }, 'INVALID_AMOUNT')
    }
  })

  it('refuses a plan above VAULT_MCP_MAX_PLAN_USDC, naming it and its value', async () => {
    const wallet = t.merchant.address
    for (const [name, args] of [
      ['vault_plan_approve_usdc', { wallet, amountUsdc: '100.000001' }],
      ['vault_plan_deposit', { wallet, amountUsdc: '101' }],
      ['vault_plan_withdraw', { wallet, amountUsdc: '250' }],
    ] as const) {
      const text = await error(name, args, 'PLAN_CAP_EXCEEDED')
      expect(text).toContain('VAULT_MCP_MAX_PLAN_USDC = 100')
    }
    await ok('vault_plan_approve_usdc', { wallet, amountUsdc: '100' }) // the cap itself is allowed

    // By shares, the cap applies to the USDC the shares pay.
    await t.vault.ensureInitializedAndWait()
    await t.vault.depositAndWait({ amount: parseUsdc('150') })
    const position = await ok('vault_get_position', { wallet })
    const text = await error(
      'vault_plan_withdraw',
      { wallet, shares: position.shares },
      'PLAN_CAP_EXCEEDED',
    )
    expect(text).toMatch(/Burning \d+ share units \([\d.]+ shares\) pays 1\d\d(\.\d+)? USDC/)
    expect(text).toContain('VAULT_MCP_MAX_PLAN_USDC = 100')
  })

  it('a blocked deposit also says what else the wallet will need (registration, approval)', async () => {
    const broke = await error(
      'vault_plan_deposit',
      { wallet: emptyWallet, amountUsdc: '25' },
      'INSUFFICIENT_USDC',
    )
    expect(broke).toContain('holds 0 USDC, less than the 25 USDC')
    expect(broke).toContain('register with the vault router')
    expect(broke).toContain('its allowance is 0 USDC')

    const small = await error(
      'vault_plan_deposit',
      { wallet: t.merchant.address, amountUsdc: '5' },
      'BELOW_MIN_DEPOSIT',
    )
    expect(small).toContain("below the vault's minimum of 10 USDC")
    expect(small).toContain('register with the vault router')
  })

  it('refuses a deposit while deposits are paused', async () => {
    await t.asDeployer(devnet.addresses.router, knobs.pause)
    const text = await error(
      'vault_plan_deposit',
      { wallet: t.merchant.address, amountUsdc: '10' },
      'DEPOSITS_PAUSED',
    )
    expect(text).toContain('paused')
    expect((await ok('vault_status')).depositsPaused).toBe(true)
  })

  it('refuses a deposit above the TVL cap’s headroom', async () => {
    const whale = t.vaultFor(t.walletFor(t.buyer))
    await t.asDeployer(devnet.addresses.usdc, knobs.mint, [t.buyer.address, parseUsdc('499950')])
    await whale.ensureInitializedAndWait()
    await whale.depositAndWait({ amount: parseUsdc('499950') })
    const text = await error(
      'vault_plan_deposit',
      { wallet: t.merchant.address, amountUsdc: '60' },
      'TVL_CAP_EXCEEDED',
    )
    expect(text).toContain('500000 USDC')
    const close = await ok('vault_plan_deposit', { wallet: t.merchant.address, amountUsdc: '10' })
    expect(close.warnings).toEqual([
      expect.objectContaining({ level: 'warning', code: 'TVL_CAP_CLOSE' }),
    ])
  })

  it('decodes a revert by its name', async () => {
    await merchantDeposits('50')
    const wallet = t.merchant.address
    const unserviceable = await error(
      'vault_plan_withdraw',
      { wallet, amountUsdc: '80' },
      'UNSERVICEABLE_AMOUNT',
    )
    expect(unserviceable).toContain('UnserviceableNet')
    // The Morpho venue rounds the 50 USDC deposit down by up to a base unit.
    expect(unserviceable).toMatch(/at most (49\.9999\d{0,2}|50(\.\d{1,6})?) USDC/)

    await t.asDeployer(devnet.addresses.morphoVault, knobs.maxWithdraw, [0n])
    const stuck = await error(
      'vault_plan_withdraw',
      { wallet, amountUsdc: '10' },
      'INSUFFICIENT_VAULT_LIQUIDITY',
    )
    expect(stuck).toContain('InsufficientVaultLiquidity')
  })

  it('answers RPC trouble with a retryable error naming the RPC, then recovers', async () => {
    await callToolOk(mcp.client, 'vault_status') // verified before the RPC goes down
    proxy.setDown(true)
    for (const [name, args] of [
      ['vault_status', {}],
      ['vault_plan_deposit', { wallet: t.merchant.address, amountUsdc: '10' }],
    ] as const) {
      const text = await callToolError(mcp.client, name, args, 'RPC_UNREACHABLE', {
        retryable: true,
      })
      expect(text).toContain(proxy.url)
      expect(text).toContain('BASE_SEPOLIA_RPC_URL')
    }
    proxy.setDown(false)
    await ok('vault_status')
  })
})
