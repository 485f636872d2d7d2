import { defineConfig, type Options } from 'tsup'

const shared: Options = {
  format: ['esm'],
  target: 'node20',
  sourcemap: true,
  shims: false,
}

/** The bins, written into `dist` by the second build below: the library's clean must keep them. */
const binOutputs = ['cli/index.js', 'mcp/bin.js']

export default defineConfig([
  {
    ...shared,
    name: 'library',
    entry: {
      index: 'src/index.ts',
      'devnet/index': 'src/devnet/index.ts',
      'mcp/index': 'src/mcp/index.ts',
      'plugins/express': 'src/plugins/express.ts',
      'plugins/hono': 'src/plugins/hono.ts',
    },
    dts: true,
    splitting: true,
    clean: binOutputs.flatMap((file) => [`!${file}`, `!${file}.map`]),
    // viem (and what it runs on) is bundled, tree-shaken: Node loads viem's root as a barrel of about
    // 420 modules, 0.27 s on its own, more than the SDK's whole import budget of 0.25 s (PRODUCT.md §9).
    // The types still come from the viem package. The SDK recognises viem's errors by name, so the
    // caller's clients may come from any copy of viem. The MCP SDK is bundled into `x402-vault/mcp`
    // too: as a dependency it would install Express and Hono (for its HTTP transports) into every
    // seller's app, and the stdio server needs neither.
    noExternal: ['viem', 'ox', 'abitype', /^@noble\//, /^@scure\//, /^@modelcontextprotocol\//],
  },
  {
    // The bins are self-contained bundles (dependencies included): one file to load makes the MCP
    // server start in well under 0.5 s, where resolving and loading viem's many modules does not.
    ...shared,
    name: 'bins',
    entry: { 'cli/index': 'src/cli/index.ts', 'mcp/bin': 'src/mcp/bin.ts' },
    // Except `pg`, an optional peer that only `sweep --lock` loads, from the seller's own install.
    noExternal: [/^(?!pg(\/|$))/],
    external: ['pg'],
    splitting: false,
    clean: false,
  },
])
