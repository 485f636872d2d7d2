#!/usr/bin/env node
// The checks `npm test` runs before vitest: the type check beside the build and its API report.
//
//   node scripts/checks.mjs
//
// tsc and tsup's type bundling each keep one core busy for most of a minute; on a 2-core machine
// running them side by side saves about that minute of `npm test`. Each one's output is held back and
// printed whole when it ends, so that two logs never interleave. Exits non-zero when any step fails.
import { spawn } from 'node:child_process'

/** One line of checks that run in order; the lines run side by side. */
const lines = [
  [['npm', 'run', '--silent', 'typecheck']],
  [
    ['npm', 'run', '--silent', 'build'],
    ['npm', 'run', '--silent', 'api:check'],
  ],
]

/** Runs one command with its output held back, and resolves with its exit code and that output. */
function run([command, ...args]) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    const output = []
    child.stdout.on('data', (chunk) => output.push(chunk))
    child.stderr.on('data', (chunk) => output.push(chunk))
    child.on('error', (error) => resolve({ code: 1, output: `${error.message}\n` }))
    child.on('close', (code) =>
      resolve({ code: code ?? 1, output: Buffer.concat(output).toString() }),
    )
  })
}

/** Runs a line's commands in order, stopping at the first that fails; resolves true when all passed. */
async function runLine(line) {
  for (const command of line) {
    const started = performance.now()
    const { code, output } = await run(command)
    const seconds = ((performance.now() - started) / 1000).toFixed(1)
    process.stdout.write(`> ${command.slice(3).join(' ')} (${seconds} s)\n${output}`)
    if (code !== 0) {
      process.stderr.write(`${command.slice(3).join(' ')} failed (exit code ${code})\n`)
      return false
    }
  }
  return true
}

const results = await Promise.all(lines.map(runLine))
process.exitCode = results.every(Boolean) ? 0 : 1
