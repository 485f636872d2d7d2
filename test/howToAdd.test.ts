/**
 * docs/development.md "How to add…" stays true: a command, an MCP tool, an SDK action or a paywall scheme
 * added in its one place (the command table, the tool registry, an action file, the scheme table) fails
 * here, naming each part it is still missing, until it has them all. Reads files and the registries; no
 * chain, no build.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createPublicClient, http } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { baseSepolia } from 'viem/chains'
import { describe, expect, it } from 'vitest'
import { mcpToolNames } from '../harness/mcpToolNames.js'
import { cliCommands } from '../src/cli/commands.js'
import { createDevnetFacilitator } from '../src/devnet/facilitator.js'
import * as root from '../src/index.js'
import { vaultTools } from '../src/mcp/tools/index.js'
import { paywallSchemes } from '../src/plugins/paywallSchemes.js'

const repo = join(import.meta.dirname, '..')
const read = (file: string) => readFileSync(join(repo, file), 'utf8')

/** The parts `check` finds missing, one line each: the test fails with the whole list. */
function missingParts(
  items: readonly string[],
  check: (item: string) => [part: string, present: boolean][],
): string[] {
  return items.flatMap((item) =>
    check(item)
      .filter(([, present]) => !present)
      .map(([part]) => `${item}: ${part}`),
  )
}

describe('Add a command: every command in src/cli/commands.ts has its parts', () => {
  const names = cliCommands.map((command) => command.name)
  const cliGuide = read('docs/cli.md')
  const sections = [...cliGuide.matchAll(/^## `x402-vault ([a-z-]+)`$/gm)].map(([, name]) => name)

  it('a section in docs/cli.md that links its guide, and a test (test/cli/<name>.*test.ts or test/<name>/)', () => {
    const testFiles = readdirSync(join(repo, 'test/cli'))
    expect(
      missingParts(names, (name) => {
        const section = cliGuide.split(`## \`x402-vault ${name}\`\n`)[1]?.split(/^## /m)[0] ?? ''
        return [
          ['its section in docs/cli.md (## `x402-vault <name>`)', sections.includes(name)],
          ['a link to its guide in that section', /\]\([a-z-]+\.md(#[a-z-]+)?\)/.test(section)],
          [
            'a test: test/cli/<name>.test.ts, test/cli/<name>.devnet.test.ts or test/<name>/',
            testFiles.some((file) => new RegExp(`^${name}\\.(devnet\\.)?test\\.ts$`).test(file)) ||
              existsSync(join(repo, 'test', name)),
          ],
        ]
      }),
    ).toEqual([])
  })

  it('docs/cli.md documents the commands of the table, in its order, and no other', () => {
    expect(sections).toEqual(names)
  })

  // The help: `x402-vault --help` prints its line from the table, and test/cli/help.test.ts runs
  // `x402-vault <name> --help` for every command of the table (it must print `Usage: x402-vault <name>`).
})

describe('Add an MCP tool: every tool in the registry (src/mcp/tools/index.ts) has its parts', () => {
  const names = vaultTools.map((tool) => tool.name)
  const files = {
    mcpGuide: read('docs/mcp.md'),
    performance: read('docs/performance.md'),
    instructions: read('src/mcp/server.ts').split('const instructions = `')[1]?.split('`')[0] ?? '',
    bench: read('bench/roundTrips.ts'),
    manifest: JSON.parse(read('mcpb/manifest.json')) as { tools: { name: string }[] },
    toolsTest: read('test/mcp/tools.devnet.test.ts'),
    fuzzTest: read('test/mcp/fuzz.devnet.test.ts'),
    secrets: read('test/support/secrets.ts'),
  }
  const roundTripRows = files.performance
    .split('\n')
    .filter((line) => line.startsWith('| RPC round trips:'))
    .join('\n')

  it('its docs row, its place in the instructions, its tests, its bench row and its manifest entry', () => {
    expect(
      missingParts(names, (name) => [
        ['its row in the tools table of docs/mcp.md', files.mcpGuide.includes(`| \`${name}\``)],
        [
          'its name in the server instructions (src/mcp/server.ts)',
          files.instructions.includes(name),
        ],
        [
          'its row `RPC round trips:` in docs/performance.md',
          roundTripRows.includes(`\`${name}\``),
        ],
        ['its calls in bench/roundTrips.ts', files.bench.includes(`['${name}', {`)],
        [
          'its input fields in test/mcp/tools.devnet.test.ts',
          files.toolsTest.includes(`${name}: [`),
        ],
        [
          'its argument shapes in test/mcp/fuzz.devnet.test.ts',
          files.fuzzTest.includes(`${name}: [`),
        ],
        [
          'its call in test/support/secrets.ts (mcpToolCalls)',
          files.secrets.includes(`['${name}', {`),
        ],
      ]),
    ).toEqual([])
  })

  it('harness/mcpToolNames.ts (what the tests expect) and the MCP Bundle manifest list the registry, in order', () => {
    expect([...mcpToolNames]).toEqual(names)
    expect(files.manifest.tools.map((tool) => tool.name)).toEqual(names)
  })
})

describe('Add an SDK action: every action is exported by x402-vault and bound on the client', () => {
  // Offline: nothing listens on port 9, and neither call reads the chain.
  const parameters = {
    publicClient: createPublicClient({ chain: baseSepolia, transport: http('http://127.0.0.1:9') }),
    chain: 'base-sepolia',
  } as const
  const context = new Set(Object.keys(root.createVaultContext(parameters)))
  const members = Object.keys(root.createVaultClient(parameters)).filter(
    (key) => !context.has(key) && key !== 'extend',
  )
  const exported = root as Record<string, unknown>

  it('each file of src/sdk/actions/ that exports a function of its own name is on the root and the client', () => {
    const actions = readdirSync(join(repo, 'src/sdk/actions'))
      .map((file) => file.replace(/\.ts$/, ''))
      .filter((name) =>
        new RegExp(`^export (async )?function ${name}\\b`, 'm').test(
          read(`src/sdk/actions/${name}.ts`),
        ),
      )
    expect(actions.length).toBeGreaterThan(20)
    expect(
      missingParts(actions, (name) => [
        ['its export in src/index.ts', typeof exported[name] === 'function'],
        [
          'its member in VaultActions and clientActions (createVaultClient.ts)',
          members.includes(name),
        ],
      ]),
    ).toEqual([])
  })

  it('each member of the client is an action x402-vault exports under the same name', () => {
    expect(members.length).toBeGreaterThan(20)
    expect(
      missingParts(members, (name) => [
        ['its export in src/index.ts', typeof exported[name] === 'function'],
      ]),
    ).toEqual([])
  })
})

describe('Add a scheme: every scheme in the paywall’s table (src/plugins/paywallSchemes.ts) has its parts', () => {
  const files = {
    feed: read('src/sdk/seller/merchantSettlement.ts'),
    record: read('src/sdk/sweep/settlementRecord.ts'),
    facilitatorClient: read('src/plugins/facilitatorClient.ts'),
    sellerGuide: read('docs/seller.md'),
    sellerTests: readdirSync(join(repo, 'test/seller'))
      .filter((file) => file.endsWith('.devnet.test.ts'))
      .map((file) => read(`test/seller/${file}`)),
  }
  // Offline: building the facilitator and listing what it supports reads no chain.
  const supported = (['base', 'base-sepolia'] as const).map((chain) => ({
    chain,
    kinds: createDevnetFacilitator({
      rpcUrl: 'http://127.0.0.1:9',
      chain: root.vaultChains[chain].viemChain,
      account: privateKeyToAccount(generatePrivateKey()),
    }).getSupported().kinds,
  }))

  it('the devnet facilitator settles it on both chains, the sweeper feed and its record name it, the seller guide has its section, and a seller devnet test sells with it', () => {
    expect(
      missingParts(paywallSchemes, (scheme) => [
        ...supported.map(
          ({ chain, kinds }) =>
            [
              `x402's facilitator scheme registered in src/devnet/facilitator.ts (${chain})`,
              kinds.some((kind) => kind.scheme === scheme),
            ] as [string, boolean],
        ),
        [
          'what of it reaches the sweeper, in merchantSettlementOf (src/sdk/seller/merchantSettlement.ts)',
          files.feed.includes(`'${scheme}'`),
        ],
        [
          'its name in SettlementRecord.scheme (src/sdk/sweep/settlementRecord.ts)',
          files.record.includes(`'${scheme}'`),
        ],
        [
          'its answers without a transaction, or none, in src/plugins/facilitatorClient.ts',
          scheme === 'exact' || files.facilitatorClient.includes(`'${scheme}'`),
        ],
        [
          'a section `## … (<scheme>)` in docs/seller.md (exact, the default, is the guide itself)',
          scheme === 'exact' || new RegExp(`^## .*\\(${scheme}\\)$`, 'm').test(files.sellerGuide),
        ],
        [
          `a seller devnet test selling with it (scheme: '${scheme}' in test/seller/*.devnet.test.ts)`,
          files.sellerTests.some((text) => text.includes(`scheme: '${scheme}'`)),
        ],
      ]),
    ).toEqual([])
  })
})
