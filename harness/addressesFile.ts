import { join } from 'node:path'
import type { Devnet } from '../src/devnet/startDevnet.js'
import { writeAddressesFile as writeDevnetAddresses } from '../src/devnet/writeAddressesFile.js'
import type { VaultAddresses } from '../src/sdk/chains.js'
import { tempFolder } from './tempFolder.js'

/**
 * Writes the devnet's addresses file (as `x402-vault devnet` does) into a new temporary directory, for
 * `VAULT_ADDRESSES`.
 *
 * @param devnet - The devnet whose deployment it describes.
 * @param overrides - Addresses to replace, such as a wrong oracle.
 * @returns The file's path.
 * @example
 * const env = { VAULT_ADDRESSES: await writeAddressesFile(devnet) }
 */
export async function writeAddressesFile(
  devnet: Devnet,
  overrides: Record<string, string> = {},
): Promise<string> {
  const dir = await tempFolder('x402-vault-addresses-')
  const addresses = { ...devnet.addresses, ...overrides } as VaultAddresses
  return writeDevnetAddresses({ ...devnet, addresses }, join(dir, 'addresses.json'))
}
