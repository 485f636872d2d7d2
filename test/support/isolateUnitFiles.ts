/**
 * Set-up for each file of the `unit` project. That project shares one worker between its files
 * (`isolate: false`), so that viem, x402 and the MCP SDK load once instead of once a file: that halves
 * `npm run test:unit`. What a file could leak to the next is undone here: this repository's modules
 * load afresh in every file (module state such as write queues starts empty), and timers, stubs and
 * spies are restored after it.
 */
import { afterAll, vi } from 'vitest'

vi.resetModules()
afterAll(() => {
  vi.useRealTimers()
  vi.unstubAllGlobals()
  vi.unstubAllEnvs()
  vi.restoreAllMocks()
})
