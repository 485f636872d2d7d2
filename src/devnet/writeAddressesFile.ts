import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import type { Devnet } from './startDevnet.js'

/**
 * Writes a devnet's addresses JSON, the file `VAULT_ADDRESSES`, `--addresses` and
 * `loadVaultAddresses` read. The file names its chain; `x402-vault devnet` writes one per chain
 * (`.devnet/<chain>.addresses.json`), so devnets of both chains can run from one folder.
 *
 * @param devnet - The running devnet whose deployment it describes.
 * @param path - Where to write it; missing folders are created.
 * @returns The file's absolute path.
 * @example
 * const path = await writeAddressesFile(devnet, `.devnet/${devnet.chain}.addresses.json`)
 * const addresses = await loadVaultAddresses(path, { chain: 'base-sepolia' })
 */
export async function writeAddressesFile(
  devnet: Pick<Devnet, 'chain' | 'chainId' | 'addresses'>,
  path: string,
): Promise<string> {
  const absolute = resolve(path)
  await mkdir(dirname(absolute), { recursive: true })
  const content = { chain: devnet.chain, chainId: devnet.chainId, ...devnet.addresses }
  await writeFile(absolute, `${JSON.stringify(content, null, 2)}\n`)
  return absolute
}
