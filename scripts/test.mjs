#!/usr/bin/env node
// What `npm test` runs: the linter, the build, the tests, the type check and the API report.
//
//   node scripts/test.mjs
//
// The tests run the built code, not its types. So the code is built first (about 8 s), with Biome
// beside it, and the tests start when it is built: the unit and devnet tests in two workers, and in
// a second vitest process the devnet files that mostly wait, in one. From the start, at the lowest
// CPU priority so that they run on what the build and the tests leave idle, run `tsc` (the one type
// check of everything, about 25 s of a core) and the API report (which emits its declarations
// unchecked). The library's bundled types (`dist/**/*.d.ts`) are not built: that is a second type
// check of the sources, for the package only (`npm run build`, and the package tests, which build
// it first). Each step's output is held back and printed whole when it ends, so that no two logs
// interleave; the main vitest run's streams as it runs.
// Exits non-zero when any step fails.
import { spawn } from 'node:child_process'
import { setPriority } from 'node:os'
import { join } from 'node:path'

const root = join(import.meta.dirname, '..')
const bin = (name) => join(root, 'node_modules/.bin', name)
/**
 * The checks' CPU priority (`nice`): the lowest, so that they run on the time the tests leave idle.
 * Linux shares a busy core by weight: at 10 a check still took about a tenth of a core from tests that
 * kept both cores busy (weight 110 against 1024), about 30 s of CPU over a run; at 19 it takes about
 * a seventieth (weight 15). They still end before the tests: they need about 40 s of CPU, and got it
 * in the first 110 to 210 s of a 350 s run on the 2-core dev machine.
 */
const checksNice = 19

/**
 * Runs one command; resolves with its exit code and, unless `inherit`, its output held back.
 * `nice` lowers its CPU priority, and so that of every process it starts.
 */
function run({ label, command, args, env = {}, inherit = false, nice = 0 }) {
  const started = performance.now()
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: inherit ? 'inherit' : ['ignore', 'pipe', 'pipe'],
    })
    if (nice && child.pid !== undefined) {
      try {
        setPriority(child.pid, nice)
      } catch {
        // Where priorities cannot be set, the step runs at the tests' priority: slower, not wrong.
      }
    }
    const output = []
    child.stdout?.on('data', (chunk) => output.push(chunk))
    child.stderr?.on('data', (chunk) => output.push(chunk))
    const done = (code, more = '') => {
      const seconds = ((performance.now() - started) / 1000).toFixed(1)
      const text = `${Buffer.concat(output).toString()}${more}`
      process.stdout.write(`> ${label} (${seconds} s)\n${text}`)
      if (code !== 0) process.stderr.write(`${label} failed (exit code ${code})\n`)
      resolve(code === 0)
    }
    child.on('error', (error) => done(1, `${error.message}\n`))
    child.on('close', (code) => done(code ?? 1))
  })
}

const node = process.execPath
const buildCode = {
  label: 'build (code)',
  command: bin('tsup'),
  args: ['--silent'],
  env: { X402_VAULT_BUILD: 'code' },
}
const vitest = join(root, 'node_modules/vitest/vitest.mjs')
const tests = {
  label: 'vitest',
  command: node,
  args: [vitest, 'run', '--project', 'unit', '--project', 'devnet'],
  // The code is built: the global set-up must not ask for the types too.
  env: { X402_VAULT_BUILD: 'code' },
  inherit: true,
}
// The devnet files that mostly wait (`waitingTests` in vitest.config.ts), in one worker of their own
// beside the two above, at the tests' priority: there their waits overlap the others' work.
const waitingTests = {
  ...tests,
  label: 'vitest (devnet-waiting)',
  args: [vitest, 'run', '--project', 'devnet-waiting'],
  inherit: false,
}
// TypeScript 7, the native compiler: about 20 s of one core where TypeScript 5.9's tsc took 80 s of
// CPU. Single-threaded: beside the tests every core is busy, and its threads would only add work.
// TypeScript 5.9 (`typescript`) stays for the tools that use its JavaScript API (tsup's declarations,
// the API report, the docs' snippets checked against the tarball).
const typecheck = {
  label: 'typecheck',
  command: node,
  args: [join(root, 'node_modules/typescript7/bin/tsc'), '--noEmit', '--singleThreaded'],
  // Go's garbage collector off for this one short run: 23 s of CPU instead of 30, for a peak of
  // 1.5 GB of memory instead of 1.2 (on the 2-core dev machine).
  env: { GOGC: 'off' },
  nice: checksNice,
}
const apiCheck = {
  label: 'api:check',
  command: node,
  args: [join(root, 'scripts/api-report.mjs')],
  nice: checksNice,
}

// package.json's own `lint` script, so that its flags are written once.
const lint = { label: 'lint', command: 'npm', args: ['run', '--silent', 'lint'] }

// Biome beside the build, which leaves most of a core idle while it waits on esbuild, and the type check
// and the API report from the start, at their low priority: they take that idle time (about 6 s of
// CPU) and cost the build under a second (6.2 s to 7.0 s). At nice 10 they took it from 10 s to 13 s.
// The tests keep both cores busy, so every second of CPU the checks spend before them is half a
// second off the end.
const linted = run(lint)
const checked = [run(typecheck), run(apiCheck)]
const built = await run(buildCode)
const results = await Promise.all([
  linted,
  ...checked,
  ...(built ? [run(tests), run(waitingTests)] : [false]),
])
process.exitCode = results.every(Boolean) ? 0 : 1
