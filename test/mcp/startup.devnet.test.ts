import { writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeAddressesFile } from '../../harness/addressesFile.js'
import { type CountingProxy, startCountingProxy } from '../../harness/countingProxy.js'
import { initializeRequest, spawnJsonLines } from '../../harness/jsonLinesProcess.js'
import { mcpToolNames } from '../../harness/mcpToolNames.js'
import { cliBin } from '../../harness/runCli.js'
import { tempFolder } from '../../harness/tempFolder.js'
import { type Devnet, startDevnet } from '../../src/devnet/startDevnet.js'
import { callToolError, callToolOk, connectMcp, mcpBin, runBin } from '../support/mcp.js'

let devnet: Devnet
let proxy: CountingProxy
let addressesFile: string

beforeAll(async () => {
  devnet = await startDevnet({ chain: 'base-sepolia' })
  proxy = await startCountingProxy(devnet.rpcUrl)
  addressesFile = await writeAddressesFile(devnet)
})
afterAll(async () => {
  await proxy?.close()
  await devnet?.stop()
})

/** Starts the bin with `env`; it must exit 1 at once with one line on stderr and nothing on stdout. */
async function expectStartupError(env: Record<string, string>): Promise<string> {
  const { code, stdout, stderr } = await runBin([mcpBin], env)
  expect(code).toBe(1)
  expect(stdout).toBe('')
  expect(stderr.trimEnd().split('\n')).toHaveLength(1)
  expect(stderr).toMatch(/^x402-vault-mcp: /)
  expect(stderr).not.toMatch(/\n\s+at /)
  return stderr
}

describe('configuration errors stop the server with a one-line reason', () => {
  it('VAULT_CHAIN must be base-sepolia', async () => {
    const stderr = await expectStartupError({ VAULT_CHAIN: 'base' })
    expect(stderr).toContain('VAULT_CHAIN must be base-sepolia')
    expect(stderr).toContain('"base"')
  })

  it('VAULT_CHAIN is case-insensitive; an unknown chain is named as such', async () => {
    const stderr = await expectStartupError({ VAULT_CHAIN: 'mainnet-ish' })
    expect(stderr).toContain('not a chain this server knows')
    expect(stderr).not.toContain('Base mainnet')
  })

  it('VAULT_MCP_MAX_PLAN_USDC must be a positive decimal', async () => {
    for (const value of ['abc', '0', '-5', '1e3', '1.1234567']) {
      const stderr = await expectStartupError({ VAULT_MCP_MAX_PLAN_USDC: value })
      expect(stderr, value).toContain('VAULT_MCP_MAX_PLAN_USDC must be')
    }
  })

  it('VAULT_ADDRESSES names the file and the key at fault', async () => {
    const missing = join(tmpdir(), 'no-such-dir-x402', 'addresses.json')
    expect(await expectStartupError({ VAULT_ADDRESSES: missing })).toContain(missing)

    const dir = await tempFolder('x402-vault-mcp-')
    const partial = join(dir, 'partial.json')
    const { oracle: _oracle, ...withoutOracle } = devnet.addresses
    await writeFile(partial, JSON.stringify({ chain: 'base-sepolia', ...withoutOracle }))
    const stderr = await expectStartupError({ VAULT_ADDRESSES: partial })
    expect(stderr).toContain(partial)
    expect(stderr).toContain('"oracle"')
  })

  it('MCP_LOG_LEVEL and BASE_SEPOLIA_RPC_URL are checked, without echoing the URL’s secrets', async () => {
    expect(await expectStartupError({ MCP_LOG_LEVEL: 'verbose' })).toContain('MCP_LOG_LEVEL')
    const stderr = await expectStartupError({
      BASE_SEPOLIA_RPC_URL: 'ftp://user:pw@rpc.example/v2/SECRETKEY?apikey=QUERYSECRET',
    })
    expect(stderr).toContain('BASE_SEPOLIA_RPC_URL must be an http(s) URL')
    expect(stderr).not.toMatch(/SECRETKEY|QUERYSECRET|pw@/)
  })
})

describe('start-up and the RPC', () => {
  it('starts and lists its tools while the RPC is down; tools answer retryably until it is back', async () => {
    proxy.setDown(true)
    // A provider-style URL: its path and query carry the key and must never be shown.
    const rpcUrl = `${proxy.url}/v2/SECRETKEY?apikey=QUERYSECRET`
    const mcp = await connectMcp({
      BASE_SEPOLIA_RPC_URL: rpcUrl,
      VAULT_ADDRESSES: addressesFile,
      MCP_LOG_LEVEL: 'debug',
    })
    try {
      expect((await mcp.client.listTools()).tools).toHaveLength(mcpToolNames.length)
      for (const name of ['vault_status', 'vault_check_yield']) {
        const text = await callToolError(mcp.client, name, {}, 'RPC_UNREACHABLE', {
          retryable: true,
        })
        expect(text).toContain(proxy.url)
        expect(text).not.toMatch(/SECRETKEY|QUERYSECRET/)
      }
      proxy.setDown(false)
      const status = await callToolOk(mcp.client, 'vault_status')
      expect(status.chainId).toBe(84532)
      expect(mcp.stderr()).toContain('Verified the vault deployment')
      expect(mcp.stderr()).not.toMatch(/SECRETKEY|QUERYSECRET/)
    } finally {
      proxy.setDown(false)
      await mcp.close()
    }
  })

  it('a deployment that fails verification makes every tool answer with that reason', async () => {
    const wrong = await writeAddressesFile(devnet, { oracle: devnet.addresses.feeCollector })
    const mcp = await connectMcp({ BASE_SEPOLIA_RPC_URL: devnet.rpcUrl, VAULT_ADDRESSES: wrong })
    try {
      expect((await mcp.client.listTools()).tools).toHaveLength(mcpToolNames.length)
      const wallet = devnet.accounts.merchant.address
      for (const [name, args] of [
        ['vault_status', {}],
        ['vault_get_position', { wallet }],
        ['vault_plan_deposit', { wallet, amountUsdc: '10' }],
      ] as const) {
        const text = await callToolError(mcp.client, name, args, 'ADDRESS_MISMATCH')
        expect(text).toContain('failed verification')
        expect(text).toContain('router.ORACLE()')
        expect(text).toContain('VAULT_ADDRESSES')
      }
    } finally {
      await mcp.close()
    }
  })

  it('stdout carries only JSON-RPC, logs go to stderr, and the server exits when stdin closes', async () => {
    const requests = [
      initializeRequest,
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'vault_status' } },
      {
        jsonrpc: '2.0',
        id: 4,
        method: 'tools/call',
        params: { name: 'vault_plan_deposit', arguments: { wallet: 'nope', amountUsdc: '1' } },
      },
      { jsonrpc: '2.0', id: 5, method: 'no/such/method' },
    ]
    const { code, stdout, stderr } = await runBin(
      [mcpBin],
      {
        BASE_SEPOLIA_RPC_URL: devnet.rpcUrl,
        VAULT_ADDRESSES: addressesFile,
        MCP_LOG_LEVEL: 'debug',
      },
      requests.map((request) => JSON.stringify(request)),
      5,
    )
    expect(code).toBe(0)
    const lines = stdout.split('\n').filter((line) => line !== '')
    expect(lines).toHaveLength(5)
    for (const line of lines) {
      const message = JSON.parse(line) as { jsonrpc?: string; id?: number }
      expect(message.jsonrpc).toBe('2.0')
    }
    expect(lines.map((line) => (JSON.parse(line) as { id: number }).id).sort()).toEqual([
      1, 2, 3, 4, 5,
    ])
    expect(stderr).toMatch(
      /^\[x402-vault-mcp\] info: Connected to .+; verifying the vault deployment/m,
    )
    expect(stderr).toContain('[x402-vault-mcp] debug: vault_status answered')
  })

  it('`x402-vault mcp` starts the same server', async () => {
    const mcp = await connectMcp(
      { BASE_SEPOLIA_RPC_URL: devnet.rpcUrl, VAULT_ADDRESSES: addressesFile },
      { viaCli: true },
    )
    try {
      expect((await mcp.client.listTools()).tools.map((tool) => tool.name)).toContain(
        'vault_plan_withdraw',
      )
      expect((await callToolOk(mcp.client, 'vault_status')).chain).toBe('base-sepolia')
    } finally {
      await mcp.close()
    }
    const help = await runBin([cliBin, 'mcp', '--help'], {})
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('VAULT_MCP_MAX_PLAN_USDC')
  })
})

const initializeLine = initializeRequest

describe('what a careless client sends', () => {
  const env = () => ({ BASE_SEPOLIA_RPC_URL: devnet.rpcUrl, VAULT_ADDRESSES: addressesFile })

  it('malformed JSON-RPC gets -32700, -32600 or -32602 with a short message, and the session goes on', async () => {
    const server = spawnJsonLines([mcpBin], env())
    // Sent first, so the early handshake hands each to the whole server.
    const lines = [
      '{"jsonrpc": "2.0", "id": 1, "method": ',
      JSON.stringify({ jsonrpc: '1.0', id: 2, method: 'tools/list' }),
      JSON.stringify([{ jsonrpc: '2.0', id: 3, method: 'tools/list' }]),
      JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/call' }),
      JSON.stringify({ jsonrpc: '2.0', id: 5, method: 42 }),
      JSON.stringify(initializeLine),
      JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'tools/list' }),
    ]
    server.child.stdin.write(`${lines.join('\n')}\n`)
    const answers = []
    for (let index = 0; index < 7; index++) answers.push(await server.next())
    server.child.stdin.end()
    expect(await server.exited).toBe(0)
    const errors = answers.filter((answer) => answer.error !== undefined)
    expect(
      errors.map((answer) => [answer.id ?? null, (answer.error as { code: number }).code]),
    ).toEqual([
      [null, -32700],
      [2, -32600],
      [null, -32600],
      [4, -32602],
      [5, -32600],
    ])
    for (const { error } of errors) {
      const message = (error as { message: string }).message
      expect(message.length).toBeLessThan(200)
      expect(message).not.toMatch(/invalid_type|"path"|"code":|\n/)
    }
    expect(answers.find((answer) => answer.id === 6)?.result?.tools).toHaveLength(
      mcpToolNames.length,
    )
  })

  it('a client that closes its end of stdout ends the server quietly, early or in session', async () => {
    // Early: the server writes its first answer into a closed pipe.
    const early = spawnJsonLines([mcpBin], env())
    early.child.stdin.on('error', () => {})
    early.child.stdout.destroy()
    early.send(initializeLine)
    expect(await early.exited).toBe(0)
    expect(early.stderr()).toBe('')

    // In session: the handshake is answered, then the client stops reading and calls a tool.
    const session = spawnJsonLines([mcpBin], env())
    session.child.stdin.on('error', () => {})
    session.send(initializeLine)
    await session.next()
    session.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    session.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' })
    await session.next()
    session.child.stdout.destroy()
    session.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'no_such_tool' } })
    session.send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'vault_status' } })
    expect(await session.exited).toBe(0)
    expect(session.stderr()).not.toMatch(/EPIPE|\n\s+at /)
  })

  it('a repeated notifications/initialized logs "Connected" and verifies once', async () => {
    const server = spawnJsonLines([mcpBin], { ...env(), MCP_LOG_LEVEL: 'debug' })
    server.send(initializeLine)
    await server.next()
    for (let i = 0; i < 3; i++) server.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    server.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'vault_status' } })
    const answer = await server.next()
    expect(answer.id).toBe(2)
    server.child.stdin.end()
    expect(await server.exited).toBe(0)
    expect(server.stderr().match(/Connected to /g)).toHaveLength(1)
    expect(server.stderr().match(/Verified the vault deployment/g)).toHaveLength(1)
  })
})

describe('answers that lead an agent the right way', () => {
  it('a cap below the minimum deposit says no deposit can be planned; inputs follow one rule', async () => {
    const mcp = await connectMcp({
      BASE_SEPOLIA_RPC_URL: devnet.rpcUrl,
      VAULT_ADDRESSES: addressesFile,
      VAULT_MCP_MAX_PLAN_USDC: '5',
      MCP_LOG_LEVEL: 'error',
    })
    const wallet = devnet.accounts.merchant.address
    try {
      // The first call: the refusal reads the minimum itself. Neither refusal sends the agent to
      // the other ("plan at most 5", "plan at least 10"): each says no deposit can be planned.
      for (const [amountUsdc, code] of [
        ['10', 'PLAN_CAP_EXCEEDED'],
        ['3', 'BELOW_MIN_DEPOSIT'],
      ] as const) {
        const text = await callToolError(
          mcp.client,
          'vault_plan_deposit',
          { wallet, amountUsdc },
          code,
        )
        expect(text).toContain(
          "No deposit can be planned by this server: its per-plan cap (VAULT_MCP_MAX_PLAN_USDC = 5) is below the vault's minimum deposit of 10 USDC",
        )
        expect(text).toContain('set VAULT_MCP_MAX_PLAN_USDC to at least 10')
        expect(text).not.toMatch(/Plan at most|Plan a deposit of at least/)
      }
      // Said in the log too, once the deployment is verified, at the documented quiet level.
      expect(mcp.stderr()).toMatch(/error: No deposit can be planned by this server/)
      // A withdrawal under the cap of 5 can still be planned: its refusal says nothing of deposits.
      const withdraw = await callToolError(
        mcp.client,
        'vault_plan_withdraw',
        { wallet, amountUsdc: '6' },
        'PLAN_CAP_EXCEEDED',
      )
      expect(withdraw).toContain('Plan at most 5 USDC')
      expect(withdraw).not.toContain('No deposit')
      // One rule for an amount above the cap, however many digits it has.
      for (const digits of [20, 80, 200]) {
        await callToolError(
          mcp.client,
          'vault_plan_deposit',
          { wallet, amountUsdc: '9'.repeat(digits) },
          'PLAN_CAP_EXCEEDED',
        )
      }
      // A missing amount is named as missing, not as a number given for a string.
      const missing = await callToolError(
        mcp.client,
        'vault_plan_deposit',
        { wallet },
        'INVALID_AMOUNT',
      )
      expect(missing).toContain('amountUsdc is required')
      expect(missing).not.toContain('not a number')
      // Leading zeros: refused for amounts and shares alike.
      await callToolError(
        mcp.client,
        'vault_plan_deposit',
        { wallet, amountUsdc: '00.1' },
        'INVALID_AMOUNT',
      )
      const shares = await callToolError(
        mcp.client,
        'vault_plan_withdraw',
        { wallet, shares: '0100' },
        'INVALID_AMOUNT',
      )
      expect(shares).toContain('leading zeros')
      // An unknown argument's name is echoed at most 256 characters long.
      const huge = await callToolError(
        mcp.client,
        'vault_status',
        { ['k'.repeat(100_000)]: 1 },
        'INVALID_ARGUMENT',
      )
      expect(huge.length).toBeLessThan(600)
      expect(huge).toContain('vault_status takes no arguments')
    } finally {
      await mcp.close()
    }
  })
})
