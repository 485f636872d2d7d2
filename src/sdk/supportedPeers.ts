/**
 * The optional peer dependencies and the versions this release supports.
 *
 * `package.json` names them in `peerDependenciesMeta` only, without `peerDependencies`: npm then neither
 * installs them nor looks them up, so that `npx -y x402-vault@beta` fetches the metadata of this
 * package alone (a declared peer, even an optional one, made every first `npx` fetch the full metadata
 * of each, and of their own peers: 17 documents, 23 MB). Yarn (2 and later) and pnpm read a name in
 * `peerDependenciesMeta` as an optional peer of any version, so their strict layouts still let the
 * package load the app's copy. The versions are checked here, at run time, where the package loads
 * them: `PEER_DEPENDENCY_MISMATCH` names the package, the range, the installed version and the install
 * line.
 */
export const supportedPeers = {
  '@modelcontextprotocol/server': '^2.4.0',
  '@x402/core': '~2.27.0',
  '@x402/evm': '~2.27.0',
  '@x402/express': '~2.27.0',
  '@x402/extensions': '~2.27.0',
  '@x402/hono': '~2.27.0',
  express: '^4.21.0 || ^5.0.0',
  hono: '^4.0.0',
  pg: '^8.11.0',
  viem: '^2.48.0',
  zod: '^4.2.0',
} as const satisfies Record<string, string>

/** An optional peer dependency, such as `viem` or `@x402/express`. */
export type PeerName = keyof typeof supportedPeers

/** Who needs some optional peer dependencies, and which. */
export type PeerFeature = {
  /** The entry point or feature, such as `x402-vault/express`. */
  feature: string
  /** Every package the feature needs, such as `['@x402/core', '@x402/evm', '@x402/express', 'express']`. */
  packages: readonly PeerName[]
}

/** major, minor, patch, and whether it is a release (a prerelease sorts before its release). */
type Version = readonly [number, number, number, number]

/** One alternative of a range: `^a.b.c` or `~a.b.c`, as the bounds it allows. */
type Alternative = { operator: '^' | '~'; floor: Version; below: Version }

/**
 * Whether `version` is within `range`, a range of the forms `supportedPeers` uses (`^a.b.c`, `~a.b.c`,
 * alternatives joined by `||`). A prerelease counts by its place in the order of versions: `2.60.0-rc.1`
 * is within `^2.48.0`, `2.48.0-rc.1` (before 2.48.0) and `3.0.0-rc.1` are not.
 *
 * @param version - An installed version, such as `2.57.20`.
 * @param range - Such as `^4.21.0 || ^5.0.0`.
 * @returns `false` also for a version that is not semver.
 * @example
 * satisfiesRange('4.17.3', '^4.21.0 || ^5.0.0') // false
 */
export function satisfiesRange(version: string, range: string): boolean {
  const parsed = parseVersion(version)
  if (!parsed) return false
  return parseRange(range).some(
    ({ floor, below }) => compare(parsed, floor) >= 0 && compare(parsed, below) < 0,
  )
}

/**
 * What to give `npm i` for a peer so that it installs a supported version: `viem@2`, `@x402/core@2.27`,
 * `express@4` for an app on Express 4 (the alternative of the range on the installed major), else the
 * newest alternative (`express@5`). npm installs the newest version within it, which is within the range.
 *
 * @param name - The peer.
 * @param installed - The version installed now, if any.
 * @returns Such as `@x402/core@2.27`.
 * @example
 * installSpec('express', '4.17.3') // 'express@4'
 */
export function installSpec(name: PeerName, installed?: string): string {
  const alternatives = parseRange(supportedPeers[name])
  const major = installed === undefined ? undefined : parseVersion(installed)?.[0]
  const chosen =
    alternatives.find((alternative) => alternative.floor[0] === major) ?? alternatives.at(-1)
  if (!chosen) throw new Error(`No range for ${name}`)
  const [a, b, c] = chosen.floor
  // `npm i x@2.27` installs the newest 2.27.x, `x@2` the newest 2.x: at or above the floor.
  const version =
    chosen.operator === '~' ? `${a}.${b}` : a > 0 ? `${a}` : b > 0 ? `0.${b}` : `0.0.${c}`
  return `${name}@${version}`
}

/**
 * The `npm i` line for some peers, each at a supported version.
 *
 * @param packages - The peers, with the version installed now where there is one.
 * @returns Such as `npm i @x402/core@2.27 @x402/evm@2.27`.
 * @example
 * installLine([{ name: 'viem', installed: '2.47.6' }]) // 'npm i viem@2'
 */
export function installLine(packages: readonly { name: PeerName; installed?: string }[]): string {
  return `npm i ${packages.map(({ name, installed }) => installSpec(name, installed)).join(' ')}`
}

function parseVersion(text: string): Version | undefined {
  const match = /^v?(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/.exec(text.trim())
  if (!match) return undefined
  return [Number(match[1]), Number(match[2]), Number(match[3]), match[4] === undefined ? 1 : 0]
}

function parseRange(range: string): Alternative[] {
  return range.split('||').map((text) => {
    const match = /^([~^])(\d+)\.(\d+)\.(\d+)$/.exec(text.trim())
    if (!match) throw new Error(`Unsupported range ${range}`)
    const operator = match[1] as '^' | '~'
    const [a, b, c] = [Number(match[2]), Number(match[3]), Number(match[4])]
    // Every version of the bound's core is excluded, its prereleases (flag 0) included.
    const below: Version =
      operator === '~' || (a === 0 && b > 0)
        ? [a, b + 1, 0, 0]
        : a === 0
          ? [0, 0, c + 1, 0]
          : [a + 1, 0, 0, 0]
    return { operator, floor: [a, b, c, 1], below }
  })
}

function compare(left: Version, right: Version): number {
  for (let index = 0; index < 4; index++) {
    const difference = (left[index] ?? 0) - (right[index] ?? 0)
    if (difference !== 0) return difference
  }
  return 0
}
