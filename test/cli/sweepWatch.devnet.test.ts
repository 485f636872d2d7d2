/**
 * `x402-vault sweep --watch`, the built bin, against a devnet, with an operator key that holds no
 * money: `--setup` prints the wallet's one-time steps unsigned (the wallet sends them), the watcher
 * sweeps what was idle at its start and each inflow it sees in the logs, serves /healthz and
 * /metrics, and exits 0 on SIGTERM. A leaked operator key moves the wallet's money only between the
 * wallet and the vault.
 */
import {
  type Address,
  createPublicClient,
  createWalletClient,
  type Hex,
  http,
  parseAbi,
  parseEther,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Devnet, startDevnet } from '../../src/devnet/startDevnet.js'
import { parseUsdc, routerAbi } from '../../src/index.js'
import { writeAddressesFile } from '../support/addressesFile.js'
import { transferToMerchant, usdcBalance } from '../support/merchant.js'
import { runCli } from '../support/runCli.js'
import { startWatcher } from '../support/watcher.js'

let devnet: Devnet
let addressesPath: string
const operatorKey = generatePrivateKey()
const operator = privateKeyToAccount(operatorKey)

beforeAll(async () => {
  devnet = await startDevnet({ chain: 'base-sepolia' })
  addressesPath = await writeAddressesFile(devnet)
  // The operator holds ETH for gas, and no USDC.
  await fetch(devnet.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'anvil_setBalance',
      params: [operator.address, `0x${parseEther('1').toString(16)}`],
    }),
  })
}, 60_000)
afterAll(async () => {
  await devnet?.stop()
})

const erc20 = parseAbi(['function balanceOf(address) view returns (uint256)'])
const merchant = () => devnet.accounts.merchant.address
const client = () => createPublicClient({ chain: devnet.viemChain, transport: http(devnet.rpcUrl) })
const walletOf = (key: Hex) =>
  createWalletClient({
    account: privateKeyToAccount(key),
    chain: devnet.viemChain,
    transport: http(devnet.rpcUrl),
  })

describe('x402-vault sweep --watch with an operator key', () => {
  it('sets up the operator, sweeps at start and after an inflow, reports health, stops on SIGTERM', async () => {
    // --setup: three unsigned steps; the wallet sends them itself.
    const setupArgs = ['sweep', '--setup', '--wallet', merchant(), '--addresses', addressesPath]
    const env = { SWEEPER_PRIVATE_KEY: operatorKey, BASE_SEPOLIA_RPC_URL: devnet.rpcUrl }
    const setup = await runCli([...setupArgs, '--json'], env)
    expect(setup.code).toBe(0)
    const plan = JSON.parse(setup.stdout) as {
      ready: boolean
      operator: Address
      steps: { action: string; done: boolean }[]
      calls: { calls: { to: Address; data: Hex }[] }
    }
    expect(plan.operator).toBe(operator.address)
    expect(plan.steps.map((step) => [step.action, step.done])).toEqual([
      ['register', false],
      ['approve', false],
      ['set-operator', false],
    ])
    const wallet = walletOf(devnet.accounts.merchant.privateKey)
    for (const call of plan.calls.calls) {
      const hash = await wallet.sendTransaction({ to: call.to, data: call.data })
      expect((await client().waitForTransactionReceipt({ hash })).status).toBe('success')
    }
    const again = await runCli(setupArgs, env)
    expect(again.stdout).toContain('Every step is done')

    const start = await usdcBalance(devnet, merchant())
    const watcher = startWatcher(env, [
      '--wallet',
      merchant(),
      '--addresses',
      addressesPath,
      '--reserve',
      '900',
      '--poll',
      '0.2',
      '--debounce',
      '100',
      '--health-port',
      '0',
    ])
    try {
      const started = await watcher.next((event) => event.event === 'start')
      expect(started).toMatchObject({
        key: 'operator',
        sender: operator.address,
        wallet: merchant(),
      })
      // What was idle at the start is swept at once.
      const first = await watcher.next((event) => event.event === 'deposit')
      expect(first.amount).toEqual({ usdc: '100', atomic: (start - parseUsdc('900')).toString() })
      // A transfer to the wallet is seen in the logs and swept.
      const received = parseUsdc('25')
      await transferToMerchant(devnet, received)
      const inflow = await watcher.next((event) => event.event === 'inflow')
      expect(inflow.amount).toEqual({ usdc: '25', atomic: received.toString() })
      const second = await watcher.next((event) => event.event === 'deposit')
      expect(second.amount).toEqual({ usdc: '25', atomic: received.toString() })
      // Exact accounting: start + received = end + deposited; the operator sent the deposits.
      const end = await usdcBalance(devnet, merchant())
      expect(start + received).toBe(end + parseUsdc('100') + received)
      for (const deposit of [first, second]) {
        const tx = await client().getTransaction({ hash: deposit.txHash as Hex })
        expect(tx.from.toLowerCase()).toBe(operator.address.toLowerCase())
      }

      const healthUrl = started.healthUrl as string
      const health = await fetch(`${healthUrl}/healthz`)
      expect(health.status).toBe(200)
      expect(await health.json()).toMatchObject({
        status: 'ok',
        role: 'alone',
        wallet: merchant(),
        lastSweep: { deposited: true },
        lastError: null,
      })
      const metrics = await (await fetch(`${healthUrl}/metrics`)).text()
      expect(metrics).toContain('x402_vault_sweeper_sweeps_total{result="deposited"} 2')
      expect(metrics).toContain('x402_vault_sweeper_swept_usdc_total 125')
      expect(metrics).toMatch(/x402_vault_sweeper_head_lag_blocks \d+/)

      watcher.child.kill('SIGTERM')
      expect(await watcher.exited).toBe(0)
      expect(watcher.events.at(-1)?.event).toBe('stop')
      expect(watcher.events.filter((event) => event.event === 'problem')).toEqual([])
      const output = `${JSON.stringify(watcher.events)}${watcher.stderr()}`.toLowerCase()
      expect(output).not.toContain(operatorKey.slice(2).toLowerCase())
    } finally {
      watcher.child.kill('SIGKILL')
    }

    // A leaked operator key: a withdrawal it sends pays the wallet, never the operator.
    const shares = await client().readContract({
      address: devnet.addresses.shareToken,
      abi: erc20,
      functionName: 'balanceOf',
      args: [merchant()],
    })
    expect(shares).toBeGreaterThan(0n)
    const beforeWithdraw = await usdcBalance(devnet, merchant())
    const hash = await walletOf(operatorKey).writeContract({
      address: devnet.addresses.router,
      abi: routerAbi,
      functionName: 'withdraw',
      args: [shares, merchant(), 0n],
    })
    expect((await client().waitForTransactionReceipt({ hash })).status).toBe('success')
    expect(await usdcBalance(devnet, operator.address)).toBe(0n)
    expect(await usdcBalance(devnet, merchant())).toBeGreaterThan(beforeWithdraw)
  }, 120_000)
})
