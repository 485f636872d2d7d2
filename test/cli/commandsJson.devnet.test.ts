/**
 * What the four commands of a merchant's money (`status`, `sweep`, `withdraw`, `ledger`) share, run as
 * the built bin against one devnet: their `--json` speaks one vocabulary (docs/operations.md, "JSON
 * output"), each checks the RPC's chain id before it reads or sends, and `ledger --html -` writes the
 * page to standard output.
 */
import { existsSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { getAddress } from 'viem'
import { beforeAll, describe, expect, it } from 'vitest'
import { writeAddressesFile } from '../../harness/addressesFile.js'
import { runCli } from '../../harness/runCli.js'
import { tempFolder } from '../../harness/tempFolder.js'
import type { Devnet } from '../../src/devnet/startDevnet.js'
import { parseUsdc } from '../../src/index.js'
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

const merchant = () => devnet.accounts.merchant.address
const run = (args: string[], options: { cwd?: string } = {}) =>
  runCli(
    [...args, '--addresses', addressesPath],
    {
      MERCHANT_PRIVATE_KEY: devnet.accounts.merchant.privateKey,
      BASE_SEPOLIA_RPC_URL: devnet.rpcUrl,
    },
    options,
  )

/** Names the commands used before they shared the SDK's: none may come back. */
const retiredNames = [
  'arrives',
  'fee',
  'sharesBurnt',
  'positionValue',
  'positionWithdrawable',
  'capacity',
  'requested',
  'balance',
  'reserve',
  'idle',
  'block',
]
/** The integers the JSON gives as numbers; every other one is a decimal string. */
const numberKeys = new Set(['chainId', 'logIndex', 'vaultType'])

/**
 * Where a command's JSON leaves the vocabulary: a USDC amount that is not `{ usdc, atomic }` with the two
 * agreeing, an integer as a number, an address not checksummed, a hash that is not one, a retired name.
 */
function vocabularyProblems(value: unknown, path: string, retired: string[]): string[] {
  if (Array.isArray(value))
    return value.flatMap((item, i) => vocabularyProblems(item, `${path}[${i}]`, retired))
  if (typeof value === 'number') {
    const key = path.split('.').at(-1) ?? ''
    return numberKeys.has(key) ? [] : [`${path} is a number, not a decimal string`]
  }
  if (typeof value === 'string') {
    if (/^0x[0-9a-fA-F]{40}$/.test(value) && value !== getAddress(value))
      return [`${path} is not checksummed`]
    if (/Hash$/.test(path) && !/^0x[0-9a-f]{64}$/.test(value)) return [`${path} is not a hash`]
    return []
  }
  if (value === null || typeof value !== 'object') return []
  const record = value as Record<string, unknown>
  const keys = Object.keys(record)
  if (keys.includes('usdc') && keys.includes('atomic') && keys.length === 2) {
    return parseUsdc(record.usdc as string) === BigInt(record.atomic as string)
      ? []
      : [`${path}: ${record.usdc} is not ${record.atomic} base units`]
  }
  return keys.flatMap((key) => [
    ...(retired.includes(key) ? [`${path}.${key} uses a retired name`] : []),
    ...vocabularyProblems(record[key], `${path}.${key}`, retired),
  ])
}

describe('x402-vault status, sweep, withdraw and ledger', () => {
  it('--json: one vocabulary, the SDK’s names, and the same facts under the same names', async () => {
    const fromBlock = (await t.publicClient.getBlockNumber()) + 1n
    const sweep = await run(['sweep', '--reserve', '900', '--json'])
    expect(sweep.stderr).toBe('')
    expect(sweep.code).toBe(0)
    await devnet.advanceYield(30 * 24 * 3600)
    const withdraw = await run(['withdraw', '--amount', '10', '--json'])
    expect(withdraw.stderr).toBe('')
    expect(withdraw.code).toBe(0)
    const [status, ledger] = await Promise.all([
      run(['status', '--wallet', merchant(), '--json']),
      run(['ledger', '--wallet', merchant(), '--from-block', fromBlock.toString(), '--json']),
    ])
    const outputs = { sweep, withdraw, status, ledger }
    const json = Object.fromEntries(
      Object.entries(outputs).map(([name, output]) => {
        expect(output.stderr, name).toBe('')
        expect(output.code, name).toBe(0)
        return [name, JSON.parse(output.stdout)]
      }),
    )
    for (const [name, report] of Object.entries(json)) {
      expect(report, name).toMatchObject({
        chain: 'base-sepolia',
        chainId: 84532,
        wallet: merchant(),
      })
      // The ledger's entries carry the SDK's `fee` of a withdrawal; the withdraw command's is `feePaid`.
      const retired = name === 'ledger' ? retiredNames.filter((key) => key !== 'fee') : retiredNames
      expect(vocabularyProblems(report, name, retired)).toEqual([])
    }
    const { sweep: swept, withdraw: withdrawn, status: read, ledger: listed } = json
    expect(swept.blockNumber).toMatch(/^\d+$/)
    expect(withdrawn.blockNumber).toMatch(/^\d+$/)
    expect(read.blockNumber).toMatch(/^\d+$/)
    // The same facts, under the same names, in each command that shows them.
    const sweepEntry = listed.entries.find((e: { kind: string }) => e.kind === 'sweep')
    expect(sweepEntry).toMatchObject({
      txHash: swept.txHash,
      blockNumber: swept.blockNumber,
      amount: swept.idleAmount,
      shares: swept.sharesMinted,
    })
    const withdrawalEntry = listed.entries.find((e: { kind: string }) => e.kind === 'withdrawal')
    expect(withdrawalEntry).toMatchObject({
      txHash: withdrawn.txHash,
      blockNumber: withdrawn.blockNumber,
      amount: withdrawn.usdcReturned,
      fee: withdrawn.feePaid,
      yieldRealised: withdrawn.yieldEarned,
      shares: withdrawn.sharesBurned,
    })
    expect(read.position.shares).toBe(listed.position.closingShares)
    expect(read.position.liquidUsdc).toEqual(listed.tokens[0].closingBalance)
  })

  it('check the RPC’s chain id before they read or send, and say which chain is which', async () => {
    // Base's addresses (the same contracts, named for chain 8453) with Base Sepolia's RPC.
    const baseAddresses = await writeAddressesFile({ ...devnet, chain: 'base', chainId: 8453 })
    const env = {
      MERCHANT_PRIVATE_KEY: devnet.accounts.merchant.privateKey,
      BASE_MAINNET_RPC_URL: devnet.rpcUrl,
    }
    const nonce = () => t.publicClient.getTransactionCount({ address: merchant() })
    const before = await nonce()
    const commands = [
      ['status'],
      ['ledger', '--wallet', merchant(), '--since', '1h'],
      ['sweep'],
      ['sweep', '--setup', '--wallet', merchant(), '--operator', devnet.accounts.buyer.address],
      ['withdraw', '--amount', '1'],
    ]
    const results = await Promise.all(
      commands.map((args) =>
        runCli([...args, '--chain', 'base', '--addresses', baseAddresses], env),
      ),
    )
    for (const [i, result] of results.entries()) {
      const command = (commands[i] as string[]).join(' ')
      expect(result.stdout, command).toBe('')
      expect(result.code, command).toBe(2)
      expect(result.stderr, command).toMatch(
        /^x402-vault: The RPC http:\/\/127\.0\.0\.1:\d+ serves chain id 84532 \(base-sepolia\), but this command is for base \(chain id 8453, from --chain\): /,
      )
    }
    expect(await nonce()).toBe(before)
    // From VAULT_CHAIN, the message says so.
    const fromEnv = await runCli(['status', '--addresses', baseAddresses], {
      ...env,
      VAULT_CHAIN: 'base',
    })
    expect(fromEnv.code).toBe(2)
    expect(fromEnv.stderr).toContain('(chain id 8453, from VAULT_CHAIN)')
  })

  it('ledger --html - writes the page to standard output, and no file named -', async () => {
    const cwd = await tempFolder('x402-vault-ledger-stdout-')
    const ledger = ['ledger', '--wallet', merchant(), '--since', '1h']
    const page = await run([...ledger, '--html', '-'], { cwd })
    expect(page.stderr).toBe('')
    expect(page.code).toBe(0)
    expect(page.stdout).toMatch(/^<!doctype html>\n/)
    expect(page.stdout).toMatch(/<\/html>\n$/)
    expect(page.stdout).not.toContain('Report written')
    expect(existsSync(join(cwd, '-'))).toBe(false)
    expect(await readdir(cwd)).toEqual([])
    const both = await run([...ledger, '--html', '-', '--json'], { cwd })
    expect(both.code).toBe(2)
    expect(both.stderr).toContain('--html - writes the page to standard output')
  })
})
