import {
  chainChoices,
  isVaultChainName,
  type VaultAddresses,
  type VaultChainName,
  vaultAddressKeys,
  vaultChains,
} from './chains.js'
import { VaultConfigError } from './errors/classes.js'
import { evmAddress } from './money.js'

export type LoadVaultAddressesOptions = {
  /** The chain the client is for. When the file names a chain (or chain id), it must be this one. */
  chain?: VaultChainName | undefined
}

/** Keys an addresses file may hold besides the eight addresses. */
const metadataKeys = ['chain', 'chainId'] as const

/**
 * Reads a deployment's addresses from a JSON file, such as the one `x402-vault devnet` writes
 * (`{ chain, chainId, router, oracle, … }`), and checks it.
 *
 * Every one of the eight address keys is required and checksummed; `chain` and `chainId` are optional
 * and, when present, must agree with each other and with `options.chain`. Any other key is refused, so
 * a typo cannot silently fall back to a built-in address. The result can be passed straight to
 * `createVaultClient({ addresses })`.
 *
 * @param path - The file's path, such as `process.env.VAULT_ADDRESSES`; `undefined` or `''` is refused
 *   with a clear error.
 * @param options - `chain`: the chain the file must be for.
 * @returns The eight addresses, checksummed.
 * @throws {VaultConfigError} `ADDRESSES_FILE_INVALID`, naming the file and the key that is missing or
 *   malformed (or `CHAIN_MISMATCH` when the file is for another chain).
 * @example
 * const addresses = await loadVaultAddresses(process.env.VAULT_ADDRESSES, { chain: 'base-sepolia' })
 * const vault = createVaultClient({ publicClient, chain: 'base-sepolia', addresses })
 */
export async function loadVaultAddresses(
  path: string | undefined,
  options: LoadVaultAddressesOptions = {},
): Promise<VaultAddresses> {
  if (typeof path !== 'string' || path === '') {
    // The path usually comes from an environment variable (VAULT_ADDRESSES) that is not set.
    throw new VaultConfigError(
      `The addresses file path must be a non-empty string, but it is ${path === '' ? 'empty' : typeof path}: is the variable that should hold it (such as VAULT_ADDRESSES) set?`,
      { code: 'ADDRESSES_FILE_INVALID' },
    )
  }
  // Loaded here, not at the top: the SDK root must stay importable where `node:fs` does not exist.
  const { readFile } = await import('node:fs/promises')
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    const code = (error as { code?: unknown }).code
    const why =
      code === 'ENOENT'
        ? 'the file does not exist'
        : code === 'EACCES'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'it is a directory'
            : 'it could not be read'
    throw new VaultConfigError(`Cannot read the addresses file ${path}: ${why}.`, {
      code: 'ADDRESSES_FILE_INVALID',
      details: { file: path },
    })
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw new VaultConfigError(`The addresses file ${path} is not valid JSON.`, {
      code: 'ADDRESSES_FILE_INVALID',
      details: { file: path },
    })
  }
  return parseVaultAddresses(json, { ...options, source: path })
}

/**
 * Checks an already parsed addresses object (the content of an addresses file).
 *
 * @param value - The parsed JSON.
 * @param options - `chain` it must be for, and `source` (how to name it in messages).
 * @returns The eight addresses, checksummed.
 * @throws {VaultConfigError} As {@link loadVaultAddresses}.
 * @example
 * parseVaultAddresses(JSON.parse(text), { chain: 'base-sepolia', source: 'addresses.json' })
 */
export function parseVaultAddresses(
  value: unknown,
  options: LoadVaultAddressesOptions & { source?: string | undefined } = {},
): VaultAddresses {
  const source = options.source ?? 'the addresses object'
  const fail = (message: string, key?: string) =>
    new VaultConfigError(`${message} (in ${source})`, {
      code: 'ADDRESSES_FILE_INVALID',
      details: {
        file: source,
        ...(key === undefined ? {} : { key }),
      },
    })
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw fail('Expected a JSON object of contract addresses')
  }
  const record = value as Record<string, unknown>
  const allowed: readonly string[] = [...vaultAddressKeys, ...metadataKeys]
  for (const key of Object.keys(record)) {
    if (!allowed.includes(key)) {
      throw fail(`Unknown key ${JSON.stringify(key)}; expected ${allowed.join(', ')}`, key)
    }
  }

  const fileChain = record.chain
  if (fileChain !== undefined && !isVaultChainName(fileChain)) {
    throw fail(`"chain" must be ${chainChoices((chain) => `"${chain.name}"`)}`, 'chain')
  }
  const fileChainId = record.chainId
  if (fileChainId !== undefined && typeof fileChainId !== 'number') {
    throw fail('"chainId" must be a number', 'chainId')
  }
  if (fileChain !== undefined && fileChainId !== undefined) {
    const expectedId = vaultChains[fileChain].chainId
    if (fileChainId !== expectedId) {
      throw fail(`"chainId" ${fileChainId} does not match "chain" ${fileChain} (${expectedId})`)
    }
  }
  if (options.chain !== undefined) {
    const wanted = vaultChains[options.chain].chainId
    const actual = fileChain !== undefined ? vaultChains[fileChain].chainId : fileChainId
    if (actual !== undefined && actual !== wanted) {
      throw new VaultConfigError(
        `The addresses in ${source} are for chain ${actual}, but the client is for ${options.chain} (${wanted}).`,
        { code: 'CHAIN_MISMATCH', details: { file: source, expected: wanted, actual } },
      )
    }
  }

  const addresses = {} as VaultAddresses
  for (const key of vaultAddressKeys) {
    const entry = record[key]
    if (entry === undefined) throw fail(`Missing the address "${key}"`, key)
    try {
      addresses[key] = evmAddress(entry as string)
    } catch (error) {
      throw fail(`"${key}" is not a valid address: ${(error as Error).message}`, key)
    }
  }
  return addresses
}
