/**
 * No secret reaches the terminal. Every `x402-vault` command, run as the built bin, under each RPC fault
 * (down, HTTP 500, HTTP 401 with a body that echoes the URL, garbage, a hang), with markers in the RPC
 * URL's userinfo, path and query (given by `--rpc` or by the environment variable), and the merchant
 * key, an operator key (`SWEEPER_PRIVATE_KEY`) and the bearer tokens in its environment or options:
 * nothing it prints on stdout or stderr (answers, events, log lines, /healthz) shows any of them. Every
 * command fails in bounded time: a hang ends through the transport's timeouts, made short here with
 * the documented `VAULT_RPC_TIMEOUT`. One devnet and one fault proxy serve the whole file; each RPC
 * URL names its fault in its path.
 */
import { join } from 'node:path'
import { generatePrivateKey } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeAddressesFile } from '../../harness/addressesFile.js'
import { type CountingProxy, startCountingProxy } from '../../harness/countingProxy.js'
import { connectHttp, postMcp, startHttpMcp } from '../../harness/mcpHttp.js'
import { type CliResult, runCli } from '../../harness/runCli.js'
import { tempFolder } from '../../harness/tempFolder.js'
import { startWatcher } from '../../harness/watcher.js'
import { type Devnet, startDevnet } from '../../src/devnet/startDevnet.js'
import { callTool, connectMcp } from '../support/mcp.js'
import {
  mcpToolCalls,
  type RpcFaultName,
  rpcFaults,
  SecretFinder,
  secretRpc,
} from '../support/secrets.js'

let devnet: Devnet
let proxy: CountingProxy
let rpc: ReturnType<typeof secretRpc>
let addressesPath: string
let folder: string
let secrets: SecretFinder
const sweeperKey = generatePrivateKey()
const mcpToken = 'mcpTokenMarkR8sLong-enough'
const facilitatorToken = 'facTokenMarkT3nLong'

beforeAll(async () => {
  devnet = await startDevnet({ chain: 'base-sepolia', facilitator: false })
  proxy = await startCountingProxy(devnet.rpcUrl)
  rpc = secretRpc(proxy)
  addressesPath = await writeAddressesFile(devnet)
  folder = await tempFolder('x402-vault-secrets-')
  secrets = new SecretFinder()
    .add('MERCHANT_PRIVATE_KEY', devnet.accounts.merchant.privateKey)
    .add('SWEEPER_PRIVATE_KEY', sweeperKey)
    .add('VAULT_MCP_HTTP_TOKEN', mcpToken)
    .add('the facilitator bearer token', facilitatorToken)
})
afterAll(async () => {
  await proxy?.close()
  await devnet?.stop()
})

const wallet = () => devnet.accounts.merchant.address
/** Short RPC timeouts, as an impatient user would set them: a hang ends in seconds, not a minute. */
const rpcTimeout = { VAULT_RPC_TIMEOUT: '0.5' }

/** The environment of a command: both keys, the addresses, the RPC timeout, and more. */
const commandEnv = (more: Record<string, string> = {}) => ({
  MERCHANT_PRIVATE_KEY: devnet.accounts.merchant.privateKey,
  VAULT_ADDRESSES: addressesPath,
  ...rpcTimeout,
  ...more,
})

/**
 * Runs a command under `fault`: odd faults give the URL by `--rpc` (and `oddArgs`), even ones by the
 * environment variable (and `evenEnv`).
 */
function runUnder(
  fault: RpcFaultName,
  args: string[],
  variants: { oddArgs?: string[]; evenEnv?: Record<string, string> } = {},
) {
  const url = rpc.url({ fault })
  const odd = rpcFaults.indexOf(fault) % 2 === 1
  return odd
    ? runCli([...args, ...(variants.oddArgs ?? []), '--rpc', url], commandEnv())
    : runCli(args, commandEnv({ ...variants.evenEnv, BASE_SEPOLIA_RPC_URL: url }))
}

/** A command that failed on the RPC: exit 1, one line that says so, and no secret anywhere. */
function expectRpcFailure(result: CliResult, what: string): void {
  secrets.expectNoneIn(`${result.stdout}\n${result.stderr}`, what)
  expect(result.code, `${what}: ${result.stderr}`).toBe(1)
  expect(result.stderr, what).toMatch(/RPC/)
  expect(result.stderr.trim().split('\n'), what).toHaveLength(1)
}

// The MCP servers and the one-shot commands run up to five tests at once (vitest's maxConcurrency), each
// with its five faults at once: their processes mostly wait (on RPC timeouts and retries), and the waits
// overlap. The watcher, whose faults change while it runs, has the file to itself.
describe('every command, under each RPC fault', () => {
  it.concurrent('mcp over stdio: every tool under each fault answers an RPC error, and nothing shows a secret', async () => {
    await Promise.all(
      rpcFaults.map(async (fault) => {
        const mcp = await connectMcp(
          {
            BASE_SEPOLIA_RPC_URL: rpc.url({ fault }),
            VAULT_ADDRESSES: addressesPath,
            MCP_LOG_LEVEL: 'debug',
          },
          { viaCli: true },
        )
        try {
          // At once: under a hang each call takes the server's own RPC timeouts (2 × 8 s).
          await Promise.all(
            mcpToolCalls(wallet()).map(async ([name, args]) => {
              const answer = await callTool(mcp.client, name, args)
              expect(answer.isError, `${name} (${fault}): ${answer.text}`).toBe(true)
              expect(answer.text, `${name} (${fault})`).toMatch(/^RPC_[A-Z_]+[ :]/)
              secrets.expectNoneIn(answer.text, `${name}'s answer (${fault})`)
            }),
          )
        } finally {
          await mcp.close()
        }
        secrets.expectNoneIn(mcp.stderr(), `the stdio server's log (${fault})`)
      }),
    )
  })

  it.concurrent('mcp --http with a bearer token: every tool under each fault, and a wrong token, show no secret', async () => {
    await Promise.all(
      rpcFaults.map(async (fault) => {
        const server = await startHttpMcp({
          PATH: process.env.PATH ?? '',
          BASE_SEPOLIA_RPC_URL: rpc.url({ fault }),
          VAULT_ADDRESSES: addressesPath,
          VAULT_MCP_HTTP_TOKEN: mcpToken,
          // A hung RPC: the request ends after its own timeout (504), not the RPC's.
          VAULT_MCP_REQUEST_TIMEOUT: '2',
          MCP_LOG_LEVEL: 'debug',
        })
        try {
          const refused = await postMcp(
            server.url,
            { jsonrpc: '2.0', id: 1, method: 'ping' },
            { authorization: `Bearer ${mcpToken.slice(0, -1)}x` },
          )
          expect(refused.status).toBe(401)
          const headers: string[] = []
          refused.headers.forEach((value, key) => {
            headers.push(`${key}: ${value}`)
          })
          secrets.expectNoneIn(
            `${headers.join('\n')}\n${await refused.text()}`,
            `the refusal of a wrong token (${fault})`,
          )
          const { client, close } = await connectHttp(server.url, 'v1', {
            authorization: `Bearer ${mcpToken}`,
          })
          try {
            await Promise.all(
              mcpToolCalls(wallet()).map(async ([name, args]) => {
                // An answer, or (past the request timeout) a JSON-RPC error the client throws.
                const answer = await callTool(client, name, args).catch((error: Error) => error)
                const text = answer instanceof Error ? answer.message : answer.text
                if (!(answer instanceof Error)) {
                  expect(answer.isError, `${name} (${fault})`).toBe(true)
                }
                secrets.expectNoneIn(text, `${name}'s answer over HTTP (${fault})`)
              }),
            )
          } finally {
            await close()
          }
        } finally {
          expect(await server.stop()).toBe(0)
        }
        secrets.expectNoneIn(server.stderr(), `the HTTP server's log (${fault})`)
      }),
    )
  })

  const commands: [string, () => string[], Parameters<typeof runUnder>[2]?][] = [
    ['ledger', () => ['ledger', '--wallet', wallet()]],
    ['ledger --json', () => ['ledger', '--wallet', wallet(), '--json']],
    ['ledger --csv', () => ['ledger', '--wallet', wallet(), '--csv']],
    [
      'ledger --html',
      () => ['ledger', '--wallet', wallet(), '--html', join(folder, 'ledger.html')],
    ],
    [
      'status (--json on odd faults)',
      () => ['status', '--wallet', wallet()],
      { oddArgs: ['--json'] },
    ],
    [
      // SWEEPER_PRIVATE_KEY wins over MERCHANT_PRIVATE_KEY: both are in the environment.
      'sweep (the operator key on even faults)',
      () => ['sweep', '--wallet', wallet()],
      { oddArgs: ['--json'], evenEnv: { SWEEPER_PRIVATE_KEY: sweeperKey } },
    ],
    [
      'sweep --watch (the operator key on even faults)',
      () => ['sweep', '--watch', '--wallet', wallet(), '--poll', '0.2'],
      { evenEnv: { SWEEPER_PRIVATE_KEY: sweeperKey } },
    ],
    [
      'withdraw (--json on odd faults)',
      () => ['withdraw', '--amount', '1'],
      { oddArgs: ['--json'] },
    ],
  ]

  it.concurrent.each(commands)(
    '%s: no secret, and the RPC’s reason',
    async (name, args, variants) => {
      const results = await Promise.all(rpcFaults.map((fault) => runUnder(fault, args(), variants)))
      for (const [index, result] of results.entries()) {
        expectRpcFailure(result, `${name} (${rpcFaults[index]})`)
      }
    },
  )

  it('sweep --watch, when each fault comes while it runs: problem events, /healthz and /metrics show no secret; SIGTERM stops it', async () => {
    rpc.setLive('watch', undefined)
    const watcher = startWatcher(commandEnv({ BASE_SEPOLIA_RPC_URL: rpc.url({ live: 'watch' }) }), [
      '--json',
      '--poll',
      '0.2',
      '--interval',
      '1',
      '--min-idle',
      '1000000',
      '--health-port',
      '0',
    ])
    const started = await watcher.next((event) => event.event === 'start')
    for (const fault of rpcFaults) {
      const from = watcher.events.length
      rpc.setLive('watch', fault)
      const problem = await watcher.after(from, (event) => event.event === 'problem')
      expect(problem.code, fault).toMatch(/^RPC_/)
      rpc.setLive('watch', undefined)
    }
    const healthUrl = started.healthUrl as string
    const health = await (await fetch(`${healthUrl}/healthz`)).text()
    const metrics = await (await fetch(`${healthUrl}/metrics`)).text()
    watcher.child.kill('SIGTERM')
    expect(await watcher.exited).toBe(0)
    secrets.expectNoneIn(
      [...watcher.events.map((event) => JSON.stringify(event)), watcher.stderr()].join('\n'),
      'the watch sweeper’s events and stderr',
    )
    secrets.expectNoneIn(`${health}\n${metrics}`, '/healthz and /metrics')
  })

  it('devnet: fails to start on a port in use, and shows no facilitator bearer token', async () => {
    const result = await runCli([
      'devnet',
      '--port',
      new URL(proxy.url).port,
      '--bearer-token',
      facilitatorToken,
      '--addresses',
      join(folder, 'devnet.json'),
    ])
    secrets.expectNoneIn(`${result.stdout}\n${result.stderr}`, 'x402-vault devnet')
    expect(result.code, result.stderr).toBe(1)
    expect(result.stderr).toMatch(/anvil/)
  })
})
