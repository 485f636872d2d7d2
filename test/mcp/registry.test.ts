/**
 * The MCP registry's listing: server.json validates against the registry's own schema (a pinned copy,
 * named by its version, in test/support/mcp-registry/), and says what package.json and the server say.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Ajv } from 'ajv'
import addFormats from 'ajv-formats'
import { describe, expect, it } from 'vitest'
import { loadMcpConfig } from '../../src/mcp/index.js'

const root = join(import.meta.dirname, '../..')
const readJson = async (path: string) => JSON.parse(await readFile(join(root, path), 'utf8'))

const schema = await readJson('test/support/mcp-registry/server.schema.2025-12-11.json')
const server = await readJson('server.json')
const pkg = await readJson('package.json')

type EnvironmentVariable = { name: string; default?: string; choices?: string[] }

// The schema is generated from the registry's OpenAPI file and keeps OpenAPI words (`example`,
// `discriminator`) that JSON Schema does not define: not strict, but every format checked.
const ajv = new Ajv({ strict: false, allErrors: true })
addFormats.default(ajv)
const validate = ajv.compile(schema)

describe('server.json', () => {
  it('validates against the pinned registry schema it names', () => {
    expect(server.$schema).toBe(schema.$id)
    const valid = validate(server)
    expect(validate.errors ?? []).toEqual([])
    expect(valid).toBe(true)
  })

  it('would notice: a name without a namespace and a description over 100 characters', () => {
    expect(validate({ ...server, name: 'x402-vault', description: 'x'.repeat(101) })).toBe(false)
    expect(validate.errors?.map((error) => error.instancePath).sort()).toEqual([
      '/description',
      '/name',
    ])
  })

  it('is the package: mcpName, name and version match package.json, over stdio through npx', () => {
    expect(server.name).toBe(pkg.mcpName)
    expect(server.version).toBe(pkg.version)
    expect(server.packages).toEqual([
      expect.objectContaining({
        registryType: 'npm',
        identifier: pkg.name,
        version: pkg.version,
        runtimeHint: 'npx',
        transport: { type: 'stdio' },
      }),
    ])
  })

  it("lists the server's variables with its own defaults and choices", async () => {
    const variables: EnvironmentVariable[] = server.packages[0].environmentVariables
    const defaults = await loadMcpConfig({})
    for (const { name, default: value, choices = [] } of variables) {
      // A default the server does not have would change what the user gets: each must be a no-op.
      if (value !== undefined) {
        expect(await loadMcpConfig({ [name]: value }), name).toEqual(defaults)
      }
      for (const choice of choices)
        await expect(loadMcpConfig({ [name]: choice })).resolves.toBeTruthy()
    }
    expect(variables.map(({ name }) => name).sort()).toEqual([
      'BASE_SEPOLIA_RPC_URL',
      'MCP_LOG_LEVEL',
      'VAULT_ADDRESSES',
      'VAULT_CHAIN',
      'VAULT_MCP_MAX_PLAN_USDC',
    ])
  })
})
