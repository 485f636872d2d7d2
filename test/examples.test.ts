import { execFile } from 'node:child_process'
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Devnet, startDevnet } from '../src/devnet/startDevnet.js'

const run = promisify(execFile)
const root = join(import.meta.dirname, '..')
const tsx = join(root, 'node_modules/.bin/tsx')

describe('the README examples run against a devnet', () => {
  let devnet: Devnet
  let addressesPath: string

  beforeAll(async () => {
    devnet = await startDevnet({ chain: 'base-sepolia' })
    addressesPath = join(await mkdtemp(join(tmpdir(), 'x402-vault-example-')), 'addresses.json')
    await writeFile(
      addressesPath,
      JSON.stringify({ chain: devnet.chain, chainId: devnet.chainId, ...devnet.addresses }),
    )
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

  it('`npm run demo` (examples/demo.ts) runs the main job to the end', async () => {
    const { stdout } = await run(tsx, [join(root, 'examples/demo.ts')], { cwd: root })
    expect(stdout).toMatch(
      /The buyer paid 5 × 0\.01 USDC with x402; the merchant holds 1000\.05 USDC/,
    )
    expect(stdout).toMatch(/deposited its idle 900\.05 USDC above a 100 USDC reserve/)
    expect(stdout).toMatch(/USDC of yield/)
    expect(stdout).toMatch(/^Done: /m)
  })
})
