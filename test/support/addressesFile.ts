import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Devnet } from '../../src/devnet/startDevnet.js'

/**
 * Writes the devnet's addresses file (as `x402-vault devnet` does), for `VAULT_ADDRESSES`.
 *
 * @param devnet - The devnet whose deployment it describes.
 * @param overrides - Addresses to replace, such as a wrong oracle.
 * @returns The file's path, in a new temporary directory.
 * @example
 * const env = { VAULT_ADDRESSES: await writeAddressesFile(devnet) }
 */
export async function writeAddressesFile(
  devnet: Devnet,
  overrides: Record<string, string> = {},
): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'x402-vault-mcp-'))
  const path = join(dir, 'addresses.json')
  const content = {
    chain: devnet.chain,
    chainId: devnet.chainId,
    ...devnet.addresses,
    ...overrides,
  }
  await writeFile(path, `${JSON.stringify(content, null, 2)}\n`)
  return path
}
