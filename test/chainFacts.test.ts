/**
 * Each per-chain fact is written once, in the chain table (`src/sdk/chains.ts`), and everything else
 * reads it: no other file under `src/` names a chain's address, an address that is the same on every
 * chain, or compares, lists or keys by a chain's name. Adding a chain is then one edit (see
 * docs/development.md, "Add a chain"). The table's x402 facts are x402's own.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  BATCH_SETTLEMENT_ADDRESS,
  DEFAULT_ASSETS,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  PERMIT2_ADDRESS,
  x402ExactPermit2ProxyAddress as theirExactProxy,
  x402UptoPermit2ProxyAddress as theirUptoProxy,
} from '@x402/evm'
import { describe, expect, it } from 'vitest'
import {
  circleTestUsdc,
  multicall3Address,
  networkOf,
  permit2Address,
  vaultChainNames,
  vaultChains,
  x402BatchSettlementAddress,
  x402Erc3009DepositCollectorAddress,
  x402ExactPermit2ProxyAddress,
  x402Permit2DepositCollectorAddress,
  x402UptoPermit2ProxyAddress,
} from '../src/sdk/chains.js'

const root = join(import.meta.dirname, '..')
const table = 'src/sdk/chains.ts'

/** Every tracked file under src/ but the table, with its lines. */
function sourceFiles(): { path: string; lines: string[] }[] {
  return execFileSync('git', ['ls-files', 'src'], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter((path) => path !== '' && path !== table)
    .map((path) => ({ path, lines: readFileSync(join(root, path), 'utf8').split('\n') }))
}

/**
 * The addresses only the table may write: every address in it, and (written out here, so that a
 * constant dropped from the table is still caught) the ones that are the same on every chain and
 * Circle's test USDC.
 */
const knownAddresses = new Set(
  [
    ...Object.values(vaultChains).flatMap((entry) => [
      ...Object.values(entry.addresses),
      ...(entry.x402DefaultUsdc ? [entry.x402DefaultUsdc.address] : []),
    ]),
    multicall3Address,
    permit2Address,
    x402ExactPermit2ProxyAddress,
    x402UptoPermit2ProxyAddress,
    x402BatchSettlementAddress,
    x402Erc3009DepositCollectorAddress,
    x402Permit2DepositCollectorAddress,
    '0xcA11bde05977b3631167028862bE2a173976CA11',
    '0x000000000022D473030F116dDEE9F6B43aC78BA3',
    '0x402085c248EeA27D92E8b30b2C58ed07f9E20001',
    '0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002',
    '0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003',
    '0x4020806089470a89826cB9fB1f4059150b550004',
    '0x4020425FAf3B746C082C2f942b4E5159887B0005',
    '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
  ].map((address) => address.toLowerCase()),
)

/** An address written out: `0x` and 40 hex digits, not part of a longer hex string. */
const addressPattern = /(?<![0-9a-zA-Z])0x[0-9a-fA-F]{40}(?![0-9a-fA-F])/g

const bareName = `(?:${vaultChainNames.map((name) => name.replace(/[-]/g, '\\-')).join('|')})`
const quotedName = `['"\`](?:${vaultChainNames.map((name) => name.replace(/[-]/g, '\\-')).join('|')})['"\`]`
/**
 * What a per-chain fact written outside the table looks like: a comparison with a chain's name
 * (`=== 'base-sepolia'`), a union or an array of names (`'base' | 'base-sepolia'`,
 * `['base', 'base-sepolia']`), a `case` on one, a record keyed by one (`'base-sepolia': …`), or a
 * help text's list of them (`<base-sepolia|base>`).
 */
const chainNameChecks = [
  new RegExp(`[!=]==?\\s*${quotedName}`),
  new RegExp(`${quotedName}\\s*[!=]==?`),
  new RegExp(`${quotedName}\\s*\\|\\s*${quotedName}`),
  new RegExp(`\\[\\s*${quotedName}\\s*,`),
  new RegExp(`\\bcase\\s+${quotedName}\\s*:`),
  new RegExp(`${quotedName}\\s*:(?!:)`),
  // A help text's list of choices, such as `--chain <base-sepolia|base>`.
  new RegExp(`\\b${bareName}\\|${bareName}\\b`),
]

/** The `@x402/evm` exports that are addresses: the table names them; nothing else imports them. */
const x402AddressImport =
  /import\s*(?:type\s*)?\{[^}]*\b(?:\w+_ADDRESS|x402\w*Address)\b[^}]*\}\s*from\s*'@x402\/evm[^']*'/

describe('the chain table', () => {
  it('is the only file under src/ that writes a chain address or an address the same on every chain', () => {
    const found: string[] = []
    for (const { path, lines } of sourceFiles()) {
      lines.forEach((line, index) => {
        for (const [address] of line.matchAll(addressPattern)) {
          if (knownAddresses.has(address.toLowerCase()))
            found.push(`${path}:${index + 1}: ${address}`)
        }
      })
    }
    expect(found).toEqual([])
  })

  it("is the only file under src/ that compares, lists or keys by a chain's name", () => {
    const found: string[] = []
    for (const { path, lines } of sourceFiles()) {
      lines.forEach((line, index) => {
        for (const check of chainNameChecks) {
          const match = check.exec(line)
          if (match) found.push(`${path}:${index + 1}: ${match[0]}`)
        }
      })
    }
    expect(found).toEqual([])
  })

  it("is where the devnet's deployer takes the x402 addresses from, not @x402/evm", () => {
    const found = sourceFiles()
      .filter(({ lines }) => x402AddressImport.test(lines.join('\n')))
      .map(({ path }) => path)
    expect(found).toEqual([])
  })

  it("names x402's addresses as @x402/evm 2.27 does", () => {
    expect(permit2Address).toBe(PERMIT2_ADDRESS)
    expect(x402ExactPermit2ProxyAddress).toBe(theirExactProxy)
    expect(x402UptoPermit2ProxyAddress).toBe(theirUptoProxy)
    expect(x402BatchSettlementAddress).toBe(BATCH_SETTLEMENT_ADDRESS)
    expect(x402Erc3009DepositCollectorAddress).toBe(ERC3009_DEPOSIT_COLLECTOR_ADDRESS)
  })

  it("gives each chain x402's default USDC, with its EIP-712 domain", () => {
    for (const entry of Object.values(vaultChains)) {
      const [theirs] = DEFAULT_ASSETS[networkOf(entry.name)] ?? []
      const ours = entry.x402DefaultUsdc ?? { address: entry.addresses.usdc, ...entry.usdcPayment }
      expect({ address: ours.address, name: ours.name, version: ours.version }).toEqual({
        address: theirs?.asset,
        name: theirs?.name,
        version: theirs?.version,
      })
    }
    expect(vaultChains['base-sepolia'].x402DefaultUsdc).toBe(circleTestUsdc)
  })

  it('keys each entry by its name, with its own chain id and viem chain', () => {
    for (const name of vaultChainNames) {
      const entry = vaultChains[name]
      expect(entry.name).toBe(name)
      expect(entry.chainId).toBe(entry.viemChain.id)
    }
  })
})
