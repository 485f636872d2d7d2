import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

/**
 * uPlot's script and style (uPlot: MIT, by Leon Sorokin), which `x402-vault ledger --html` inlines into
 * its page so that the page loads nothing from the network. From source they are read from the npm
 * package (a dev dependency). The bins' build replaces this module with the two files' contents (see
 * tsup.config.ts), so that `npx x402-vault` installs nothing but this package, and only the ledger's
 * chunk carries them.
 *
 * @returns The minified script and the stylesheet, as text.
 */
export function uPlotSources(): { script: string; style: string } {
  const require = createRequire(import.meta.url)
  const read = (path: string) => readFileSync(require.resolve(path), 'utf8')
  return {
    script: read('uplot/dist/uPlot.iife.min.js'),
    style: read('uplot/dist/uPlot.min.css'),
  }
}
