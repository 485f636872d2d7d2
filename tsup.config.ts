import { rmSync } from 'node:fs'
import type { Plugin } from 'esbuild'
import { defineConfig, type Options } from 'tsup'
import { uPlotSources } from './src/cli/uPlotSources.js'
import { recordHandshake, serializeHandshake } from './src/mcp/recordHandshake.js'
import { supportedPeers } from './src/sdk/supportedPeers.js'

const shared: Options = {
  format: ['esm'],
  target: 'node20',
  // None: the tarball left them out (they tripled it: 3.6 MB against 1.1 MB), and a built
  // file that names a map the tarball lacks sends debuggers and `--enable-source-maps` looking for
  // it. Without them the build also takes about 1.5 s less (8.4 s against 9.8 to 10.2 s).
  sourcemap: false,
  shims: false,
}

/**
 * The bins bundle their peers: the SDK's check of the installed peers' versions (which reads them from
 * `node_modules`, src/sdk/installedPeerVersion.ts) would read some other copy, not what they run.
 */
const bundlesPeers = { X402_VAULT_BUNDLES_PEERS: 'true' }

/**
 * The bins are executables, never imported: their code is shipped without whitespace and with
 * shorter syntax, names kept (a stack trace still names its functions). A third smaller to install
 * and to parse, where `npx x402-vault@beta` fetches, unpacks and loads them on a first start.
 */
const binMinify: Options = { minifyWhitespace: true, minifySyntax: true }

/** The bins' chunks, in a folder of their own (under `dist`) that only the bins' build writes. */
const binChunks = 'bin-chunks'
/** What the bins' builds below write into `dist`: the library's clean must keep it. */
const binOutputs = [
  'cli/index.js',
  'mcp/bin.js',
  'mcp/stdio.js',
  'mcp/session.js',
  `${binChunks}/**`,
]

/**
 * Which part `tsup` builds: `all` (the default), or `code`: every build but the library's types (the
 * `.d.ts` and `.d.cts`, a type check of the sources that takes most of a minute), about 8 s. `npm test`
 * (scripts/test.mjs) builds the code alone: its tests run the code, and `tsc` checks the types.
 * `X402_VAULT_BUILD` chooses.
 */
const part = process.env.X402_VAULT_BUILD ?? 'all'
if (!['all', 'code'].includes(part)) {
  throw new Error(`X402_VAULT_BUILD must be all or code, not ${part}`)
}

// Three builds: the library, the bins, the stdio MCP server's start. The bins are not the sources
// bundled as they are: two modules are swapped (uPlot's files, the recorded MCP handshake) and three
// imports point at another build's files. docs/development.md "The build" says what and why, and how
// to check that the sources and the built bins answer the same.
const library: Options = {
  ...shared,
  name: 'library',
  // ESM and CommonJS (`.cjs`, with `.d.cts` types), as viem and x402 ship: many Express apps are
  // CommonJS (what `npm init -y` makes). The shims give the CommonJS build `import.meta.url` (the
  // devnet finds anvil with it). The bins below stay ESM only: nothing large is shipped twice.
  format: ['esm', 'cjs'],
  shims: true,
  entry: {
    index: 'src/index.ts',
    'devnet/index': 'src/devnet/index.ts',
    'mcp/index': 'src/mcp/index.ts',
    'plugins/express': 'src/plugins/express.ts',
    'plugins/hono': 'src/plugins/hono.ts',
  },
  dts: part === 'all',
  splitting: true,
  clean: binOutputs.map((file) => `!${file}`),
  // viem (and what it runs on) is bundled, tree-shaken: Node loads viem's root as a barrel of about
  // 420 modules, 0.27 s on its own, more than the SDK's whole import budget of 0.25 s (PRODUCT.md §9).
  // The types still come from the viem package. The SDK recognises viem's errors by name, so the
  // caller's clients may come from any copy of viem. The MCP SDK is bundled into `x402-vault/mcp`
  // too: as a dependency it would install Express and Hono (for its HTTP transports) into every
  // seller's app, and the stdio server needs neither. jose (the OAuth check's JWT verification) is a
  // devDependency, so bundled as well: `npx x402-vault@beta` still installs the package alone.
  noExternal: ['viem', 'ox', 'abitype', /^@noble\//, /^@scure\//, /^@modelcontextprotocol\//],
  // The other optional peers (and their subpaths) load from the app's install. package.json names
  // them in `peerDependenciesMeta` only, where tsup does not look for its default externals.
  external: Object.keys(supportedPeers),
  esbuildOptions(options, { format }) {
    // tsup makes the split CommonJS build from esbuild's ESM with sucrase, which breaks a class
    // field beside a constructor written as one comma expression (`super(m), this.name = …`, as
    // jose ships its errors): it puts the field's initializer after `super(…)` with a `;`, a syntax
    // error when `x402-vault/mcp` is required. esbuild lowers class fields itself for that build.
    if (format === 'cjs') {
      options.supported = {
        ...options.supported,
        'class-field': false,
        'class-static-field': false,
      }
    }
  },
}

const code: Options[] = [
  {
    // The bins are self-contained bundles (dependencies included): a few files to load make the MCP
    // server start in well under 0.5 s, where resolving and loading viem's many modules does not, and
    // `npx x402-vault@beta` installs nothing but this package. Split into chunks, so that
    // `x402-vault` loads a sub-command's code only when it runs: the MCP server (what an MCP client
    // starts with no sub-command) never parses the devnet's contracts or the sweeper.
    ...shared,
    ...binMinify,
    name: 'bins',
    // The MCP server's start (`mcp/bin`, and `x402-vault` with no sub-command) is the next build.
    entry: { 'cli/index': 'src/cli/index.ts', 'mcp/session': 'src/mcp/stdioSession.ts' },
    // Except `pg`, an optional peer that only `sweep --lock` loads, from the seller's own install.
    noExternal: [/^(?!pg(\/|$))/],
    external: ['pg'],
    define: bundlesPeers,
    splitting: true,
    clean: false,
    esbuildOptions(options) {
      options.chunkNames = `${binChunks}/[name]-[hash]`
    },
    esbuildPlugins: [
      fromDist('start-mcp-from-its-own-build', /^\.\.\/mcp\/stdio\.js$/),
      {
        // uPlot is a dev dependency: the bins carry its two files, in the ledger's chunk only (the
        // module is imported by the lazily loaded HTML report), as the module's own result.
        name: 'inline-uplot',
        setup(build) {
          build.onLoad({ filter: /[\\/]src[\\/]cli[\\/]uPlotSources\.ts$/ }, () => ({
            contents: `export function uPlotSources() { return ${JSON.stringify(uPlotSources())} }`,
            loader: 'js',
          }))
        },
      },
      {
        // This build cannot clean `dist` (the library's build writes there at the same time): it
        // empties its own chunk folder, so that no chunk of an earlier build is ever packed.
        name: 'clean-bin-chunks',
        setup(build) {
          build.onStart(() => rmSync(`dist/${binChunks}`, { recursive: true, force: true }))
        },
      },
    ],
  },
  {
    // The stdio MCP server's start: what runs before the first answer, in one file of its own. The
    // bins' build above splits by file: every file reachable from an entry through an import, even an
    // unused re-export of an entry barrel (the SDK's, viem's), goes into the chunks that entry loads,
    // which made the server load most of the SDK and viem before its first answer. Bundled alone, it
    // keeps only what it runs (the configuration's checks and the early handshake), and it loads the
    // rest (`mcp/session.js`, from the build above) once the handshake is answered.
    ...shared,
    ...binMinify,
    name: 'mcp-start',
    entry: { 'mcp/bin': 'src/mcp/bin.ts', 'mcp/stdio': 'src/mcp/stdio.ts' },
    noExternal: [/.*/],
    define: bundlesPeers,
    splitting: false,
    clean: false,
    esbuildPlugins: [
      fromDist('bin-loads-stdio', /^\.\/stdio\.js$/),
      fromDist('session-from-the-bins-build', /^\.\/stdioSession\.js$/, './session.js'),
      {
        // The stdio server answers the opening handshake before it loads the MCP SDK: from what the
        // server itself answers, recorded here (see src/mcp/handshakeRecording.ts).
        name: 'record-mcp-handshake',
        setup(build) {
          build.onLoad({ filter: /[\\/]src[\\/]mcp[\\/]handshakeRecording\.ts$/ }, async () => ({
            contents: `export function recordedHandshake() { return ${JSON.stringify(serializeHandshake(await recordHandshake()))} }`,
            loader: 'js',
          }))
        },
      },
    ],
  },
]

export default defineConfig([library, ...code])

/**
 * An esbuild plugin that leaves an import of another build's output as it is (or renamed to that
 * output's file name), so that the file is not bundled twice.
 */
function fromDist(name: string, filter: RegExp, path?: string): Plugin {
  return {
    name,
    setup(build) {
      build.onResolve({ filter }, (args) => ({ path: path ?? args.path, external: true }))
    },
  }
}
