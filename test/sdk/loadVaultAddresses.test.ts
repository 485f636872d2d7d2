import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { tempFolder } from '../../harness/tempFolder.js'
import {
  loadVaultAddresses,
  parseVaultAddresses,
  VaultConfigError,
  vaultChains,
} from '../../src/index.js'
import { vaultAddressKeys } from '../../src/sdk/chains.js'

const sepolia = vaultChains['base-sepolia'].addresses
const lowercase = Object.fromEntries(
  Object.entries(sepolia).map(([key, value]) => [key, value.toLowerCase()]),
)

let dir: string
beforeAll(async () => {
  dir = await tempFolder('x402-vault-addresses-')
})

async function file(name: string, content: string) {
  const path = join(dir, name)
  await writeFile(path, content)
  return path
}

async function failure(promise: Promise<unknown>) {
  const error = await promise.then(
    () => expect.fail('expected loadVaultAddresses to reject'),
    (cause: unknown) => cause,
  )
  expect(error).toBeInstanceOf(VaultConfigError)
  return error as VaultConfigError
}

describe('loadVaultAddresses', () => {
  it('accepts the file `x402-vault devnet` writes ({ chain, chainId, …addresses }) and checksums it', async () => {
    const path = await file(
      'devnet.json',
      JSON.stringify({ chain: 'base-sepolia', chainId: 84532, ...lowercase }),
    )
    expect(await loadVaultAddresses(path, { chain: 'base-sepolia' })).toEqual(sepolia)
  })

  it('accepts a file of addresses only', async () => {
    const path = await file('plain.json', JSON.stringify(sepolia))
    expect(await loadVaultAddresses(path)).toEqual(sepolia)
  })

  it('asks whether the variable is set when the path is undefined or empty (an unset VAULT_ADDRESSES)', async () => {
    for (const [path, what] of [
      [undefined, 'undefined'],
      ['', 'empty'],
    ] as const) {
      const error = await failure(loadVaultAddresses(path))
      expect(error.code).toBe('ADDRESSES_FILE_INVALID')
      expect(error.message).toBe(
        `The addresses file path must be a non-empty string, but it is ${what}: is the variable that should hold it (such as VAULT_ADDRESSES) set?`,
      )
    }
  })

  it('names the file when it is missing or not JSON', async () => {
    const missing = join(dir, 'nope.json')
    const error = await failure(loadVaultAddresses(missing))
    expect(error.code).toBe('ADDRESSES_FILE_INVALID')
    expect(error.message).toContain(missing)
    expect(error.message).toContain('does not exist')

    const broken = await file('broken.json', '{ "router": ')
    const notJson = await failure(loadVaultAddresses(broken))
    expect(notJson.message).toBe(`The addresses file ${broken} is not valid JSON.`)
  })

  it('names the file and the key that is missing, malformed or unknown', async () => {
    for (const key of vaultAddressKeys) {
      const { [key]: _dropped, ...rest } = sepolia
      const path = await file(`missing-${key}.json`, JSON.stringify(rest))
      const error = await failure(loadVaultAddresses(path))
      expect(error.code).toBe('ADDRESSES_FILE_INVALID')
      expect(error.message).toContain(`"${key}"`)
      expect(error.message).toContain(path)
      expect(error.details).toMatchObject({ file: path, key })
    }
    const bad = await file('bad.json', JSON.stringify({ ...sepolia, usdc: '0x1234' }))
    expect((await failure(loadVaultAddresses(bad))).message).toMatch(
      /"usdc" is not a valid address/,
    )

    const typo = await file('typo.json', JSON.stringify({ ...sepolia, routr: sepolia.router }))
    expect((await failure(loadVaultAddresses(typo))).message).toMatch(/Unknown key "routr"/)
  })

  it('refuses a file for another chain, or whose chain and chainId disagree', async () => {
    const base = await file(
      'base.json',
      JSON.stringify({ chain: 'base', chainId: 8453, ...sepolia }),
    )
    const error = await failure(loadVaultAddresses(base, { chain: 'base-sepolia' }))
    expect(error.code).toBe('CHAIN_MISMATCH')
    expect(error.message).toContain('8453')

    const byId = await file('by-id.json', JSON.stringify({ chainId: 8453, ...sepolia }))
    expect((await failure(loadVaultAddresses(byId, { chain: 'base-sepolia' }))).code).toBe(
      'CHAIN_MISMATCH',
    )

    const inconsistent = await file(
      'inconsistent.json',
      JSON.stringify({ chain: 'base-sepolia', chainId: 8453, ...sepolia }),
    )
    expect((await failure(loadVaultAddresses(inconsistent))).message).toMatch(/does not match/)
  })

  it('rejects values that are not an object of addresses', () => {
    for (const value of [null, [], 'text', 42]) {
      expect(() => parseVaultAddresses(value)).toThrow(/Expected a JSON object/)
    }
  })
})
