import type { PeerName } from './supportedPeers.js'

// Set to `true` by the bins' build (tsup `define`): the bins bundle their peers, so a copy found in a
// `node_modules` above them (a project's, or one in the home folder) is not what they run.
declare const X402_VAULT_BUNDLES_PEERS: boolean | undefined

/**
 * What this package finds of a peer: its version, `'not installed'`, or `'unknown'` where that cannot
 * be known (bundled code: the bins, an app's bundle, an edge runtime; a Node before 20.16).
 */
export type InstalledPeer = { version: string } | 'not installed' | 'unknown'

type BuiltinModules = { getBuiltinModule?: (id: string) => unknown }

const found = new Map<PeerName, InstalledPeer>()

/**
 * The version of a peer that this package loads, read from that package's `package.json`: the first
 * `node_modules/<name>` on Node's lookup path from this file, as `import()` and `require` find it.
 * Looked up once per process.
 *
 * @param name - The peer, such as `viem`.
 * @returns Such as `{ version: '2.57.20' }`, `'not installed'` or `'unknown'`.
 * @example
 * installedPeerVersion('viem') // { version: '2.57.20' }
 */
export function installedPeerVersion(name: PeerName): InstalledPeer {
  let peer = found.get(name)
  if (peer === undefined) {
    peer = lookUp(name)
    found.set(name, peer)
  }
  return peer
}

function lookUp(name: PeerName): InstalledPeer {
  if (typeof X402_VAULT_BUNDLES_PEERS !== 'undefined' && X402_VAULT_BUNDLES_PEERS) return 'unknown'
  // Synchronous and without a static import of a Node module, so that the SDK stays importable (and
  // `createVaultClient` synchronous) where Node's modules do not exist.
  const builtins = (globalThis as { process?: BuiltinModules }).process
  if (typeof builtins?.getBuiltinModule !== 'function') return 'unknown'
  try {
    const { createRequire } = builtins.getBuiltinModule(
      'node:module',
    ) as typeof import('node:module')
    const { readFileSync } = builtins.getBuiltinModule('node:fs') as typeof import('node:fs')
    // The `node_modules` folders from here up (not Node's global folders, which `import()` ignores),
    // and in each the package's own folder: its `exports` may hide `package.json` from `resolve`.
    const folders = createRequire(import.meta.url).resolve.paths(name) ?? []
    for (const folder of folders.filter((path) => /(^|[\\/])node_modules$/.test(path))) {
      let text: string
      try {
        text = readFileSync(`${folder}/${name}/package.json`, 'utf8')
      } catch {
        continue
      }
      const manifest = JSON.parse(text) as { name?: unknown; version?: unknown }
      return manifest.name === name && typeof manifest.version === 'string'
        ? { version: manifest.version }
        : 'unknown'
    }
    return folders.length > 0 ? 'not installed' : 'unknown'
  } catch {
    // No module resolution from a file here (a bundle, an edge runtime): nothing to check.
    return 'unknown'
  }
}
