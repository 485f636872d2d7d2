import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { expect, it } from 'vitest'
import { VaultConfigError } from '../../src/index.js'
import {
  createServer,
  guardToolArguments,
  loadMcpConfig,
  type McpLogger,
  registerVaultTools,
  vaultTools,
} from '../../src/mcp/index.js'

const quiet: McpLogger = { debug() {}, info() {}, warn() {}, error() {} }
/** Tests stay offline: nothing listens on port 9, so verification fails at once. */
const offline = { BASE_SEPOLIA_RPC_URL: 'http://127.0.0.1:9' }

it('createServer embeds: any MCP transport, here in memory, lists the six tools', async () => {
  const server = createServer(await loadMcpConfig(offline), { logger: quiet })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  const client = new Client({ name: 'embedder', version: '1.0.0' })
  await client.connect(clientSide)
  try {
    expect((await client.listTools()).tools).toHaveLength(6)
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
  server.registerTool('my_tool', { description: 'Mine.' }, () => ({ content: [] }))
  const tools = registerVaultTools(server, {
    config: await loadMcpConfig(offline),
    logger: quiet,
    tools: vaultTools.slice(0, 2),
  })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  guardToolArguments(serverSide, vaultTools)
  tools.verifyInBackground()
  const client = new Client({ name: 'embedder', version: '1.0.0' })
  await client.connect(clientSide)
  try {
    const names = (await client.listTools()).tools.map((tool) => tool.name)
    expect(names).toEqual(['my_tool', 'vault_status', 'vault_check_yield'])
    const refused = await client.callTool({
      name: 'vault_status',
      arguments: JSON.parse('{"__proto__":null}'),
    })
    expect(refused).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: expect.stringMatching(/^INVALID_ARGUMENT: .*"__proto__"/) }],
    })
  } finally {
    await client.close()
  }
})
