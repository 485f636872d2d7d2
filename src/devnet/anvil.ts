import { type ChildProcess, spawn } from 'node:child_process'
import { accessSync, constants, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { DevnetError } from './errors.js'

/** A running anvil process. */
export type AnvilInstance = {
  /** `http://127.0.0.1:<port>` */
  rpcUrl: string
  port: number
  /** The anvil process id. */
  pid: number
  /** Kills anvil and resolves once the process has exited. Safe to call twice. */
  stop: () => Promise<void>
}

export type StartAnvilOptions = {
  chainId: number
  /** Genesis block number (`--number`). */
  blockNumber?: bigint
  /**
   * Genesis block timestamp in unix seconds (`--timestamp`). Later blocks keep the same offset from the
   * wall clock, so a genesis in the past keeps the chain that far behind until time is advanced.
   */
  genesisTimestamp?: bigint
  /** Port to listen on; 0 (the default) lets the OS pick a free one, so parallel runs never collide. */
  port?: number
  /** How long to wait for anvil to listen. Default 20 s. */
  startTimeoutMs?: number
}

const platformPackages: Record<string, string> = {
  'linux-x64': '@foundry-rs/anvil-linux-amd64',
  'linux-arm64': '@foundry-rs/anvil-linux-arm64',
  'darwin-x64': '@foundry-rs/anvil-darwin-amd64',
  'darwin-arm64': '@foundry-rs/anvil-darwin-arm64',
  'win32-x64': '@foundry-rs/anvil-win32-amd64',
}

/**
 * Finds the anvil binary: the one shipped by the npm package `@foundry-rs/anvil`, else `anvil` on PATH.
 *
 * @param options - `searchPackages: false` skips the npm package; `path` replaces `process.env.PATH`.
 * @returns The absolute path of the binary.
 * @throws {DevnetError} `ANVIL_NOT_FOUND` with install instructions when there is none.
 * @example
 * spawn(resolveAnvilBinary(), ['--port', '0'])
 */
export function resolveAnvilBinary(
  options: { searchPackages?: boolean; path?: string | undefined } = {},
): string {
  const exe = process.platform === 'win32' ? 'anvil.exe' : 'anvil'
  const platformPackage = platformPackages[`${process.platform}-${process.arch}`]
  if (platformPackage && options.searchPackages !== false) {
    try {
      // Spawning the platform binary directly (not the package's node wrapper) means signals reach anvil itself.
      return createRequire(import.meta.url).resolve(`${platformPackage}/bin/${exe}`)
    } catch {
      // not installed: fall back to PATH
    }
  }
  const path = 'path' in options ? options.path : process.env.PATH
  for (const dir of (path ?? '').split(delimiter)) {
    if (!dir) continue
    const candidate = join(dir, exe)
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {
      // keep looking
    }
  }
  throw new DevnetError('anvil was not found.', {
    code: 'ANVIL_NOT_FOUND',
    // `npx x402-vault@beta devnet` installs only this package (anvil is a 40 MB binary that the MCP
    // server, the bin most npx users run, never needs): the first line is the one command that works.
    metaMessages: [
      'Run the devnet with anvil alongside: npx -y -p x402-vault@beta -p @foundry-rs/anvil x402-vault devnet',
      'In a project: npm install --save-dev @foundry-rs/anvil, or install Foundry so that `anvil` is on PATH.',
    ],
  })
}

/** Past blocks whose state anvil keeps: more than the bench's 10,000-block ledger scan. */
const maxPersistedStates = 20_000

/**
 * Running anvils, with the folder each keeps its past states in. One map and one exit hook a process,
 * kept in the global symbol registry: a second copy of this module (two copies of the package, or a
 * test runner that loads modules afresh for each file) shares them rather than adding a hook each.
 */
const runningKey = Symbol.for('x402-vault.runningAnvils')

function runningAnvils(): Map<ChildProcess, string> {
  const registry = globalThis as { [runningKey]?: Map<ChildProcess, string> }
  let anvils = registry[runningKey]
  if (anvils) return anvils
  anvils = new Map()
  registry[runningKey] = anvils
  // A crashed or interrupted parent must not leave anvil processes or their states behind.
  process.once('exit', () => {
    for (const [child, stateHome] of anvils) {
      child.kill('SIGKILL')
      removeStateHome(stateHome)
    }
  })
  return anvils
}

/** Where an anvil of this process keeps its past states: `<tmp>/x402-vault-anvil-<pid>-XXXXXX`. */
const stateHomePrefix = 'x402-vault-anvil-'

/**
 * A folder of its own for one anvil's persisted states, as its `HOME`: anvil writes them under
 * `$HOME/.foundry/anvil/tmp` and never removes them, not even on SIGTERM (hundreds of MB a devnet,
 * tens of GB over a few test runs). Folders left by processes that have died since are removed first.
 */
function newStateHome(): string {
  const folder = tmpdir()
  for (const name of readdirSync(folder)) {
    if (!name.startsWith(stateHomePrefix)) continue
    const owner = Number(name.slice(stateHomePrefix.length).split('-')[0])
    if (Number.isInteger(owner) && !isRunning(owner)) removeStateHome(join(folder, name))
  }
  return mkdtempSync(join(folder, `${stateHomePrefix}${process.pid}-`))
}

function removeStateHome(folder: string): void {
  try {
    rmSync(folder, { recursive: true, force: true, maxRetries: 3 })
  } catch {
    // Best effort: the next devnet's start removes what is left.
  }
}

/** True while a process with this id runs (also when it is another user's). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: alive, but another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * Starts anvil on 127.0.0.1 and resolves when it accepts connections.
 *
 * @param options - chain id, genesis block number, port.
 * @returns The RPC URL and a `stop()` that leaves no process behind.
 * @example
 * const anvil = await startAnvil({ chainId: 84532 })
 * // ... use anvil.rpcUrl
 * await anvil.stop()
 */
export async function startAnvil(options: StartAnvilOptions): Promise<AnvilInstance> {
  const binary = resolveAnvilBinary()
  const args = [
    '--host',
    '127.0.0.1',
    '--port',
    String(options.port ?? 0),
    '--chain-id',
    String(options.chainId),
    // Anvil keeps only the recent blocks' states in memory (a read 10,000 blocks back fails); this
    // keeps the rest on disk, so the devnet answers historical reads (a ledger's opening balances)
    // over a long stretch as an archive node does.
    '--max-persisted-states',
    String(maxPersistedStates),
  ]
  if (options.blockNumber !== undefined) args.push('--number', options.blockNumber.toString())
  if (options.genesisTimestamp !== undefined) {
    args.push('--timestamp', options.genesisTimestamp.toString())
  }

  const stateHome = newStateHome()
  const child = spawn(binary, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, HOME: stateHome },
  })
  runningAnvils().set(child, stateHome)

  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      runningAnvils().delete(child)
      removeStateHome(stateHome)
      resolve()
    })
  })

  let output = ''
  let settled = false
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      fail(
        new DevnetError('anvil did not start in time.', {
          code: 'ANVIL_START_FAILED',
          ...withOutput(output),
        }),
      )
    }, options.startTimeoutMs ?? 20_000)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /Listening on [^:\s]+:(\d+)/.exec(output)
      if (match?.[1] && !settled) {
        settled = true
        clearTimeout(timer)
        output = ''
        resolve(Number(match[1]))
      }
    }
    const fail = (error: Error) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      child.kill('SIGKILL')
      // A spawn that failed never exits: its folder goes here.
      runningAnvils().delete(child)
      removeStateHome(stateHome)
      reject(error)
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString()
    })
    child.once('error', (cause) =>
      fail(new DevnetError('anvil could not be started.', { code: 'ANVIL_START_FAILED', cause })),
    )
    child.once('exit', (code) =>
      fail(
        new DevnetError(`anvil exited during start-up (code ${code}).`, {
          code: 'ANVIL_START_FAILED',
          ...withOutput(output, { exitCode: code }),
        }),
      ),
    )
  })

  // anvil logs every request; keep draining the pipes so it never blocks on a full buffer.
  child.stdout.removeAllListeners('data')
  child.stderr.removeAllListeners('data')
  child.stdout.resume()
  child.stderr.resume()
  child.removeAllListeners('error')
  child.on('error', () => {})

  let stopping: Promise<void> | undefined
  return {
    rpcUrl: `http://127.0.0.1:${port}`,
    port,
    pid: child.pid as number,
    stop() {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGTERM')
          const timer = setTimeout(() => child.kill('SIGKILL'), 3_000)
          await exited
          clearTimeout(timer)
        }
      })()
      return stopping
    },
  }
}

/** The end of what anvil printed, for the details and the message: it says why anvil failed. */
function withOutput(
  text: string,
  details: Record<string, unknown> = {},
): { details: Record<string, unknown>; metaMessages: string[] } {
  const output = text.trim().split('\n').slice(-10).join('\n')
  return { details: { ...details, output }, metaMessages: [output] }
}
