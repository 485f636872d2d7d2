import { readFileSync } from 'node:fs'
import solc from 'solc'
import { describe, expect, it } from 'vitest'
import { compilerSettings } from '../../src/devnet/compile.js'
import { withdrawProbeCode } from '../../src/sdk/internal/withdrawProbe.js'

describe('the withdrawal probe', () => {
  it('ships the runtime code of a fresh compilation of src/sdk/contracts/WithdrawProbe.sol', () => {
    const source = readFileSync(
      new URL('../../src/sdk/contracts/WithdrawProbe.sol', import.meta.url),
      'utf8',
    )
    const input = {
      language: 'Solidity',
      sources: { 'WithdrawProbe.sol': { content: source } },
      settings: compilerSettings,
    }
    const output = JSON.parse(solc.compile(JSON.stringify(input)))
    const compiled = output.contracts['WithdrawProbe.sol'].WithdrawProbe
    expect(withdrawProbeCode).toBe(`0x${compiled.evm.deployedBytecode.object}`)
  })
})
