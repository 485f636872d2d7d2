import { builtinModules } from 'node:module'
import { build } from 'esbuild'

/**
 * Bundles a Worker given as module text, as wrangler bundles an entry for workerd with
 * `nodejs_compat`: ES module output, the `workerd`/`worker`/`browser` export conditions, Node's
 * built-in modules and `cloudflare:*` left to the runtime. `resolveDir` is where the text's imports
 * resolve from (the example's folder); `tsconfig.json`'s `paths` map `x402-vault` to its sources.
 *
 * @param contents - The entry's source (TypeScript).
 * @param resolveDir - The folder its relative imports start from.
 * @returns The bundle's text, for Miniflare's `script`.
 */
export function bundleWorker(contents: string, resolveDir: string): Promise<string> {
  return build({
    stdin: { contents, resolveDir, loader: 'ts' },
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    // nodejs_compat provides Node's built-in modules, as wrangler leaves them to it.
    external: ['node:*', 'cloudflare:*', ...builtinModules],
    // @x402/extensions (gas sponsoring on Base Sepolia) brings a SIWE library whose optional ethers
    // support is a dynamic import("ethers"): never run here, but a Worker's bundle must resolve it.
    plugins: [
      {
        name: 'no-ethers',
        setup(build) {
          build.onResolve({ filter: /^ethers$/ }, () => ({ path: 'ethers', namespace: 'empty' }))
          build.onLoad({ filter: /.*/, namespace: 'empty' }, () => ({ contents: 'export {}' }))
        },
      },
    ],
    // As wrangler does with nodejs_compat: a CommonJS require() of a Node built-in (here, a
    // dependency's require('buffer')) gets the runtime's module.
    banner: {
      js: "import * as nodeBuffer from 'node:buffer';\nconst require = (id) => { if (id === 'buffer' || id === 'node:buffer') return nodeBuffer; throw new Error('require(' + id + ') in a Worker'); };",
    },
    logLevel: 'silent',
  }).then((result) => result.outputFiles[0]?.text ?? '')
}
