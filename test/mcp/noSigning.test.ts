import { readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { codeTokens, importGraph, type RuntimeReach } from '../support/importGraph.js'

const root = join(import.meta.dirname, '../..')
const mcpDir = join(root, 'src/mcp')

/** viem's (and the SDK's helpers') ways to sign or send. */
const signingNames = [
  'writeContract',
  'sendTransaction',
  'sendRawTransaction',
  'sendCalls',
  'deployContract',
  'signTypedData',
  'signMessage',
  'signTransaction',
  'signAuthorization',
  'privateKeyToAccount',
  'mnemonicToAccount',
  'hdKeyToAccount',
  'createWalletClient',
  'walletActions',
]
/** The SDK's write actions: each signs or sends. */
const sdkWriteActions = [
  'initialize',
  'initializeAndWait',
  'approveUsdc',
  'approveUsdcAndWait',
  'deposit',
  'depositAndWait',
  'withdraw',
  'withdrawAndWait',
  'ensureInitializedAndWait',
]
const keyLike = /private_?key|mnemonic|seed_?phrase/i

const sdkIndex = join(root, 'src/index.ts')
const depositAction = join(root, 'src/sdk/actions/deposit.ts')
const devnetCli = join(root, 'src/cli/devnet.ts')
const mcpFiles = tsFiles(mcpDir)
const graph = importGraph([...mcpFiles, sdkIndex, depositAction, devnetCli])

/** Everything in `reach` that could sign, send, or read a key. */
function violations(reach: RuntimeReach): string[] {
  const found: string[] = []
  const writeFiles = graph.declaringFiles(sdkIndex, sdkWriteActions)
  expect([...writeFiles.keys()].sort()).toEqual([...sdkWriteActions].sort())
  for (const [name, file] of writeFiles) {
    if (reach.files.has(file))
      found.push(`reaches the SDK write action ${name} (${relative(root, file)})`)
  }
  for (const file of reach.files) {
    if (!/\.ts$/.test(file)) continue
    for (const [token, line] of codeTokens(file)) {
      const where = `${relative(root, file)}:${line}`
      if (signingNames.includes(token)) found.push(`${where} uses ${token}`)
      if (keyLike.test(token)) found.push(`${where} names a private key (${token})`)
    }
  }
  for (const [module, names] of reach.packages) {
    if (module === 'viem/accounts') found.push('imports viem/accounts')
    for (const name of names) {
      if (signingNames.includes(name)) found.push(`imports ${name} from ${module}`)
    }
  }
  return found
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(dir, file))
}

describe('the MCP layer cannot sign, send or read a key', () => {
  const reach = graph.runtimeReach(mcpFiles)

  it('follows the MCP layer into the SDK', () => {
    const reached = [...reach.files].map((file) => relative(root, file))
    expect(reached).toEqual(
      expect.arrayContaining([
        'src/mcp/server.ts',
        'src/sdk/actions/planDeposit.ts',
        'src/sdk/actions/verifyAddresses.ts',
        'src/sdk/internal/depositPreflight.ts',
      ]),
    )
    expect(reach.packages.get('viem')?.has('createPublicClient')).toBe(true)
  })

  it('reaches no signing or sending function, no SDK write action and no private key', () => {
    expect(violations(reach)).toEqual([])
  })

  it('would notice: the SDK’s deposit signs and sends; the devnet CLI prints keys', () => {
    const deposit = violations(graph.runtimeReach([depositAction]))
    expect(deposit).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/uses writeContract|uses signTypedData/),
        expect.stringContaining('reaches the SDK write action deposit'),
      ]),
    )
    const cli = violations(graph.runtimeReach([devnetCli]))
    expect(cli).toEqual(expect.arrayContaining([expect.stringContaining('names a private key')]))
  })
})
