/**
 * The optional peers' supported versions, which the package checks at run time now that npm does not
 * (package.json names them in `peerDependenciesMeta` only): the range arithmetic, the install lines,
 * and that the manifest, the README and the guides agree with the table. The installs themselves (a
 * missing and a mismatched peer, for each kind of user) are in test/package/pack.test.ts.
 */
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { VaultConfigError } from '../../src/index.js'
import { checkPeerVersions } from '../../src/sdk/checkPeerVersions.js'
import { importPeer } from '../../src/sdk/importPeer.js'
import { installedPeerVersion } from '../../src/sdk/installedPeerVersion.js'
import {
  installLine,
  installSpec,
  type PeerName,
  satisfiesRange,
  supportedPeers,
} from '../../src/sdk/supportedPeers.js'

const root = join(import.meta.dirname, '../..')
const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
  peerDependencies?: unknown
  peerDependenciesMeta: Record<string, { optional?: boolean }>
  devDependencies: Record<string, string>
}
const peerNames = Object.keys(supportedPeers) as PeerName[]

describe('satisfiesRange', () => {
  it.each([
    ['2.48.0', '^2.48.0', true],
    ['2.57.20', '^2.48.0', true],
    ['2.47.6', '^2.48.0', false],
    ['3.0.0', '^2.48.0', false],
    // A prerelease counts by its place in the order: before its release, after the one before.
    ['2.48.0-rc.1', '^2.48.0', false],
    ['2.60.0-canary.3', '^2.48.0', true],
    ['3.0.0-beta.0', '^2.48.0', false],
    ['2.27.0', '~2.27.0', true],
    ['2.27.9', '~2.27.0', true],
    ['2.26.0', '~2.27.0', false],
    ['2.28.0', '~2.27.0', false],
    ['4.21.2', '^4.21.0 || ^5.0.0', true],
    ['4.17.3', '^4.21.0 || ^5.0.0', false],
    ['5.3.0', '^4.21.0 || ^5.0.0', true],
    ['6.0.0', '^4.21.0 || ^5.0.0', false],
    ['0.4.9', '^0.4.2', true],
    ['0.5.0', '^0.4.2', false],
    ['0.0.3', '^0.0.3', true],
    ['0.0.4', '^0.0.3', false],
    ['v2.50.1', '^2.48.0', true],
    ['not a version', '^2.48.0', false],
  ])('%s within %s: %s', (version, range, within) => {
    expect(satisfiesRange(version, range)).toBe(within)
  })
})

describe('install lines', () => {
  it('name a version npm resolves within the range: the major, or the minor of a ~ range', () => {
    expect(installSpec('viem')).toBe('viem@2')
    expect(installSpec('@x402/core')).toBe('@x402/core@2.27')
    expect(installSpec('zod')).toBe('zod@4')
    // The alternative on the installed major, else the newest.
    expect(installSpec('express', '4.17.3')).toBe('express@4')
    expect(installSpec('express', '3.21.2')).toBe('express@5')
    expect(installSpec('express')).toBe('express@5')
    expect(installLine([{ name: '@x402/core' }, { name: 'express', installed: '4.0.0' }])).toBe(
      'npm i @x402/core@2.27 express@4',
    )
  })

  it("install the versions this repository develops against: each dev dependency is within its peer's range", () => {
    for (const name of peerNames) {
      expect(satisfiesRange(manifest.devDependencies[name] ?? '', supportedPeers[name]), name).toBe(
        true,
      )
    }
  })
})

describe('package.json', () => {
  it('declares no peerDependencies: npm fetches the full metadata of each on every first npx', () => {
    expect(manifest.peerDependencies).toBeUndefined()
  })

  it('names every peer in peerDependenciesMeta, optional, so that Yarn and pnpm let the package load it', () => {
    expect(Object.keys(manifest.peerDependenciesMeta).sort()).toEqual([...peerNames].sort())
    for (const meta of Object.values(manifest.peerDependenciesMeta))
      expect(meta).toEqual({ optional: true })
  })
})

describe('the README and the guides', () => {
  it('install each peer at the version the run-time check asks for, and list every supported range', async () => {
    const docs = join(root, 'docs')
    const files = [
      join(root, 'README.md'),
      ...(await readdir(docs))
        .filter((name) => name.endsWith('.md'))
        .map((name) => join(docs, name)),
    ]
    const commands: string[] = []
    for (const file of files) {
      const text = await readFile(file, 'utf8')
      // An `npm i` command, up to the end of its code span or a comment.
      commands.push(
        ...[...text.matchAll(/\bnpm (?:i|install) [^`#\n]*/g)].map(([command]) => command),
      )
    }
    const specs = commands.flatMap((command) =>
      command.split(/\s+/).flatMap((word) => {
        const name = /^(@[^/@]+\/)?[^/@]+/.exec(word)?.[0] ?? ''
        return Object.hasOwn(supportedPeers, name)
          ? [{ command, name: name as PeerName, spec: word }]
          : []
      }),
    )
    expect(specs.length).toBeGreaterThan(10)
    for (const { command, name, spec } of specs) {
      // A seller on Express 4 keeps Express 4.
      const allowed = name === 'express' ? ['express@4', 'express@5'] : [installSpec(name)]
      expect(allowed, command).toContain(spec)
    }
    const readme = (await readFile(join(root, 'README.md'), 'utf8')).replace(/\s+/g, ' ')
    for (const name of peerNames) expect(readme).toContain(`\`${name}\` ${supportedPeers[name]}`)
  })
})

describe('at run time', () => {
  it("reads the installed version from the package's own manifest, once", () => {
    expect(installedPeerVersion('viem')).toEqual({ version: manifest.devDependencies.viem })
    expect(installedPeerVersion('viem')).toBe(installedPeerVersion('viem'))
  })

  it('passes the versions this repository installs, and importPeer then loads the module', async () => {
    expect(() => checkPeerVersions({ feature: 'test', packages: peerNames })).not.toThrow()
    const module = await importPeer(() => import('@x402/core/server'), {
      feature: 'test',
      packages: ['@x402/core'],
    })
    expect(typeof module.x402ResourceServer).toBe('function')
  })

  it('names a package the load cannot find, with the line to install it', async () => {
    const error = await importPeer(() => import('@x402/not-a-package' as string), {
      feature: 'test',
      packages: ['@x402/core'],
    }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(VaultConfigError)
    expect((error as VaultConfigError).code).toBe('PEER_DEPENDENCY_MISSING')
    expect((error as VaultConfigError).message).toBe(
      'test needs the package @x402/not-a-package, which is not installed. Install what it needs: npm i @x402/not-a-package',
    )
  })
})
