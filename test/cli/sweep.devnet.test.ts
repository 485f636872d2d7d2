/**
 * `x402-vault sweep`, the built bin, against a devnet: a sweep, a dry run, JSON, nothing to sweep, and
 * the environment and option mistakes that exit with code 2. The private key is never printed.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { writeAddressesFile } from '../../harness/addressesFile.js'
import { usdcBalance } from '../../harness/merchant.js'
import { runCli } from '../../harness/runCli.js'
import type { Devnet } from '../../src/devnet/startDevnet.js'
import { formatUsdc, parseUsdc } from '../../src/index.js'
import { type DevnetClients, useDevnet } from '../support/devnet.js'

let devnet: Devnet
let t: DevnetClients
let addressesPath: string
useDevnet({ chain: 'base-sepolia' }, async (started, clients) => {
  devnet = started
  t = clients
})
beforeAll(async () => {
  addressesPath = await writeAddressesFile(devnet)
})

/** Runs `x402-vault sweep` with only the given environment (and PATH). */
const run = (args: string[], env: Record<string, string | undefined>) =>
  runCli(['sweep', ...args], env)

const merchantEnv = () => ({
  MERCHANT_PRIVATE_KEY: devnet.accounts.merchant.privateKey,
  BASE_SEPOLIA_RPC_URL: devnet.rpcUrl,
})
const merchantBalance = () => usdcBalance(devnet, devnet.accounts.merchant.address)

/** The key, with and without its 0x, must appear nowhere in what the bin printed. */
function expectNoKey(output: { stdout: string; stderr: string }, key: string) {
  const bare = key.replace(/^0x/, '').toLowerCase()
  expect(`${output.stdout}${output.stderr}`.toLowerCase()).not.toContain(bare)
}

describe('x402-vault sweep', () => {
  it('registers the wallet, deposits the idle USDC above the reserve and prints a summary', async () => {
    const balance = await merchantBalance()
    const output = await run(
      ['--addresses', addressesPath, '--reserve', '900', '--min-idle', '50'],
      merchantEnv(),
    )
    expect(output.stderr).toBe('')
    expect(output.code).toBe(0)
    const idle = balance - parseUsdc('900')
    const lines = output.stdout.trim().split('\n')
    expect(lines[0]).toBe(`x402-vault sweep: ${devnet.accounts.merchant.address} on base-sepolia`)
    expect(lines[1]).toMatch(/^ {2}registered {2}tx 0x[0-9a-f]{64}$/)
    expect(lines.slice(2, 5)).toEqual([
      `  balance     ${formatUsdc(balance)} USDC`,
      '  reserve     900 USDC',
      `  idle        ${formatUsdc(idle)} USDC (the vault's minimum deposit: 10 USDC)`,
    ])
    expect(lines[5]).toBe(`  deposited   ${formatUsdc(idle)} USDC`)
    expect(lines[6]).toMatch(/^ {2}tx {10}0x[0-9a-f]{64}$/)
    expect(await merchantBalance()).toBe(parseUsdc('900'))
    expectNoKey(output, devnet.accounts.merchant.privateKey)
  })

  it('--dry-run says what it would do and sends nothing; --json gives exact amounts', async () => {
    const balance = await merchantBalance()
    const nonce = await t.publicClient.getTransactionCount({
      address: devnet.accounts.merchant.address,
    })
    const output = await run(
      ['--addresses', addressesPath, '--reserve', '0.5', '--dry-run', '--json'],
      merchantEnv(),
    )
    expect(output.code).toBe(0)
    expect(JSON.parse(output.stdout)).toEqual({
      chain: 'base-sepolia',
      chainId: 84532,
      wallet: devnet.accounts.merchant.address,
      dryRun: true,
      walletBalance: { usdc: formatUsdc(balance), atomic: balance.toString() },
      reserveFloor: { usdc: '0.5', atomic: '500000' },
      idleAmount: {
        usdc: formatUsdc(balance - 500_000n),
        atomic: (balance - 500_000n).toString(),
      },
      minDeposit: { usdc: '10', atomic: '10000000' },
      deposited: true,
      txHash: null,
      blockNumber: null,
      sharesMinted: null,
      reason: null,
      registrationTxHash: null,
      needsRegistration: true,
    })
    expect(await merchantBalance()).toBe(balance)
    expect(
      await t.publicClient.getTransactionCount({ address: devnet.accounts.merchant.address }),
    ).toBe(nonce)
  })

  it('deposits nothing below the threshold, says why, and exits 0', async () => {
    await t.vault.ensureInitializedAndWait()
    const output = await run(['--addresses', addressesPath, '--min-idle', '5000'], merchantEnv())
    expect(output.code).toBe(0)
    expect(output.stdout).toContain('  deposited   nothing: the idle USDC is below --min-idle\n')
    expect(output.stdout).not.toContain('registered')
  })

  it('takes the deployment from VAULT_ADDRESSES, as printed by the devnet; a reserve above the balance is named as the reason', async () => {
    const balance = await merchantBalance()
    const output = await run(['--reserve', formatUsdc(balance + 1n), '--dry-run'], {
      ...merchantEnv(),
      VAULT_ADDRESSES: addressesPath,
    })
    expect(output.stderr).toBe('')
    expect(output.code).toBe(0)
    expect(output.stdout).toContain(
      '  deposited   nothing: the wallet holds less than --reserve, so none of it is idle\n',
    )
    expect(output.stdout).not.toContain("below the vault's minimum deposit")
  })

  it('takes the RPC URL from --rpc as well, before the environment', async () => {
    const output = await run(
      ['--addresses', addressesPath, '--rpc', devnet.rpcUrl, '--dry-run', '--json'],
      {
        MERCHANT_PRIVATE_KEY: devnet.accounts.merchant.privateKey,
        BASE_SEPOLIA_RPC_URL: 'http://127.0.0.1:1',
      },
    )
    expect(output.stderr).toBe('')
    expect(output.code).toBe(0)
    expect(JSON.parse(output.stdout)).toMatchObject({ dryRun: true, txHash: null })
  })

  it('prints its usage with --help', async () => {
    const output = await run(['--help'], {})
    expect(output.code).toBe(0)
    expect(output.stdout).toMatch(/^Usage: x402-vault sweep \[options\]/)
    expect(output.stdout).toContain('MERCHANT_PRIVATE_KEY')
    expect(output.stdout).toMatch(/^ {2}--rpc <url> /m)
  })

  const wrongKey = `0x${'ab'.repeat(31)}zz`
  it.each([
    [
      'no key',
      { BASE_SEPOLIA_RPC_URL: 'http://127.0.0.1:1' },
      [],
      /MERCHANT_PRIVATE_KEY is not set/,
    ],
    [
      'a malformed key',
      { MERCHANT_PRIVATE_KEY: wrongKey, BASE_SEPOLIA_RPC_URL: 'http://127.0.0.1:1' },
      [],
      /MERCHANT_PRIVATE_KEY is not a private key: expected 0x followed by 64 hex digits \(it has 66 characters\)/,
    ],
    [
      'a key outside the curve',
      { MERCHANT_PRIVATE_KEY: `0x${'ff'.repeat(32)}`, BASE_SEPOLIA_RPC_URL: 'http://127.0.0.1:1' },
      [],
      /MERCHANT_PRIVATE_KEY is not a valid secp256k1 private key/,
    ],
    [
      'no RPC URL',
      { MERCHANT_PRIVATE_KEY: `0x${'11'.repeat(32)}` },
      [],
      /BASE_SEPOLIA_RPC_URL is not set/,
    ],
    [
      'the mainnet RPC URL missing for --chain base',
      { MERCHANT_PRIVATE_KEY: `0x${'11'.repeat(32)}`, BASE_SEPOLIA_RPC_URL: 'http://127.0.0.1:1' },
      ['--chain', 'base'],
      /BASE_MAINNET_RPC_URL is not set/,
    ],
    [
      'an RPC URL that is not http(s)',
      {
        MERCHANT_PRIVATE_KEY: `0x${'11'.repeat(32)}`,
        BASE_SEPOLIA_RPC_URL: 'ftp://rpc.example/v2/apikey123',
      },
      [],
      /BASE_SEPOLIA_RPC_URL must be an http\(s\) URL, not ftp:\/\/\(redacted\)/,
    ],
    [
      'an --rpc that is not http(s)',
      { MERCHANT_PRIVATE_KEY: `0x${'11'.repeat(32)}`, BASE_SEPOLIA_RPC_URL: 'http://127.0.0.1:1' },
      ['--rpc', 'ftp://rpc.example/v2/apikey123'],
      /--rpc must be an http\(s\) URL, not ftp:\/\/\(redacted\)/,
    ],
    [
      'a bad --reserve',
      { MERCHANT_PRIVATE_KEY: `0x${'11'.repeat(32)}`, BASE_SEPOLIA_RPC_URL: 'http://127.0.0.1:1' },
      ['--reserve=-5'],
      /--reserve: Invalid USDC amount "-5": signs are not allowed/,
    ],
    [
      'an unknown chain',
      { MERCHANT_PRIVATE_KEY: `0x${'11'.repeat(32)}`, BASE_SEPOLIA_RPC_URL: 'http://127.0.0.1:1' },
      ['--chain', 'ethereum'],
      /--chain must be base-sepolia or base/,
    ],
    [
      'a missing addresses file',
      { MERCHANT_PRIVATE_KEY: `0x${'11'.repeat(32)}`, BASE_SEPOLIA_RPC_URL: 'http://127.0.0.1:1' },
      ['--addresses', '/nonexistent/addresses.json'],
      /the file does not exist/,
    ],
  ] as const)('%s: a clear message and exit code 2', async (_name, env, args, message) => {
    const output = await run([...args], env)
    expect(output.code).toBe(2)
    expect(output.stdout).toBe('')
    expect(output.stderr).toMatch(message)
    expect(output.stderr).not.toContain('apikey123')
    if ('MERCHANT_PRIVATE_KEY' in env) expectNoKey(output, env.MERCHANT_PRIVATE_KEY)
  })

  it('an RPC that does not answer: exit code 1 with a message, no key, no stack', async () => {
    const output = await run([], {
      MERCHANT_PRIVATE_KEY: devnet.accounts.merchant.privateKey,
      BASE_SEPOLIA_RPC_URL: 'http://127.0.0.1:1/v2/apikey123',
    })
    expect(output.code).toBe(1)
    expect(output.stderr).toMatch(/^x402-vault: .*RPC/)
    expect(output.stderr.trim().split('\n')).toHaveLength(1)
    expect(output.stderr).not.toContain('apikey123')
    expectNoKey(output, devnet.accounts.merchant.privateKey)
  })
})
