import { checkPeerVersions } from './checkPeerVersions.js'
import { VaultConfigError } from './errors/classes.js'
import { installedPeerVersion } from './installedPeerVersion.js'
import { installLine, type PeerFeature, type PeerName, supportedPeers } from './supportedPeers.js'

export type { PeerFeature } from './supportedPeers.js'

/**
 * Loads a module that needs optional peer dependencies, at the moment a feature first needs it, once
 * the installed ones are known to be supported versions.
 *
 * The package's dependencies are all optional peers, so that `npx x402-vault` installs nothing but
 * the package. A static import of a peer that is not installed fails while Node links the module,
 * before any of our code runs, with a stack trace; loading it here turns that into an error that names
 * the package and the install line. npm does not check the peers' versions (`package.json` names them
 * in `peerDependenciesMeta` only: see `supportedPeers`), so this does, before loading them.
 *
 * @param load - Imports the module, such as `() => import('@x402/express')`.
 * @param peers - The feature's name and every package it needs.
 * @returns The module.
 * @throws {VaultConfigError} `PEER_DEPENDENCY_MISMATCH` when an installed package is outside the
 *   supported range (see `checkPeerVersions`); `PEER_DEPENDENCY_MISSING` when a package cannot be
 *   found, naming it in the message and in `details.package`, with the `npm i` line for every package
 *   of the feature that is missing; any other error as it is.
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
  checkPeerVersions(peers)
  try {
    return await load()
  } catch (error) {
    const missing = missingPackage(error)
    if (missing === undefined) throw error
    // The one Node named first, then any other of the feature's packages that is not installed either.
    const absent = peers.packages.filter(
      (name) => name !== missing && installedPeerVersion(name) === 'not installed',
    )
    const named = isPeerName(missing) ? [missing, ...absent] : absent
    const install =
      named.length > 0 ? installLine(named.map((name) => ({ name }))) : `npm i ${missing}`
    const names = [missing, ...absent]
    const which =
      names.length === 1
        ? `the package ${missing}, which is`
        : `the packages ${names.slice(0, -1).join(', ')} and ${names.at(-1)}, which are`
    throw new VaultConfigError(
      `${peers.feature} needs ${which} not installed. Install what it needs: ${install}`,
      {
        code: 'PEER_DEPENDENCY_MISSING',
        details: { package: missing, feature: peers.feature, install },
        cause: error,
      },
    )
  }
}

function isPeerName(name: string): name is PeerName {
  return Object.hasOwn(supportedPeers, name)
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
