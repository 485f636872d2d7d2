import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeAddressesFile } from '../../harness/addressesFile.js'
import { type Devnet, startDevnet } from '../../src/devnet/startDevnet.js'
import { parseUsdc } from '../../src/index.js'
import { tsxAsInstalled } from '../support/tsxAsInstalled.js'

const run = promisify(execFile)
const root = join(import.meta.dirname, '../..')
const tsx = join(root, 'node_modules/.bin/tsx')

// The quickstart uses this file's devnet and the demo starts its own: the two run at once.
describe.concurrent('the README examples run against a devnet', () => {
  let devnet: Devnet
  let addressesPath: string

  beforeAll(async () => {
    devnet = await startDevnet({ chain: 'base-sepolia' })
    addressesPath = await writeAddressesFile(devnet)
  })
  afterAll(async () => {
    await devnet?.stop()
  })

  it('examples/sdk-quickstart.ts verifies, registers, reads, plans, deposits and withdraws', async () => {
    const { stdout } = await run(tsx, [join(root, 'examples/sdk-quickstart.ts')], {
      cwd: root,
      env: {
        ...process.env,
        BASE_SEPOLIA_RPC_URL: devnet.rpcUrl,
        VAULT_ADDRESSES: addressesPath,
        MERCHANT_PRIVATE_KEY: devnet.accounts.merchant.privateKey,
        ...(await tsxAsInstalled()),
      },
    })
    expect(stdout).toMatch(/^paused: false symbol: dvUSDC$/m)
    expect(stdout).toMatch(/^APY aave: 3\.50% morpho: 4\.50% new deposits go to: morpho$/m)
    expect(stdout).toMatch(/^needs approval: true min shares: 24\.975$/m)
    expect(stdout).toMatch(/^deposited 25 USDC: 0x[0-9a-f]{64} 25 shares$/m)
    expect(stdout).toMatch(/^withdrew 10(\.\d+)? USDC$/m)
    // 15 USDC plus interest; the seeded Morpho vault's share conversion rounds down, by 1 base unit at most.
    expect(stdout).toMatch(/^position worth (15(\.\d+)?|14\.999999) USDC$/m)
  })

  it('`npm run demo` (examples/demo.ts) tells the whole story on stdout and exits 0', async () => {
    // npm test builds dist/ before vitest runs; `npm run demo` builds it itself. The demo runs as that
    // command runs it, with the repository's tsconfig (its `x402-vault` is the sources); the other
    // examples' tests import the built package, as a reader's app does.
    const { stdout, stderr } = await run(tsx, [join(root, 'examples/demo.ts')], { cwd: root })
    expect(stderr).toBe('')
    // The agent pays from its vault position: each payment recalls its price first.
    expect(stdout).toMatch(
      /^ {3}payment 1 +2\.5 USDC {3}recalled +2\.\d+ USDC {3}merchant wallet +102\.5 USDC$/m,
    )
    expect(stdout).toMatch(/^ {3}idle 2\.5 USDC < 10 USDC: stays in the wallet$/m)
    // Base Sepolia's USDC is paid through Permit2; the agent never approved it, so its permit rode along.
    expect(stdout).toMatch(
      /^ {3}paid through Permit2 with a sponsored permit \(Base Sepolia's USDC has no EIP-3009\)$/m,
    )
    expect(stdout).toMatch(
      /^ {3}payment 4 +2\.5 USDC {3}recalled +2\.\d+ USDC {3}merchant wallet +110 USDC$/m,
    )
    // However the sweeper's debounce grouped the payments, it left the reserve and deposited the rest.
    const deposited = [...stdout.matchAll(/^ {3}deposited +([\d.]+) USDC$/gm)].map((m) => m[1])
    expect(deposited.reduce((sum, amount) => sum + parseUsdc(amount as string), 0n)).toBe(
      parseUsdc('10'),
    )
    // The money went round: agent vault → agent wallet → merchant wallet → merchant vault. A recall
    // may bring a base unit more than asked (rounding is the buyer's), which the next one counts.
    expect(stdout).toMatch(/^ {3}agent vault → agent wallet +10(\.0+\d)? USDC in 4 recalls$/m)
    expect(stdout).toMatch(/^ {3}agent wallet → merchant +10 USDC in 4 payments$/m)
    expect(stdout).toMatch(/^ {3}merchant → merchant vault +10 USDC in 1 sweep\(s\)$/m)
    expect(stdout).toMatch(/^ {3}agent wallet now +0(\.0+\d)? USDC$/m)
    expect(stdout).toMatch(/^ {3}transaction +0x[0-9a-f]{64}$/m)
    expect(stdout).toMatch(/^ {3}wallet balance now +100 USDC$/m)
    expect(stdout).toMatch(/^ {3}yield earned +0\.0[1-9]\d* USDC$/m)
    // The month of yield moved no clock: a payment after it still works.
    expect(stdout).toMatch(
      /^ {3}a payment now +HTTP 200, recalled +[\d.]+ USDC: payments still work$/m,
    )
    expect(stdout).toMatch(/^ {3}vault_status +deposits open, [\d.]+ USDC under management$/m)
    expect(stdout).toMatch(
      /^ {3}vault_get_position +the merchant's position is worth 10\.\d+ USDC$/m,
    )
    expect(stdout).toMatch(/^ +needsApproval true, needsRegistration true$/m)
    expect(stdout).toMatch(/^Done: /m)
    // No raw log noise: every line is a heading, an indented report line or empty.
    for (const line of stdout.trimEnd().split('\n')) {
      expect(line).toMatch(/^(x402-vault demo: |\d\. | {3}\S|$|Done: )|^ {29}\S/)
    }
  })
})
