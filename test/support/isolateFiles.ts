/**
 * Set-up for each file of the `unit` and `devnet` projects. Each shares its workers between files
 * (`isolate: false`), so that viem, x402 and the MCP SDK load once a worker instead of once a file:
 * that halves `npm run test:unit`, and takes the import time of a full `npm test` (summed over its
 * workers) from about 100 s to about 20 s. What a file could leak to the next is undone here: this repository's modules
 * load afresh in every file (module state such as caches starts empty), and timers, stubs and spies
 * are restored after it, and so are the Web globals that a server library may replace (@hono/node-server's
`serve` swaps `Request` and `Response` for its own, and msw then takes its network errors for answers of
status 0). The temporary folders it made (`tempFolder`) are removed.
 */
import { afterAll, vi } from 'vitest'
import { removeTempFolders } from '../../harness/tempFolder.js'

vi.resetModules()
// The SDK's write queue lives in a global registry (two copies of the package share it): a write an
// earlier file left waiting, on a devnet that has stopped since, must not hold this file's account.
;(globalThis as { [key: symbol]: Map<string, unknown> | undefined })[
  Symbol.for('x402-vault.writeQueue')
]?.clear()
/** The Web globals as the worker's first file found them, kept for the worker's life. */
const webGlobalNames = ['fetch', 'Request', 'Response', 'Headers'] as const
const webGlobalsKey = Symbol.for('x402-vault.test.webGlobals')
const worker = globalThis as { [webGlobalsKey]?: Record<(typeof webGlobalNames)[number], unknown> }
worker[webGlobalsKey] ??= Object.fromEntries(
  webGlobalNames.map((name) => [name, globalThis[name]]),
) as Record<(typeof webGlobalNames)[number], unknown>
const webGlobals = worker[webGlobalsKey]
afterAll(async () => {
  for (const name of webGlobalNames) {
    if (globalThis[name] !== webGlobals[name]) {
      Object.defineProperty(globalThis, name, {
        value: webGlobals[name],
        writable: true,
        configurable: true,
      })
    }
  }
  await removeTempFolders()
  vi.useRealTimers()
  vi.unstubAllGlobals()
  vi.unstubAllEnvs()
  vi.restoreAllMocks()
})
