import { VaultConfigError } from './errors/classes.js'
import { installedPeerVersion } from './installedPeerVersion.js'
import { installLine, type PeerFeature, satisfiesRange, supportedPeers } from './supportedPeers.js'

/**
 * Checks that each installed package a feature needs is a version this release supports; a package
 * that is not installed, or whose version cannot be known here (a bundle, an edge runtime), passes.
 * npm no longer checks them at install time (see `supportedPeers`): this is where a wrong version is
 * named, before the feature runs on it.
 *
 * @param peers - The feature's name and the packages it needs.
 * @throws {VaultConfigError} `PEER_DEPENDENCY_MISMATCH` naming each package outside its range, the
 *   range, the installed version and the `npm i` line that installs supported versions; the same in
 *   `details` (`package`, `supported`, `installed`, `mismatches`, `install`).
 * @example
 * checkPeerVersions({ feature: 'x402-vault', packages: ['viem'] })
 */
export function checkPeerVersions(peers: PeerFeature): void {
  const mismatches = peers.packages.flatMap((name) => {
    const peer = installedPeerVersion(name)
    const supported = supportedPeers[name]
    return typeof peer === 'string' || satisfiesRange(peer.version, supported)
      ? []
      : [{ package: name, supported, installed: peer.version }]
  })
  const [first] = mismatches
  if (!first) return
  const install = installLine(
    mismatches.map(({ package: name, installed }) => ({ name, installed })),
  )
  const message =
    mismatches.length === 1
      ? `${peers.feature} needs ${first.package} ${first.supported}, but ${first.installed} is installed. Install a supported version: ${install}`
      : `${peers.feature} needs ${mismatches
          .map(
            ({ package: name, supported, installed }) =>
              `${name} ${supported} (${installed} is installed)`,
          )
          .join(', ')}. Install supported versions: ${install}`
  throw new VaultConfigError(message, {
    code: 'PEER_DEPENDENCY_MISMATCH',
    details: { ...first, feature: peers.feature, mismatches, install },
  })
}
