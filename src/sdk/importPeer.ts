import { VaultConfigError } from './errors/classes.js'

/** Who needs the optional peer dependencies, and what to install for them. */
export type PeerFeature = {
  /** The entry point or feature, such as `x402-vault/express`. */
  feature: string
  /** Every package the feature needs, such as `['@x402/core', '@x402/evm', '@x402/express', 'express']`. */
  packages: readonly string[]
}

/**
 * Loads a module that needs optional peer dependencies, at the moment a feature first needs it.
 *
 * The package's dependencies are all optional peers, so that `npx x402-vault` installs nothing but
 * the package. A static import of a peer that is not installed fails while Node links the module,
 * before any of our code runs, with a stack trace; loading it here turns that into an error that names
 * the package and the install line.
 *
 * @param load - Imports the module, such as `() => import('@x402/express')`.
 * @param peers - The feature's name and every package it needs.
 * @returns The module.
 * @throws {VaultConfigError} `PEER_DEPENDENCY_MISSING` when a package cannot be found, naming it in the
 *   message and in `details.package`; any other error as it is.
 * @example
 * const { paymentMiddlewareFromHTTPServer } = await importPeer(() => import('@x402/express'), {
 *   feature: 'x402-vault/express',
 *   packages: ['@x402/core', '@x402/evm', '@x402/express', 'express'],
 * })
 */
export async function importPeer<module>(
  load: () => Promise<module>,
  peers: PeerFeature,
): Promise<module> {
  try {
    return await load()
  } catch (error) {
    const missing = missingPackage(error)
    if (missing === undefined) throw error
    const install = `npm i ${peers.packages.join(' ')}`
    throw new VaultConfigError(
      `${peers.feature} needs the package ${missing}, which is not installed. Install what it needs: ${install}`,
      {
        code: 'PEER_DEPENDENCY_MISSING',
        details: { package: missing, feature: peers.feature, install },
        cause: error,
      },
    )
  }
}

/**
 * The package Node could not find, from its message; else `undefined`. `import()` (the ESM build) fails
 * with `ERR_MODULE_NOT_FOUND`, "Cannot find package 'name'"; `require` (the CommonJS build, or a peer's
 * own CommonJS code) with `MODULE_NOT_FOUND`, "Cannot find module 'name/sub/path'".
 */
function missingPackage(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code
  const message = (error as Error).message
  if (code === 'ERR_MODULE_NOT_FOUND') return /Cannot find package '([^']+)'/.exec(message)?.[1]
  if (code !== 'MODULE_NOT_FOUND') return undefined
  // A bare specifier's package: `@scope/name` or `name`, without a subpath. A relative or absolute
  // path is a broken install, not a missing peer.
  return /^Cannot find module '((?:@[^/'.][^/']*\/)?[^/'.][^/']*)/.exec(message)?.[1]
}
