import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import * as artifacts from '../../src/devnet/artifacts.js'
import { artifactsPath, compileContracts } from '../../src/devnet/compile.js'

describe('compiled contract artifacts', () => {
  it('match a fresh compilation of src/devnet/contracts (run `npm run compile:contracts` if stale)', async () => {
    const [fresh, committed] = await Promise.all([
      compileContracts(),
      readFile(artifactsPath, 'utf8'),
    ])
    // Name the stale contracts first, so a failure does not print a 300 kB diff.
    // A checkout with CRLF line endings holds the same artifacts.
    const committedLines = committed.replace(/\r\n/g, '\n').split('\n')
    const staleContracts = new Set<string>()
    let currentContract = '(header)'
    for (const [index, line] of fresh.split('\n').entries()) {
      currentContract = /^export const (\w+)Artifact/.exec(line)?.[1] ?? currentContract
      if (committedLines[index] !== line) staleContracts.add(currentContract)
    }
    expect([...staleContracts]).toEqual([])
    expect(fresh === committedLines.join('\n')).toBe(true)
  }, 120_000)

  it('export every deployable contract with its ABI and bytecode', () => {
    const names = Object.values(artifacts).map((artifact) => artifact.contractName)
    expect(names).toEqual([
      'FeeCollector',
      'MockAToken',
      'MockAavePool',
      'MockMorphoVault',
      'Multicall3',
      'ShareToken',
      'TestUSDC',
      'VaultOracle',
      'VaultRouter',
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
