import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeAddressesFile } from '../../harness/addressesFile.js'
import { runCli } from '../../harness/runCli.js'
import { type Devnet, startDevnet } from '../../src/devnet/startDevnet.js'
import { parseUsdc } from '../../src/index.js'
import { devnetClients } from '../support/devnet.js'

const run = runCli

describe('x402-vault status', () => {
  let devnet: Devnet
  let addresses: string

  beforeAll(async () => {
    devnet = await startDevnet()
    addresses = await writeAddressesFile(devnet)
  })
  afterAll(async () => {
    await devnet?.stop()
  })

  it('prints the status as a table, reading the RPC URL from the environment', async () => {
    const { code, stdout, stderr } = await run(['status', '--addresses', addresses], {
      BASE_SEPOLIA_RPC_URL: devnet.rpcUrl,
    })
    expect(stderr).toBe('')
    expect(code).toBe(0)
    expect(stdout).toMatch(/^x402-vault on base-sepolia \(chain id 84532\) at block \d+/)
    expect(stdout).toMatch(/^ {2}Deposits +open$/m)
    expect(stdout).toMatch(/^ {2}Minimum deposit +10 USDC$/m)
    expect(stdout).toMatch(/^ {2}TVL cap +500000 USDC \(room 500000 USDC\)$/m)
    expect(stdout).toMatch(
      /^ {2}Rates \(spot \/ TWAR\) +Aave 3\.50% \/ 3\.50%, safe; Morpho 4\.\d\d%/m,
    )
    expect(stdout).toMatch(/^ {2}New deposits go to +Morpho/m)
    // The share symbol comes from the chain.
    expect(stdout).toContain('USDC per dvUSDC')
  })

  it('prints JSON with --json, bigints as strings', async () => {
    const { code, stdout } = await run(
      ['status', '--json', '--rpc', devnet.rpcUrl, '--addresses', addresses],
      {},
    )
    expect(code).toBe(0)
    const report = JSON.parse(stdout)
    expect(report).toMatchObject({ chain: 'base-sepolia', chainId: 84532 })
    expect(report.blockNumber).toMatch(/^\d+$/)
    expect(report.status).toMatchObject({ chain: 'base-sepolia', chainId: 84532 })
    expect(report.status.minDeposit).toEqual({ usdc: '10', atomic: '10000000' })
    expect(report.yield.optimal.venue).toBe('morpho')
  })

  it('--wallet adds the position: its value, cost basis and yield to date', async () => {
    const t = devnetClients(devnet)
    await t.vault.ensureInitializedAndWait()
    await t.vault.depositAndWait({ amount: parseUsdc('100') })
    await devnet.advanceTime(30n * 24n * 3600n)
    const wallet = devnet.accounts.merchant.address
    const [table, json] = await Promise.all([
      run(['status', '--rpc', devnet.rpcUrl, '--addresses', addresses, '--wallet', wallet]),
      run([
        'status',
        '--json',
        '--rpc',
        devnet.rpcUrl,
        '--addresses',
        addresses,
        '--wallet',
        wallet,
      ]),
    ])
    expect(table.stderr).toBe('')
    expect(table.code).toBe(0)
    const { position } = JSON.parse(json.stdout)
    expect(position.deposited).toEqual({ usdc: '100', atomic: '100000000' })
    const accrued = BigInt(position.accruedYield.atomic)
    expect(accrued).toBeGreaterThan(0n)
    expect(accrued).toBe(BigInt(position.currentValue.atomic) - 100_000_000n)
    expect(table.stdout).toContain(`Position of ${wallet}`)
    expect(table.stdout).toMatch(/^ {2}Deposited \(cost basis\) +100 USDC$/m)
    expect(table.stdout).toMatch(/^ {2}Yield to date +0\.\d+ USDC \(before the fee on yield\)$/m)
    const bad = await run(['status', '--wallet', '0x1234'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--wallet')
  })

  it('takes the deployment from VAULT_CHAIN and VAULT_ADDRESSES, as the MCP server does; where there is none, one line and exit code 1', async () => {
    const rpc = { BASE_SEPOLIA_RPC_URL: devnet.rpcUrl }
    const [fromEnv, builtIn, wrongChain] = await Promise.all([
      run(['status', '--json'], {
        ...rpc,
        VAULT_CHAIN: 'base-sepolia',
        VAULT_ADDRESSES: addresses,
      }),
      // The devnet printed VAULT_ADDRESSES, but it was not exported: the public addresses have no code here.
      run(['status'], rpc),
      run(['status'], { ...rpc, VAULT_CHAIN: 'optimism' }),
    ])
    expect(fromEnv.stderr).toBe('')
    expect(fromEnv.code).toBe(0)
    expect(JSON.parse(fromEnv.stdout).chainId).toBe(84532)
    expect(builtIn.stdout).toBe('')
    expect(builtIn.code).toBe(1)
    expect(builtIn.stderr).toMatch(
      /^x402-vault: no vault deployment at 0x[0-9a-fA-F]{40} on base-sepolia \(RPC http:\/\/127\.0\.0\.1:\d+\): check --chain, --rpc and --addresses .*\n$/,
    )
    expect(wrongChain.code).toBe(2)
    expect(wrongChain.stderr).toContain('VAULT_CHAIN must be base-sepolia or base')
  })

  it('answers --help, and refuses unknown flags and chains with exit code 2', async () => {
    const help = await run(['status', '--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('Usage: x402-vault status')
    for (const args of [
      ['status', '--verbose'],
      ['status', '--chain', 'optimism'],
    ]) {
      const result = await run(args)
      expect(result.code, args.join(' ')).toBe(2)
      expect(result.stderr).toMatch(/^x402-vault: .+\nRun `x402-vault status --help`\.\n$/)
    }
  })

  it('names an addresses file that is missing, with exit code 2', async () => {
    const missing = join(tmpdir(), 'x402-vault-no-such-file.json')
    const result = await run(['status', '--rpc', devnet.rpcUrl, '--addresses', missing])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(missing)
  })

  it('reports an unreachable RPC in one line, without the URL’s key, exit code 1', async () => {
    const result = await run(['status', '--addresses', addresses], {
      BASE_SEPOLIA_RPC_URL: 'http://127.0.0.1:9/v2/SECRET-KEY?apikey=SECRET',
    })
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(
      /^x402-vault: .*could not be reached \(http:\/\/127\.0\.0\.1:9\)\.\n$/,
    )
    expect(result.stderr).not.toContain('SECRET')
  })
})
