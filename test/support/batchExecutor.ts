import { readFileSync } from 'node:fs'
import solc from 'solc'
import { type Address, type Hex, parseAbi } from 'viem'
import { compilerSettings } from '../../src/devnet/compile.js'

/** The ABI of test/support/contracts/BatchExecutor.sol. */
export const batchExecutorAbi = parseAbi([
  'struct Call { address to; uint256 value; bytes data; }',
  'function execute(Call[] calls) payable',
  'error CallFailed(uint256 index, bytes reason)',
  'error NotSelf()',
])

/**
 * Compiles the test-only EIP-7702 batch executor with the npm `solc` and the devnet's settings (a small
 * contract: well under a second), for a test to deploy.
 *
 * @returns Its creation bytecode.
 * @example
 * const hash = await wallet.deployContract({ abi: batchExecutorAbi, bytecode: compileBatchExecutor() })
 */
export function compileBatchExecutor(): Hex {
  const source = readFileSync(new URL('./contracts/BatchExecutor.sol', import.meta.url), 'utf8')
  const input = {
    language: 'Solidity',
    sources: { 'BatchExecutor.sol': { content: source } },
    settings: compilerSettings,
  }
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[]
    contracts: Record<string, Record<string, { evm: { bytecode: { object: string } } }>>
  }
  const errors = (output.errors ?? []).filter((error) => error.severity === 'error')
  if (errors.length) throw new Error(errors.map((error) => error.formattedMessage).join('\n'))
  const contract = output.contracts['BatchExecutor.sol']?.BatchExecutor
  if (!contract) throw new Error('BatchExecutor did not compile')
  return `0x${contract.evm.bytecode.object}`
}

/** A plan's EIP-5792 calls as the executor's `Call[]`. */
export function executorCalls(calls: { to: string; data: string; value: string }[]) {
  return calls.map((call) => ({
    to: call.to as Address,
    value: BigInt(call.value),
    data: call.data as Hex,
  }))
}
