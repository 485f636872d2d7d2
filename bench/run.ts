/**
 * `npm run bench`: measures the budgets of docs/performance.md on a devnet and prints a table, or with
 * `--json` exactly one JSON object (the budgets, then the details). Progress goes to
 * stderr. Exit code 1 when a measured value breaks its budget, 2 when the bench cannot run.
 *
 *   npm run build && npm run bench [-- --json] [-- --smoke]
 *   npm run bench -- --from report.json   # a report saved with --json, as a table
 *
 * `--smoke` takes as few samples as give a valid report: `npm test` runs it so the bench cannot rot.
 * Each measurement is a module of its own. The seller-side ones (paid-request latency, the burst of
 * settlements, the sweep) pay through the devnet's x402 facilitator.
 */
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { type BenchReport, formatReport } from './report.js'

const options = process.argv.slice(2)
const [flag, savedReport] = options
if (flag === '--from' && savedReport && options.length === 2) {
  // No devnet: a saved run shows again as a table, and the smoke test checks the table through this
  // process instead of importing the bench.
  const report = JSON.parse(await readFile(savedReport, 'utf8')) as BenchReport
  process.stdout.write(formatReport(report))
  process.exit(report.overBudget.length > 0 ? 1 : 0)
}
const unknown = options.filter((option) => option !== '--json' && option !== '--smoke')
const distDir = join(import.meta.dirname, '../dist')
const progress = (message: string) => process.stderr.write(`bench: ${message}\n`)

if (unknown.length > 0) {
  progress(
    `unknown option ${unknown.join(' ')}; usage: npm run bench [-- --json] [-- --smoke] | [-- --from report.json]`,
  )
  process.exit(2)
}
if (!existsSync(join(distDir, 'mcp/bin.js')) || !existsSync(join(distDir, 'index.js'))) {
  progress('the bench measures the built package: run `npm run build` first')
  process.exit(2)
}

// The measurements load only now: a saved report (above) needs none of their modules.
const { measureAll } = await import('./measureAll.js')
await measureAll({
  smoke: options.includes('--smoke'),
  json: options.includes('--json'),
  distDir,
  progress,
})
