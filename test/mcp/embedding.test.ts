import { Client, InMemoryTransport } from '@modelcontextprotocol/client'
import { McpServer } from '@modelcontextprotocol/server'
import { expect, it } from 'vitest'
import { mcpToolNames } from '../../harness/mcpToolNames.js'
import { VaultConfigError } from '../../src/index.js'
import {
  createServer,
  loadMcpConfig,
  type McpLogger,
  registerVaultTools,
  vaultTools,
} from '../../src/mcp/index.js'

const quiet: McpLogger = { debug() {}, info() {}, warn() {}, error() {} }
/** Tests stay offline: nothing listens on port 9, so verification fails at once. */
const offline = { BASE_SEPOLIA_RPC_URL: 'http://127.0.0.1:9' }

it('createServer embeds: any MCP transport, here in memory, lists every tool', async () => {
  const server = createServer(await loadMcpConfig(offline), { logger: quiet })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  const client = new Client({ name: 'embedder', version: '1.0.0' })
  await client.connect(clientSide)
  try {
    expect((await client.listTools()).tools).toHaveLength(mcpToolNames.length)
  } finally {
    await client.close()
  }
})

it('createServer refuses a hand-built config whose addresses are not a full, valid set', async () => {
  const config = await loadMcpConfig(offline)
  expect(() =>
    createServer({ ...config, addresses: { router: '0x1234' } as never }, { logger: quiet }),
  ).toThrow(VaultConfigError)
})

it('registerVaultTools puts the tools on your own server, next to your own tools', async () => {
  const server = new McpServer({ name: 'my-server', version: '1.0.0' })
  server.registerTool('my_tool', { description: 'Mine.' }, () => ({
    content: [{ type: 'text', text: 'mine' }],
  }))
  const tools = registerVaultTools(server, {
    config: await loadMcpConfig(offline),
    logger: quiet,
    tools: vaultTools.slice(0, 2),
  })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  tools.verifyInBackground()
  const client = new Client({ name: 'embedder', version: '1.0.0' })
  await client.connect(clientSide)
  try {
    const names = (await client.listTools()).tools.map((tool) => tool.name)
    expect(names).toEqual(['my_tool', 'vault_status', 'vault_check_yield'])
    // Your tools still answer their own calls; the vault's tools refuse bad input in their own words.
    expect(await client.callTool({ name: 'my_tool', arguments: {} })).toMatchObject({
      content: [{ type: 'text', text: 'mine' }],
    })
    const refused = await client.callTool({
      name: 'vault_check_yield',
      arguments: { amount: '5' },
    })
    expect(refused).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: expect.stringMatching(/^INVALID_ARGUMENT: .*"amount"/) }],
    })
  } finally {
    await client.close()
  }
})
