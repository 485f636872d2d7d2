import { defineConfig } from 'tsup'

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'devnet/index': 'src/devnet/index.ts',
    'cli/index': 'src/cli/index.ts',
    'mcp/index': 'src/mcp/index.ts',
    'mcp/bin': 'src/mcp/bin.ts',
    'plugins/express': 'src/plugins/express.ts',
    'plugins/hono': 'src/plugins/hono.ts',
  },
  format: ['esm'],
  target: 'node20',
  dts: true,
  sourcemap: true,
  clean: true,
  splitting: true,
  shims: false,
  // viem (and what it runs on) is bundled, tree-shaken: Node loads viem's root as a barrel of about
  // 420 modules, 0.27 s on its own, more than the SDK's whole import budget of 0.25 s (PRODUCT.md §9).
  // The types still come from the viem package. The SDK recognises viem's errors by name, so the
  // caller's clients may come from any copy of viem.
  noExternal: ['viem', 'ox', 'abitype', /^@noble\//, /^@scure\//],
})
