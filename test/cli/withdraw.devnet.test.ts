/**
 * `x402-vault withdraw`, the built bin, against a devnet where the merchant holds a month-old position:
 * an amount, everything, a dry run, a vault with deposits paused, a vault that can pay out less than the
 * position, and an RPC that fails the send. The private key is never printed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeAddressesFile } from '../../harness/addressesFile.js'
import { type CountingProxy, startCountingProxy } from '../../harness/countingProxy.js'
import { usdcBalance } from '../../harness/merchant.js'
import { runCli } from '../../harness/runCli.js'
import type { Devnet } from '../../src/devnet/startDevnet.js'
import { parseUsdc } from '../../src/index.js'
import { type DevnetClients, useDevnet } from '../support/devnet.js'

let devnet: Devnet
let t: DevnetClients
let addressesPath: string
let proxy: CountingProxy
useDevnet({ chain: 'base-sepolia' }, async (started, clients) => {
  devnet = started
  t = clients
  await t.vault.ensureInitializedAndWait()
  await t.vault.depositAndWait({ amount: parseUsdc('100') })
  // A month of yield, so a withdrawal pays a fee on it.
  await devnet.advanceTime(30n * 24n * 3600n)
})
beforeAll(async () => {
  addressesPath = await writeAddressesFile(devnet)
  proxy = await startCountingProxy(devnet.rpcUrl)
})
afterAll(() => proxy?.close())

const merchant = () => devnet.accounts.merchant.address
const run = (args: string[], rpcUrl = devnet.rpcUrl) =>
  runCli(['withdraw', '--addresses', addressesPath, ...args], {
    MERCHANT_PRIVATE_KEY: devnet.accounts.merchant.privateKey,
    BASE_SEPOLIA_RPC_URL: rpcUrl,
  })
const shares = () => t.vault.getShareBalance({ wallet: merchant() })
const balance = () => usdcBalance(devnet, merchant())

function expectNoKey(output: { stdout: string; stderr: string }) {
  const bare = devnet.accounts.merchant.privateKey.replace(/^0x/, '').toLowerCase()
  expect(`${output.stdout}${output.stderr}`.toLowerCase()).not.toContain(bare)
}

describe('x402-vault withdraw', () => {
  it('--amount: the amount arrives in full, the fee on the yield on top', async () => {
    const before = await balance()
    // The clock held still: no interest accrues between the quote's block and the withdrawal's, so
    // what arrives over the amount is the rounding alone.
    await t.testClient.setBlockTimestampInterval({ interval: 0 })
    const output = await run(['--amount', '25', '--json']).finally(() =>
      t.testClient.removeBlockTimestampInterval(),
    )
    expect(output.stderr).toBe('')
    expect(output.code).toBe(0)
    const report = JSON.parse(output.stdout)
    expect(report).toMatchObject({
      mode: 'amount',
      dryRun: false,
      amount: { usdc: '25', atomic: '25000000' },
      capacityLimited: false,
    })
    // The fewest shares that pay the amount: it, or a base unit more (docs/sdk.md#rounding).
    const arrives = BigInt(report.usdcReturned.atomic)
    expect(arrives - parseUsdc('25')).toBeGreaterThanOrEqual(0n)
    expect(arrives - parseUsdc('25')).toBeLessThanOrEqual(1n)
    expect(BigInt(report.feePaid.atomic)).toBeGreaterThan(0n)
    expect(report.txHash).toMatch(/^0x[0-9a-f]{64}$/)
    expect(await balance()).toBe(before + arrives)
    expectNoKey(output)
  })

  it('--all --dry-run says what everything comes to and sends nothing; --all then takes it', async () => {
    const nonce = () => t.publicClient.getTransactionCount({ address: merchant() })
    const [nonceBefore, sharesBefore, before] = await Promise.all([nonce(), shares(), balance()])
    const dry = await run(['--all', '--dry-run'])
    expect(dry.code).toBe(0)
    expect(dry.stdout).toMatch(
      /^x402-vault withdraw \(dry run\): 0x[0-9a-fA-F]{40} on base-sepolia$/m,
    )
    const wouldTake =
      /would take {2}([\d.]+) USDC \(everything the position can deliver now\)/.exec(
        dry.stdout,
      )?.[1]
    expect(wouldTake).toBeDefined()
    expect(dry.stdout).toContain('(dry run: nothing sent)')
    expect([await nonce(), await shares(), await balance()]).toEqual([
      nonceBefore,
      sharesBefore,
      before,
    ])

    const all = await run(['--all'])
    expect(all.stderr).toBe('')
    expect(all.code).toBe(0)
    const arrived = /arrived {5}([\d.]+) USDC/.exec(all.stdout)?.[1] as string
    expect(await shares()).toBe(0n)
    expect(await balance()).toBe(before + parseUsdc(arrived))
    // The block after the dry run's has a moment more interest: never less than it said.
    expect(parseUsdc(arrived)).toBeGreaterThanOrEqual(parseUsdc(wouldTake as string))
    expect(parseUsdc(arrived) - parseUsdc(wouldTake as string)).toBeLessThan(parseUsdc('0.01'))

    const nothing = await run(['--all'])
    expect(nothing.code).toBe(0)
    expect(nothing.stdout).toContain('withdrawn   nothing: the wallet has no position')
  })

  it('works while deposits are paused', async () => {
    await t.asDeployer(devnet.addresses.router, 'function pauseDeposits()')
    const before = await balance()
    const output = await run(['--amount', '10'])
    expect(output.stderr).toBe('')
    expect(output.code).toBe(0)
    const arrived = parseUsdc(/arrived {5}([\d.]+) USDC/.exec(output.stdout)?.[1] as string)
    expect(arrived - parseUsdc('10')).toBeLessThanOrEqual(1n)
    expect(await balance()).toBe(before + arrived)
  })

  it('--all with the venues short of cash takes what they can pay and says so', async () => {
    const cap = parseUsdc('15')
    await t.asDeployer(devnet.addresses.aavePool, 'function setIdleLiquidity(uint256)', [cap])
    await t.asDeployer(devnet.addresses.morphoVault, 'function setMaxWithdrawCap(uint256)', [cap])
    const sharesBefore = await shares()
    const before = await balance()
    const output = await run(['--all', '--json'])
    expect(output.stderr).toBe('')
    expect(output.code).toBe(0)
    const report = JSON.parse(output.stdout)
    expect(report.capacityLimited).toBe(true)
    const capacity = BigInt(report.totalWithdrawCap.atomic)
    const arrives = BigInt(report.usdcReturned.atomic)
    expect(capacity).toBeLessThan(BigInt(report.currentValue.atomic))
    expect(arrives + BigInt(report.feePaid.atomic)).toBeLessThanOrEqual(capacity)
    expect(arrives).toBeGreaterThan((capacity * 99n) / 100n - BigInt(report.feePaid.atomic))
    expect(await balance()).toBe(before + arrives)
    const left = await shares()
    expect(left).toBeGreaterThan(0n)
    expect(sharesBefore - left).toBe(BigInt(report.sharesBurned))
  })

  it('an RPC that fails the send: exit 1 with the reason, nothing lost, no key', async () => {
    const [sharesBefore, before] = await Promise.all([shares(), balance()])
    proxy.setFault({ kind: 'status', status: 503 }, { methods: ['eth_sendRawTransaction'] })
    try {
      const output = await run(['--amount', '10'], `${proxy.url}/v2/apikey123`)
      expect(output.code).toBe(1)
      expect(output.stderr).toMatch(/^x402-vault withdraw: failed \([A-Z_]+\): /)
      expect(output.stderr.trim().split('\n')).toHaveLength(1)
      expect(output.stderr).not.toContain('apikey123')
      expectNoKey(output)
    } finally {
      proxy.setFault(undefined)
    }
    expect([await shares(), await balance()]).toEqual([sharesBefore, before])
  })

  it('refuses bad options with exit 2 before it reads the chain', async () => {
    const [both, neither, zero] = await Promise.all([
      run(['--amount', '1', '--all']),
      run([]),
      run(['--amount', '0']),
    ])
    expect(both.code).toBe(2)
    expect(both.stderr).toContain('Give --amount <usdc> or --all, not both.')
    expect(neither.code).toBe(2)
    expect(zero.code).toBe(2)
    expect(zero.stderr).toContain('--amount must be above zero.')
  })
})
