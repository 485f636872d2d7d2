import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import * as artifacts from '../../src/devnet/artifacts/index.js'
import { artifactsDirectory, compileContracts } from '../../src/devnet/compile.js'

describe('compiled contract artifacts', () => {
  it('match a fresh compilation of src/devnet/contracts (run `npm run compile:contracts` if stale)', async () => {
    const fresh = await compileContracts()
    const committed = new Map<string, string>()
    for (const name of await readdir(artifactsDirectory)) {
      // A checkout with CRLF line endings holds the same artifacts.
      const text = await readFile(join(artifactsDirectory, name), 'utf8')
      committed.set(name, text.replace(/\r\n/g, '\n'))
    }
    // Name the stale files, so a failure does not print a 100 kB diff.
    const stale = [...new Set([...fresh.keys(), ...committed.keys()])].filter(
      (name) => fresh.get(name) !== committed.get(name),
    )
    expect(stale).toEqual([])
  }, 120_000)

  it('export every deployable contract with its ABI and bytecode', () => {
    const names = Object.values(artifacts).map((artifact) => artifact.contractName)
    expect(names).toEqual([
      'AaveTestUSDC',
      'ERC3009DepositCollector',
      'FeeCollector',
      'MockAToken',
      'MockAavePool',
      'MockMorphoVault',
      'Multicall3',
      'Permit2',
      'Permit2DepositCollector',
      'ShareToken',
      'TestUSDC',
      'VaultOracle',
      'VaultRouter',
      'X402BatchSettlement',
      'X402ExactPermit2Proxy',
      'X402UptoPermit2Proxy',
    ])
    for (const artifact of Object.values(artifacts)) {
      expect(artifact.bytecode, artifact.contractName).toMatch(/^0x[0-9a-f]+$/)
      // EIP-170: deployable without anvil's --disable-code-size-limit.
      expect((artifact.deployedBytecode.length - 2) / 2, artifact.contractName).toBeLessThanOrEqual(
        24_576,
      )
      expect(artifact.abi.length).toBeGreaterThan(0)
    }
  })
})
