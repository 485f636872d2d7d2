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

/** The package Node could not find, from its `ERR_MODULE_NOT_FOUND` message; else `undefined`. */
function missingPackage(error: unknown): string | undefined {
  if ((error as { code?: unknown } | undefined)?.code !== 'ERR_MODULE_NOT_FOUND') return undefined
  return /Cannot find package '([^']+)'/.exec((error as Error).message)?.[1]
}
